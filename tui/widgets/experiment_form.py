"""`ExperimentForm`: the form `X` opens on the runs selected in the list, asking what their
experiment changes and how it runs: who replays them (the app's agent, when one serves them
all, or each run's recorded agent), the model, an instructions file, `match`, what a novel
call does, the scorers, the concurrency and a name.

`ctrl+s` (or `enter` in a field) checks it: what is wrong is said in one line in the form and
nothing is written (`tui.text.experiment_form.read_form`, then `refusal`, the controller's:
the runs ended, the file read, the scorers imported); `esc` leaves. The screen's result is the
`ExperimentRequest`, or None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static

from agentor.experiments.experiment import DEFAULT_CONCURRENCY
from agentor.literal import literal_line
from tui.keys import bindings
from tui.keys.model import EXPERIMENT_FORM
from tui.text.experiment_form import (
    MATCH_WORDS,
    NOVEL_WORDS,
    RECORDED,
    ExperimentRequest,
    FormValues,
    read_form,
)
from tui.text.formatting import short_id

# The agent Select's value for each run's recorded agent (a Select's values are not None).
_RECORDED = ""


class ExperimentForm(ModalScreen[ExperimentRequest | None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(EXPERIMENT_FORM)
    DEFAULT_CSS = """
    ExperimentForm { align: center middle; }
    #experiment-form {
        width: 110; max-width: 95%; height: auto; max-height: 95%;
        border: round magenta; border-title-style: bold;
        border-subtitle-color: $text-muted; background: $surface; padding: 0 1;
    }
    #experiment-form > Horizontal { height: auto; margin: 1 0 0 0; }
    #experiment-form > Horizontal > Label { width: 14; color: $text-muted; }
    #experiment-form Input, #experiment-form Select { width: 1fr; }
    #experiment-form Static { height: auto; }
    #experiment-status { padding: 1 0 0 14; }
    """

    def __init__(
        self,
        runs: Sequence[str],
        agent: str | None,
        refusal: Callable[[ExperimentRequest], str | None],
    ) -> None:
        super().__init__()
        self.runs = tuple(runs)
        self.agent = agent  # the app's agent serving every run, by name (None: none does)
        self.refusal = refusal

    def compose(self) -> ComposeResult:
        n = len(self.runs)
        with Vertical(id="experiment-form"):
            yield Static(
                Text(
                    f"Replay {n} run{'s' if n != 1 else ''} against one change: each a candidate "
                    "run, its tool calls answered from its baseline's record.",
                    "dim",
                ),
                markup=False,
            )
            agents = [(RECORDED, _RECORDED)]
            if self.agent is not None:
                name = literal_line(self.agent, 40)
                agents.insert(0, (f"{name} (--agent: its instructions, tools, model)", self.agent))
            yield from _field(
                "agent",
                Select(
                    agents,
                    allow_blank=False,
                    value=agents[0][1],
                    compact=True,
                    id="experiment-agent",
                ),
            )
            yield from _field("model", Input(compact=True, id="experiment-model"))
            yield from _field(
                "instructions",
                Input(
                    placeholder="a file: the candidates' instructions (optional)",
                    compact=True,
                    id="experiment-instructions",
                ),
            )
            yield from self._how()
            yield Static(Text(""), markup=False, id="experiment-status")

    def _how(self) -> ComposeResult:
        """The fields saying how the candidates run and are scored."""
        yield from _field(
            "match",
            Select(
                _choices(MATCH_WORDS),
                allow_blank=False,
                value="strict",
                compact=True,
                id="experiment-match",
            ),
        )
        yield from _field(
            "novel calls",
            Select(
                _choices(NOVEL_WORDS),
                allow_blank=False,
                value="error",
                compact=True,
                id="experiment-novel",
            ),
        )
        yield from _field(
            "scorers",
            Input(
                placeholder="comma-separated: same_output, same_tools, "
                "output_contains:TEXT, judge, module:function",
                compact=True,
                id="experiment-scorers",
            ),
        )
        yield from _field(
            "concurrency",
            Input(
                str(DEFAULT_CONCURRENCY),
                type="integer",
                compact=True,
                id="experiment-concurrency",
            ),
        )
        yield from _field(
            "name",
            Input(
                placeholder="optional (the default: the change)",
                compact=True,
                id="experiment-name",
            ),
        )

    def on_mount(self) -> None:
        box = self.query_one("#experiment-form")
        shown = ", ".join(literal_line(short_id(r), 20) for r in self.runs[:4])
        more = f" and {len(self.runs) - 4} more" if len(self.runs) > 4 else ""
        box.border_title = Content(f"Experiment on {shown}{more}")
        box.border_subtitle = Content("ctrl+s starts · esc cancels · tab: next field")
        self._agent_chosen()
        self.query_one("#experiment-model").focus()

    @on(Select.Changed, "#experiment-agent")
    def _agent_chosen(self) -> None:
        model = self.query_one("#experiment-model", Input)
        if self.values().agent is None:
            model.placeholder = "the model each run's recorded agent asks (required)"
        else:
            model.placeholder = "the model to ask (empty: the agent's own)"

    @on(Input.Submitted)
    def _entered(self) -> None:
        self.action_submit()

    def values(self) -> FormValues:
        """The form's fields as they are now."""

        def text(name: str) -> str:
            return self.query_one(f"#experiment-{name}", Input).value

        def chosen(name: str) -> str:
            value = self.query_one(f"#experiment-{name}", Select).value
            return value if isinstance(value, str) else ""

        return FormValues(
            runs=self.runs,
            agent=chosen("agent") or None,
            model=text("model"),
            instructions_file=text("instructions"),
            match=chosen("match"),
            novel=chosen("novel"),
            scorers=text("scorers"),
            concurrency=text("concurrency"),
            name=text("name"),
        )

    def action_submit(self) -> None:
        request = read_form(self.values())
        why = request if isinstance(request, str) else self.refusal(request)
        if why is not None:
            self.query_one("#experiment-status", Static).update(Text(why, "bold red"))
            return
        assert not isinstance(request, str)
        self.dismiss(request)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _field(label: str, widget: Input | Select[str]) -> ComposeResult:
    """A labelled field, on one line (the widget compact: no border)."""
    with Horizontal():
        yield Label(label)
        yield widget


def _choices(words: dict[str, str]) -> list[tuple[str, str]]:
    return [(said, value) for value, said in words.items()]
