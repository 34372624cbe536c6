"""`ForkScreen`: the form `F` opens on a timeline line, asking what the fork changes there.

- a `tool_result`: an editor holding the recorded result, to change;
- a `generation`: the model to ask (the run's, to edit; a list of the models seen in the source
  fills it in) and a message to add (optional);
- the `run_start`: an editor holding the prompt, to replace.

`ctrl+s` forks, `esc` leaves. Without an agent to run the fork (`explain` says why, for the
request as filled in), the form is replaced by that explanation and the `agentor fork` command
doing the same from a shell: nothing is written. The screen's result is the `ForkRequest`, or
None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Select, Static, TextArea

from agentor.engine.events import GENERATION, RUN_START, TOOL_RESULT, Event
from agentor.literal import literal_line
from agentor.sources.source import RunEvents, RunSource
from tui.keys import bindings
from tui.keys.model import FORK_SCREEN
from tui.text.fork_text import FORK_KINDS, ForkRequest, result_text, result_value
from tui.text.formatting import short_id


@dataclass(frozen=True)
class ForkForm:
    """What the form starts from: the run, its line (`at`, 1-based) and the line's type;
    `recorded`, the result (a tool_result) or the prompt (the run_start) recorded there;
    `model`, the run's model; `models`, those seen in the source; `name`, the tool's."""

    run_id: str
    at: int
    kind: str
    recorded: Any = None
    model: str = ""
    models: Sequence[str] = ()
    name: str | None = None


def form_at(source: RunSource, log: RunEvents, run_id: str, index: int, item: Event) -> ForkForm:
    """The form for forking the run at its line `index` (`item`, an event that can be forked
    at): what was recorded there, the run's model and those seen in the source."""
    row = source.get(run_id)
    summary = row.summary if row is not None else None
    model = item.model or (summary.model if summary else None) or ""
    models = [r.summary.model for r in source.rows() if r.summary and r.summary.model]
    kind, recorded = item.type, None
    if kind == RUN_START and _later_segment(log, index):
        kind = GENERATION  # a resume's run_start forks as the generation after it
    elif kind == TOOL_RESULT:
        recorded = item.result if item.error is None else item.error
    elif kind == RUN_START:
        recorded = _prompt_of(item) or (summary.first_prompt if summary else "")
    return ForkForm(run_id, index + 1, kind, recorded, model, models, item.name)


def _later_segment(log: RunEvents, index: int) -> bool:
    """Whether a run_start comes before line `index` (the run's first one is near the top:
    only the lines before it are read)."""
    return any(getattr(log.item(i), "type", None) == RUN_START for i in range(index))


def _prompt_of(e: Event) -> str | None:
    """The prompt a run_start records: its last user message's text."""
    for m in reversed(e.messages or []):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return str(m["content"])
    return None


class ForkScreen(ModalScreen[ForkRequest | None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(FORK_SCREEN)
    DEFAULT_CSS = """
    ForkScreen { align: center middle; }
    #fork-form {
        width: 100; max-width: 95%; height: auto; max-height: 90%;
        border: round magenta; border-title-style: bold;
        border-subtitle-color: $text-muted; background: $surface; padding: 0 1;
    }
    #fork-form TextArea { height: auto; min-height: 5; max-height: 18; }
    #fork-form Static { height: auto; }
    #fork-form Select { width: 1fr; }
    """

    def __init__(self, form: ForkForm, explain: Callable[[ForkRequest], str | None]) -> None:
        super().__init__()
        self.form, self.explain = form, explain
        self.explained = False  # the form gave way to the explanation (no agent)

    def compose(self) -> ComposeResult:
        form = self.form
        with Vertical(id="fork-form"):
            yield Static(
                Text(f"Fork here with {FORK_KINDS[form.kind]}."), markup=False, id="fork-what"
            )
            if form.kind == GENERATION:
                models = sorted({m for m in (*form.models, form.model) if m})
                yield Input(form.model, placeholder="model", id="fork-model")
                yield Select(
                    [(literal_line(m, 60), m) for m in models],
                    prompt="or one of the models seen in this store",
                    id="fork-models",
                )
                yield Input(placeholder="a message to add (optional)", id="fork-input")
            else:
                yield TextArea(result_text(form.recorded), tab_behavior="focus", id="fork-text")
            yield Static(Text(""), markup=False, id="fork-status")

    def on_mount(self) -> None:
        form, box = self.form, self.query_one("#fork-form")
        what = f" · {literal_line(form.name, 60)}" if form.name else ""
        box.border_title = Content(
            f"Fork {literal_line(short_id(form.run_id))} at line {form.at} · {form.kind}{what}"
        )
        keys = "ctrl+s forks · esc cancels"
        if form.kind == GENERATION:
            keys += " · tab to the next field"
        box.border_subtitle = Content(keys)
        first = "#fork-model" if form.kind == GENERATION else "#fork-text"
        self.query_one(first).focus()
        if form.kind != GENERATION:  # typing replaces the recorded text; an arrow key keeps it
            self.query_one("#fork-text", TextArea).select_all()

    @on(Select.Changed, "#fork-models")
    def _model_chosen(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.query_one("#fork-model", Input).value = event.value

    @on(Input.Submitted)
    def _entered(self) -> None:
        self.action_submit()

    def request(self) -> ForkRequest:
        """The fork as the form says now."""
        form = self.form
        if form.kind == GENERATION:
            model = self.query_one("#fork-model", Input).value.strip()
            added = self.query_one("#fork-input", Input).value
            return ForkRequest(
                form.run_id, form.at, form.kind, model=model or None, input=added or None
            )
        text = self.query_one("#fork-text", TextArea).text
        if form.kind == TOOL_RESULT:
            return ForkRequest(form.run_id, form.at, form.kind, result_value(text, form.recorded))
        return ForkRequest(form.run_id, form.at, form.kind, input=text or None)

    def action_submit(self) -> None:
        if self.explained:
            return
        request = self.request()
        if request.kind != TOOL_RESULT and request.kind != GENERATION and not request.input:
            self._status("✗ the prompt is empty: write the prompt the fork starts with", "red")
            return
        why = self.explain(request)
        if why is None:
            self.dismiss(request)
            return
        self.explained = True
        box = self.query_one("#fork-form")
        for child in list(box.children):
            child.display = child.id == "fork-status"
        box.border_subtitle = Content("esc closes")
        self._status(why, "")

    def _status(self, text: str, style: str) -> None:
        self.query_one("#fork-status", Static).update(Text(text, style))

    def action_cancel(self) -> None:
        self.dismiss(None)
