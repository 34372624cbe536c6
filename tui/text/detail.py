"""Everything about one event, for the detail view: its fields, the request as a conversation
(roles coloured) with the tools offered and the model's settings, tool arguments and results as
pretty JSON, usage and errors. One function a type of event writes what is under its heading
(`run_start_detail`, `generation_detail`, ...); tui.text.event_views says which is whose.

Every `Text` here is assembled from plain strings passed through `literal`, never from markup,
so nothing in a log can style or control the terminal. Huge values are cut, with a note.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.highlighter import JSONHighlighter
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agentor.collect.origin import collected_source, origin_words
from agentor.durations import duration
from agentor.engine.events import RUN_START, Event
from agentor.engine.fork.recording import (
    DRIFT,
    EXECUTED,
    NOVEL_FIELD,
    REFUSED,
    SERVED,
    marked_answer,
)
from agentor.engine.history import RunSummary, call_parts, event_time
from agentor.engine.log.format import BadLine
from agentor.engine.mcp_record import record_notes
from agentor.fleet.claims import ATTEMPT
from agentor.literal import literal, literal_line
from agentor.ops.pricing import RunCost
from tui.text.costs import cost_words, generation_cost
from tui.text.formatting import clock_time, offset
from tui.text.styles import (
    ANSWER_STYLES,
    AWAITING_STYLE,
    DECISION_STYLES,
    ERROR_STYLE,
    ROLE_STYLES,
    STATUS_STYLES,
)
from tui.text.timeline_line import call_line, content_text, value_line

if TYPE_CHECKING:
    from agentor.sources.source import RunEvents

# How much of one value the detail view shows; the rest is cut with a note saying how much.
DETAIL_LIMIT = 8_000
# Labels take at least this many cells (a longer one widens its column for that event).
LABEL_WIDTH = 8
# The event's own fields, in the order they are listed under its heading.
FIELDS = (
    "agent",
    "model",
    "name",
    "call_id",
    "server",
    "reason",
    "status",
    "pid",
    "host",
    "v",
    "forked_from",
    "replayed_from",
    "config",
    "decision",
    "by",
    "note",
)

# What the detail says of how a tool result was answered (`marked_answer`).
ANSWER_WORDS = {
    SERVED: "served from the record: nothing ran",
    EXECUTED: "executed: the replay's recording has no answer for it",
    REFUSED: "refused: the replay's recording has no answer for it; nothing ran",
}

# What a worker's claim or release means, under its fields (agentor.fleet.claims).
CLAIM_MEANS = (
    "A worker of a fleet took the run; the attempt counts those since the run last ended a "
    "segment. A claim with neither a run_end nor a release after it is an attempt whose "
    "worker died."
)
RELEASE_MEANS = "The worker let the run go without ending it; the note says why."

_json = JSONHighlighter()
# A generation's field naming the tools withdrawn before it (agentor.engine.toolfailures).
WITHDRAWN = "withdrawn"


def cut(text: str, limit: int = DETAIL_LIMIT) -> tuple[str, str | None]:
    """`text` cut to `limit` characters, and a note of how much was left out (or None)."""
    if len(text) <= limit:
        return text, None
    rest = text[limit:]
    lines = rest.count("\n")
    more = f"{len(rest):,} more characters"
    if lines:
        more += f", {lines:,} more lines"
    return text[:limit], f"… cut: {more} not shown"


def _without_final_newline(text: Text) -> Text:
    if text.plain.endswith("\n"):
        text.right_crop(1)
    return text


Field = tuple[str, str, str]  # label, value (literal already), style


class DetailText:
    """The detail view's content: flowing lines, indented blocks whose wrapped lines keep
    their indent (a `Text` alone would wrap them back to the margin), and labelled fields."""

    def __init__(self) -> None:
        self.blocks: list[tuple[int, Text] | list[Field]] = []
        self._flow = Text()

    def fields(self, rows: list[Field]) -> None:
        """Labelled values in two columns: however long a label (`replayed_from`), a space
        parts it from its value, and a long value (an id in a narrow pane) wraps within its
        own column."""
        self._close()
        if rows:
            self.blocks.append(rows)

    def append(self, text: str, style: str = "") -> None:
        self._flow.append(text, style)

    def block(self, text: Text, indent: int = 2) -> None:
        self._close()
        self.blocks.append((indent, _without_final_newline(text)))

    def long_block(
        self, text: str, indent: int = 2, style: str = "", is_json: bool = False
    ) -> None:
        """Untrusted `text` as a block, cut to `DETAIL_LIMIT` with a note of what was left out;
        `is_json` highlights it as JSON."""
        body, note = cut(literal(text))
        shown = Text(body, style)
        self.block(_json(shown) if is_json else shown, indent)
        if note:
            self.block(Text(note, "bold yellow"), indent)

    def _close(self) -> None:
        if self._flow:
            self.blocks.append((0, _without_final_newline(self._flow)))
            self._flow = Text()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self._close()
        for block in self.blocks:
            if isinstance(block, list):
                yield _field_grid(block)
                continue
            indent, text = block
            yield Padding(text, (0, 0, 0, indent)) if indent else text

    @property
    def plain(self) -> str:
        self._close()
        lines = []
        for block in self.blocks:
            if isinstance(block, list):
                width = _label_width(block)
                lines += [f"{label:<{width}} {value}" for label, value, _ in block]
                continue
            indent, text = block
            lines += [" " * indent + line for line in text.plain.split("\n")]
        return "\n".join(lines)


def _label_width(rows: list[Field]) -> int:
    return max(LABEL_WIDTH, *(cell_len(label) for label, _, _ in rows))


def _field_grid(rows: list[Field]) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=_label_width(rows), no_wrap=True, style="dim")
    grid.add_column(ratio=1, overflow="fold")
    for label, value, style in rows:
        grid.add_row(label, Text(value, style))
    return grid


def append_value(out: DetailText, value: Any, indent: int = 2) -> None:
    """A value, pretty: strings as text (JSON inside a string is pretty-printed too)."""
    if isinstance(value, str):
        value = _maybe_json(value)
    if isinstance(value, str):
        out.long_block(value, indent)
    else:
        pretty = json.dumps(value, indent=2, ensure_ascii=False, default=str)
        out.long_block(pretty, indent, is_json=True)


def _maybe_json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(stripped) <= 1_000_000:
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text


def heading(out: DetailText, title: str) -> None:
    out.append("\n")
    out.append(title, "bold underline")
    out.append("\n")


@dataclass(frozen=True)
class Around:
    """What the detail of one event knows besides the event: the run's id and its first time
    (`start`); for a generation, its request rebuilt (`request`); the run_start of the event's
    segment (`setup`); for a run_start, the whole run's summary (`run`, when it was read
    whole) and its totals (`totals`)."""

    run_id: str
    start: float | None
    request: list[dict[str, Any]] | None = None
    setup: Event | None = None
    run: RunSummary | None = None
    totals: RunTotals | None = None


# -- each type's detail, under its heading: one function a type (tui.text.event_views) ----------


def common_detail(
    out: DetailText,
    e: Event,
    at: Around,
    own: list[Field] | None = None,
    label: str = "Input",
    *,
    args: bool = False,
    result: bool | None = None,
) -> None:
    """What every event's detail shows: its fields (`own`: rows of its type's own among them),
    its error, the messages it carries (`label`: what they are), its values (`args`, `result`:
    as `_values` shows them)."""
    _fields(out, e, at, own)
    _error(out, e)
    _conversation(out, e.messages, label)
    _values(out, e, args=args, result=result)
    _other_fields(out, e)


def run_start_detail(out: DetailText, e: Event, at: Around) -> None:
    """A segment's start: where a collected run came from, the whole run's times and totals,
    its input, the tools and settings of its generations, its MCP servers."""
    source = collected_source(e)
    own = [("from", origin_words(source), "cyan")] if source is not None else []
    _fields(out, e, at, own, at.run)
    if at.totals is not None:
        out.fields(_totals_fields(at.totals))
    _error(out, e)
    _conversation(out, e.messages, "Input")
    if e.tools is not None or e.settings is not None:
        _request_config(out, e.config, e)
    if e.mcp is not None:
        _mcp_servers(out, e.mcp)
    _values(out, e)
    _other_fields(out, e)


def generation_detail(out: DetailText, e: Event, at: Around) -> None:
    """A generation: what it cost, the request it was sent, what it answered and was offered."""
    _fields(out, e, at)
    cost = generation_cost(e, at.setup.model if at.setup is not None else None)
    out.fields([("cost", cost, "")])
    _error(out, e)
    if at.request is not None:
        _conversation(out, at.request, "Request")
    else:
        heading(out, "Request")
        out.block(Text("(not recorded in full: the line it extends is unreadable)", "dim"))
    _response(out, e, at.setup)
    _values(out, e, text=False)
    _other_fields(out, e, hide=(WITHDRAWN,))


def call_detail(out: DetailText, e: Event, at: Around) -> None:
    """A tool call (asked for, or about to run): its arguments."""
    common_detail(out, e, at, args=True)


def tool_result_detail(out: DetailText, e: Event, at: Around) -> None:
    """A tool's result (shown even when it is None) or its error, the call's arguments, and how
    it was answered when not the plain way (a replay's: `marked_answer`)."""
    answer = marked_answer(e)
    own = [("answered", ANSWER_WORDS[answer], ANSWER_STYLES[answer])] if answer is not None else []
    _fields(out, e, at, own)
    _error(out, e)
    _conversation(out, e.messages, "Input")
    _values(out, e, args=True, result=e.error is None)
    if DRIFT in e.extra:
        heading(out, "Recorded arguments (the call whose result was served)")
        append_value(out, e.extra[DRIFT])
    _other_fields(out, e, hide=(DRIFT, NOVEL_FIELD))


def answer_detail(out: DetailText, e: Event, at: Around) -> None:
    """A message or a run_end: a structured output its segment asked for, as the object."""
    _fields(out, e, at)
    _error(out, e)
    _conversation(out, e.messages, "Input")
    if at.setup is not None and at.setup.output and e.text:
        _structured(out, e.text, at.setup.output)
    _values(out, e)
    _other_fields(out, e)


def approval_request_detail(out: DetailText, e: Event, at: Around) -> None:
    """A call waiting for a person; for a call a crash interrupted, when it was started."""
    own: list[Field] = []
    if e.started_at is not None and e.ended_at is None:
        own.append(("started", clock_time(e.started_at), ""))
    common_detail(out, e, at, own)


def claim_detail(out: DetailText, e: Event, at: Around) -> None:
    """A worker of a fleet took the run: its attempt, and what a claim means."""
    attempt = e.extra.get(ATTEMPT)
    own = [("attempt", literal_line(str(attempt), 40), "")] if attempt is not None else []
    _fields(out, e, at, own)
    out.block(Text("\n" + CLAIM_MEANS, "dim"), indent=0)
    _error(out, e)
    _conversation(out, e.messages, "Input")
    _values(out, e)
    _other_fields(out, e, hide=(ATTEMPT,))


def release_detail(out: DetailText, e: Event, at: Around) -> None:
    """A worker of a fleet let the run go, and what a release means."""
    _fields(out, e, at)
    out.block(Text("\n" + RELEASE_MEANS, "dim"), indent=0)
    _error(out, e)
    _conversation(out, e.messages, "Input")
    _values(out, e)
    _other_fields(out, e)


def follow_up_detail(out: DetailText, e: Event, at: Around) -> None:
    """An invalid answer or a tool withdrawn: what the model is then sent."""
    common_detail(out, e, at, label="Sent to the model")


# -- the parts of a detail ---------------------------------------------------------------------


def _fields(
    out: DetailText,
    e: Event,
    at: Around,
    own: list[Field] | None = None,
    run: RunSummary | None = None,
) -> None:
    out.fields(_event_fields(e, at.run_id, at.start, own or [], run))


def _error(out: DetailText, e: Event) -> None:
    if e.error is not None:
        heading(out, "Error")
        out.long_block(e.error, style=ERROR_STYLE)


def _conversation(out: DetailText, messages: list[dict[str, Any]] | None, label: str) -> None:
    """Messages an event carries (or a generation was sent), as a conversation under `label`."""
    if messages is not None:
        heading(out, f"{label} ({len(messages)} message{'s' if len(messages) != 1 else ''})")
        conversation(out, messages)


def _mcp_servers(out: DetailText, record: list[dict[str, Any]]) -> None:
    """A run_start's MCP servers: where each is (secrets were masked when recorded), what it
    warns of, the tools it offered."""
    heading(out, f"MCP servers ({len(record)})")
    for note in record_notes(record):
        out.block(Text(f"⚠ {literal_line(note, 400)}", AWAITING_STYLE))
    for entry in record:
        line = Text(literal_line(str(entry.get("server")), 80), "bold")
        where = entry.get("url") or " ".join(str(a) for a in entry.get("command") or ())
        line.append(f"  {literal_line(str(entry.get('transport')), 20)}", "dim")
        line.append(f"  {literal_line(str(where), 300)}")
        out.block(line)
        for kind in ("headers", "env"):
            names = entry.get(kind)
            if names:
                said = ", ".join(str(n) for n in names)
                out.block(Text(f"{kind}: {literal_line(said, 200)} (values never recorded)"), 4)
        tools = [t for t in entry.get("tools") or () if isinstance(t, dict)]
        said = ", ".join(str(t.get("name")) for t in tools) or "none"
        out.block(Text(f"tools: {literal_line(said, 400)}", "dim"), 4)


def unreadable(out: DetailText, item: BadLine, run_id: str) -> None:
    """A line that is not an event: where it is, why, and the line as it is."""
    out.append(f"unreadable line {item.lineno}", "bold red")
    out.append("\n")
    out.fields(
        [
            ("run", literal_line(run_id), ""),
            ("byte", f"{item.offset:,}", ""),
            ("reason", literal_line(item.reason), ""),
        ]
    )
    heading(out, "Raw line")
    raw = item.raw.decode("utf-8", errors="replace")
    append_value(out, raw.rstrip("\n"))


def _response(out: DetailText, e: Event, setup: Event | None) -> None:
    """What a generation answered (its text, its tool calls) and what it was offered."""
    heading(out, "Response")
    if e.text is not None:
        append_value(out, e.text)
    for cid, name, raw in (call_parts(c) for c in e.calls or []):
        call = Text.assemble(("→ ", "dim"), (literal_line(name, 200), "bold"))
        call.append(f"  {literal_line(cid, 80)}", "dim")
        out.block(call)
        append_value(out, raw, 4)
    if e.config is not None:
        _request_config(out, e.config, setup, e)


def _structured(out: DetailText, text: str, output: dict[str, Any]) -> None:
    """A structured answer as the object it is: its fields, then the whole as pretty JSON."""
    value = _maybe_json(text)
    if not isinstance(value, dict):
        return
    heading(out, f"Output · {literal_line(str(output.get('type', '?')), 60)}")
    out.fields([(literal_line(str(k), 40), value_line(v, 400), "") for k, v in value.items()])


def _values(
    out: DetailText, e: Event, args: bool = False, result: bool | None = None, text: bool = True
) -> None:
    """An event's values: its arguments (`args`: when its type shows them), its result
    (`result`: whether it shows; None: when it has one), its text (`text`: when its type shows
    it here)."""
    if args and e.args is not None:
        heading(out, "Arguments")
        append_value(out, e.args)
    if e.result is not None if result is None else result:
        heading(out, "Result")
        append_value(out, e.result)
    if text and e.text is not None:
        heading(out, "Text")
        append_value(out, e.text)


def _other_fields(out: DetailText, e: Event, hide: tuple[str, ...] = ()) -> None:
    """The fields this version does not know, or its type shows in no way of its own (`hide`:
    those it shows above)."""
    other = {k: v for k, v in e.extra.items() if k not in hide}
    if other:
        heading(out, "Other fields")
        append_value(out, other)


def segment_start(log: RunEvents, index: int) -> Event | None:
    """The run_start of the segment line `index` belongs to (None before the first one)."""
    k = bisect_right(log.segment_starts, index) - 1
    if k < 0:
        return None
    item = log.item(log.segment_starts[k])
    return item if isinstance(item, Event) and item.type == RUN_START else None


def withdrawn_tools(generation: Event | None) -> list[Any]:
    """The tools a generation was no longer offered (agentor.engine.toolfailures)."""
    names = generation.extra.get(WITHDRAWN) if generation is not None else None
    return names if isinstance(names, list) else []


def _tool_name(schema: Any) -> Any:
    fn = schema.get("function") if isinstance(schema, dict) else None
    return fn.get("name") if isinstance(fn, dict) else None


def _request_config(
    out: DetailText, config: str | None, setup: Event | None, generation: Event | None = None
) -> None:
    """The tools offered and the model's settings, as the segment's run_start records them."""
    if setup is None or setup.config != config:
        heading(out, "Tools offered")
        out.block(Text("(not found: this segment's run_start does not record them)", "dim"))
        return
    tools = setup.tools or []
    withdrawn = withdrawn_tools(generation)
    tools = [t for t in tools if _tool_name(t) not in withdrawn]
    heading(out, f"Tools offered ({len(tools)})")
    if withdrawn:
        names = ", ".join(literal_line(str(n), 60) for n in withdrawn)
        out.block(Text(f"withdrawn after repeated failures: {names}", "bright_yellow"))
    if not tools:
        out.block(Text("none", "dim"))
    for schema in tools:
        fn = schema.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            append_value(out, schema)  # not a function schema: shown as it is
            continue
        out.block(Text(literal_line(fn["name"], 200), "bold"))
        if isinstance(fn.get("description"), str):
            out.long_block(fn["description"], 4)
        if "parameters" in fn:
            append_value(out, fn["parameters"], 4)
    heading(out, "Settings")
    if setup.settings is None:
        out.block(Text("(none recorded: the model exposes no settings)", "dim"))
    elif not setup.settings:
        out.block(Text("none: the model's defaults", "dim"))
    labels = {name: literal_line(name, 40) for name in setup.settings or {}}
    width = max(map(len, labels.values()), default=0)
    for name, value in (setup.settings or {}).items():
        shown = json.dumps(value, ensure_ascii=False, default=str)
        out.block(Text.assemble((f"{labels[name]:<{width}}  ", "dim"), literal_line(shown, 400)))


def _event_fields(
    e: Event, run_id: str, start: float | None, own: list[Field], run: RunSummary | None
) -> list[Field]:
    rows: list[Field] = [("run", literal_line(e.run_id or run_id), "")]
    t = event_time(e)
    if t is not None:
        when = clock_time(t)
        if start is not None:
            when = f"{offset(t - start)}  ({when})"
        rows.append(("at", when, ""))
    if e.started_at is not None and e.ended_at is not None:
        rows.append(("took", duration(e.ended_at - e.started_at), ""))
    for name in FIELDS:
        value = getattr(e, name)
        if value is not None:
            text = str(value)
            styles = {"status": STATUS_STYLES, "decision": DECISION_STYLES}.get(name, {})
            rows.append((name, literal_line(text, 200), styles.get(text, "")))
    rows += own  # its type's own (a collected run's source, an interrupted call's start...)
    if e.deadline is not None:
        rows.append(("deadline", clock_time(e.deadline), ""))
    if e.output is not None:
        retries = e.output.get("retries")
        said = f"{e.output.get('type', '?')} · {retries} retr{'y' if retries == 1 else 'ies'}"
        rows.append(("output", literal_line(said, 100), ""))
    if e.usage is not None:
        u = e.usage
        usage = f"in {u.input_tokens:,} · out {u.output_tokens:,} · total {u.total_tokens:,}"
        rows.append(("usage", usage, ""))
    if run is not None:
        # The list's `took` is the active time; the wall span shows the idle gaps too.
        segments = f"{run.segments} segment{'s' if run.segments != 1 else ''}"
        active = f"{duration(run.active_time())} over {segments} (the whole run)"
        rows.append(("active", active, ""))
        rows.append(
            ("wall", f"{duration(run.wall_time)} from the first start to the last event", "")
        )
    return rows


@dataclass(frozen=True)
class RunTotals:
    """What the detail of a run's `run_start` adds about the whole run: what it cost (None:
    not read whole and priced yet) and whether it is pinned."""

    cost: RunCost | None
    pinned: bool


def _totals_fields(totals: RunTotals) -> list[Field]:
    pinned = ("pinned", "yes: prune keeps it (p unpins)", "bold yellow")
    return [("run cost", cost_words(totals.cost), ""), *([pinned] if totals.pinned else [])]


def conversation(out: DetailText, messages: Sequence[dict[str, Any]]) -> None:
    """Messages as a chat transcript, each role in its colour."""
    for m in messages:
        role = m.get("role")
        role_text = role if isinstance(role, str) else "?"
        # At least one space after the role, however long (a log may name any role).
        out.append(f"{literal_line(role_text, 20) + ' ':<9}", ROLE_STYLES.get(role_text, "bold"))
        if isinstance(m.get("tool_call_id"), str):
            out.append(f"(for {literal_line(m['tool_call_id'], 80)})", "dim")
        out.append("\n")
        content = m.get("content")
        if content is not None:
            out.long_block(content_text(content))
        calls = m.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():  # any JSON value, in a log
            if isinstance(call, dict):
                _, name, raw = call_parts(call)
                out.block(Text.assemble(("→ ", "dim"), call_line(name, raw, 400)))
