"""What the screen says about forks: what a line of the timeline forks as, a fork's lineage in
the detail pane, the fork tree's lines, the `agentor fork` command that does the same from a
shell, and the notes a fork's start and end make. Plain text and Rich `Text` built from literal
strings: no widgets here."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from agentor.collect.origin import collected_source
from agentor.engine.events import GENERATION, RUN_START, TOOL_RESULT, Event
from agentor.engine.fork_mark import ForkMark
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.literal import literal_line
from agentor.sources.lineage import ForkNode, edit_of, fork_point
from agentor.sources.runrow import RunRow
from tui.text.formatting import short_id
from tui.text.notices import FORK, Note
from tui.text.run_line import status_word
from tui.text.styles import FORK_MARK, FORK_STYLE, STATUS_STYLES

# What each forkable line asks for, in the fork form's title.
FORK_KINDS = {
    TOOL_RESULT: "a new result for this tool call",
    GENERATION: "the model to ask again, and a message to add",
    RUN_START: "the prompt to start again with",
}
WHAT_FORKS = (
    "F forks at a tool_result (a new result), a generation (another model, a message added) "
    "or the run_start (a new prompt)"
)


@dataclass(frozen=True)
class ForkRequest:
    """A fork as the form asks for it: the run and its line (`at`, 1-based as the timeline
    numbers lines), the line's type (`kind`), and the edit: `result` (a tool_result),
    `model` and `input` (a generation: `input` added as a user message; the run_start: the new
    prompt). Empty values are None."""

    run_id: str
    at: int
    kind: str
    result: Any = None
    model: str | None = None
    input: str | None = None


def replay_refusal(request: ForkRequest, start: Event, store_args: list[str]) -> str | None:
    """What the fork form says on a run collected from another framework's spans: None when
    the form asks for a replay (a generation's line, another model, no message added), else
    how to ask for one."""
    if request.kind == GENERATION and request.model and not request.input:
        return None
    source = collected_source(start) or {}
    made_by = literal_line(str(source.get("framework") or "another framework"), 80)
    command = shlex.join(
        ["agentor", "replay", request.run_id, "--model", request.model or "MODEL", *store_args]
    )
    return (
        f"This run was collected from {made_by}'s spans: there is no agent here to fork it. "
        "It can be replayed with another model: on a generation, give the model and no "
        "message (the recorded conversation is asked again from its prompt; the recorded "
        "results answer the same tool calls; none of its tools runs here).\n\n"
        f"From a shell: {literal_line(command, 300)}"
    )


def result_value(text: str, recorded: Any) -> Any:
    """The edited result as the fork records it: the text, unless the recorded result was
    JSON other than a string and the text still reads as JSON (an edited object stays one)."""
    if isinstance(recorded, str) or recorded is None:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def result_text(recorded: Any) -> str:
    """A recorded result as the editor shows it: a string as it is, other JSON indented."""
    if isinstance(recorded, str):
        return recorded
    return json.dumps(recorded, indent=2, ensure_ascii=False)


def not_forkable(kind: str | None, line: int) -> Note:
    """`F` on a line that cannot be forked at."""
    what = f"a {literal_line(kind, 40)} line" if kind else "an unreadable line"
    text = f"Line {line} is {what}: it cannot be forked. {WHAT_FORKS}."
    return Note(text, severity="warning", kind=FORK)


def command_line(request: ForkRequest, store_args: list[str], agent: str | None = None) -> str:
    """The `agentor fork` command doing what `request` asks (`agent`: the --agent spec, when
    known; a placeholder else)."""
    words = ["agentor", "fork", request.run_id, "--at", str(request.at)]
    if request.result is not None:
        result = request.result
        words += ["--result", result if isinstance(result, str) else json.dumps(result)]
    if request.input is not None:
        words += ["--input", request.input]
    if request.model is not None:
        words += ["--model", request.model]
    words += [*store_args, "--agent", agent or "path/to/file.py:agent"]
    return literal_line(shlex.join(words), 2000)


def no_agent_text(request: ForkRequest, hint: str, store_args: list[str]) -> str:
    """What the fork screen says when no agent given to agentor-tui may run the fork."""
    return (
        f"This fork needs an agent to run it: {literal_line(hint, 400)}.\n\n"
        "With one, F here runs the fork in agentor-tui; or run the same fork from a shell:\n\n"
        f"{command_line(request, store_args)}"
    )


def edit_words(row: RunRow) -> str:
    """Where a fork was made and what it changed: "at line 6: result edited"."""
    return fork_point(row.fork_at, row.fork_edit)


def fork_words(fork: Event) -> str:
    """`⑂ forked from 089c01e7 at line 4: result edited`: what a `fork` event says, as the
    start of the fork's own first segment says it in the timeline."""
    mark = ForkMark.of(0, fork)
    parent = literal_line(short_id(fork.forked_from or "?"), 40)
    return f"{FORK_MARK} forked from {parent} {fork_point(mark.at, edit_of(mark))}"


def lineage_line(row: RunRow | None) -> Text | None:
    """The detail pane's first line for a fork: its parent and its fork point."""
    if row is None or row.forked_from is None:
        return None
    out = Text(f"{FORK_MARK} forked from ", FORK_STYLE)
    out.append(literal_line(row.forked_from, 80), f"bold {FORK_STYLE}")
    out.append(f" {edit_words(row)}\n", FORK_STYLE)
    out.append("u goes there · L shows the fork tree\n", "dim")
    return out


def tree_label(node: ForkNode) -> Text:
    """A node of the fork tree: status, id, fork point and edit, prompt."""
    row = node.row
    out = Text(no_wrap=True)
    if row is None:
        out.append(f"{short_id(node.run_id)}  not in this store", "dim italic")
        return out
    out.append(f"{status_word(row.status):<11}", STATUS_STYLES.get(row.status, ""))
    out.append(literal_line(short_id(row.run_id)), "bold")
    if row.forked_from is not None:
        out.append(f"  {FORK_MARK} {edit_words(row)}", FORK_STYLE)
    prompt = row.summary.first_prompt if row.summary is not None else None
    if prompt:
        out.append("  " + literal_line(prompt, 60), "dim")
    return out


def forks_warning(forks: list[str]) -> str:
    """What the delete dialog says of a run that has forks (`forks`, their ids, oldest first):
    "has 1 fork: 3f2a1b9c (it stays, without its parent; prune keeps a run that has forks)"."""
    n = len(forks)
    named = ", ".join(literal_line(short_id(f), 40) for f in forks[:3])
    if n > 3:
        named += f" and {n - 3:,} more"
    stays = "they stay, without their parent" if n > 1 else "it stays, without its parent"
    forks_word = "forks" if n > 1 else "fork"
    return f"has {n:,} {forks_word}: {named} ({stays}; prune keeps a run that has forks)"


def fork_started(fork_id: str, run_id: str, at: int) -> Note:
    text = f"Forking {short_id(run_id)} at line {at}: fork {short_id(fork_id)} runs here."
    return Note(text, title="Fork", timeout=4, kind=FORK)


def fork_ended(fork_id: str, status: str, output: str | None, error: str | None) -> Note:
    short = short_id(fork_id)
    if status == COMPLETED:
        text = f"Fork {short} completed: {literal_line(output or '', 300)}"
        return Note(text, title="Fork", kind=FORK)
    if status == AWAITING_APPROVAL:
        return Note(f"Fork {short} waits for approval.", title="Fork", timeout=8, kind=FORK)
    why = literal_line(error or "no error recorded", 400)
    return Note(f"Fork {short} ended {status}: {why}", severity="warning", title="Fork", kind=FORK)


def fork_refused(run_id: str, exc: BaseException) -> Note:
    why = literal_line(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 400)
    return Note(f"Cannot fork {short_id(run_id)}: {why}", severity="error", timeout=10, kind=FORK)


# `F` with no timeline line to fork at.
PICK_A_LINE = Note("Open a run's timeline and pick a line to fork at.")


def one_fork_at_a_time(fork_id: str) -> Note:
    text = f"Fork {short_id(fork_id)} is still running: one fork at a time."
    return Note(text, "Fork", "warning", kind=FORK)


def no_parent(row: RunRow | None) -> Note:
    """`u` on a run that is no fork (or none selected)."""
    if row is None:
        return Note("No run selected.", severity="warning")
    return Note(f"Run {short_id(row.run_id)} is no fork: it has no parent.", severity="warning")


def parent_missing(parent: str, where: str) -> Note:
    text = f"The parent {literal_line(parent, 80)} is not in {literal_line(where, 200)}."
    return Note(text, severity="warning")
