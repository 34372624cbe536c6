"""Helpers for the app's Pilot and snapshot tests: fixture runs, agents, what is on screen."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from agentor import Agentor, function_tool
from agentor.agents import AgentSet
from agentor.engine.events import Usage
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.conftest import FIXTURES, ROOT
from tui.app import RunsApp

SIZE = (160, 45)
# The upstream fixtures were recorded at about 1796037200; "now" is 46 minutes later.
NOW = 1796040000.0
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
IDS = {name: spec["run_id"] for name, spec in MANIFEST.items()}


def fixed_clock() -> float:
    return NOW


SAMPLES = ROOT / "runs"
SAMPLE_MANIFEST = json.loads((SAMPLES / "manifest.json").read_text())


def copy_samples(directory: Path) -> Path:
    """The repository's sample runs (written by the real engine) in a directory of our own."""
    directory.mkdir(parents=True, exist_ok=True)
    for path in SAMPLES.glob("*.jsonl"):
        shutil.copy(path, directory / path.name)
    return directory


def copy_fixtures(directory: Path) -> Path:
    """The upstream run logs (only the logs) in a fresh directory of our own."""
    directory.mkdir(parents=True, exist_ok=True)
    for path in FIXTURES.glob("*.jsonl"):
        shutil.copy(path, directory / path.name)
    return directory


def write_log(directory: Path, run_id: str, events: Sequence[dict[str, Any]]) -> Path:
    """A log written line by line as given (for crafted runs with fixed times)."""
    path = directory / f"{run_id}.jsonl"
    with path.open("a", encoding="utf-8") as f:
        for e in events:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    return path


def app_for(directory: Path, agents: Any = None, watch: bool = False) -> RunsApp:
    return RunsApp(directory, agents=agents, watch=watch, clock=fixed_clock)


class OneAgent(AgentSet):
    """An `AgentSet` of one agent (or none) with a short hint, as the app tests use it."""

    def __init__(self, agent: Agentor | None, any_agent: bool = False) -> None:
        super().__init__([agent] if agent is not None else [], any_agent)

    def missing_hint(self, agent_name: str | None, doing: str = "resume") -> str:
        if self.agents:
            return super().missing_hint(agent_name, doing)
        return f"No agent for {agent_name!r}: pass --agent path/to/file.py:name"


class GatedModel(ScriptedModel):
    """A scripted model that can hold a reply: it streams part of its text, then waits.

    `hold(i)` makes the i-th request (0-based) wait on `gate` after streaming `partial`.
    """

    def __init__(self, replies: Sequence[Any], partial: str = "") -> None:
        super().__init__(replies)
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()
        self.held: set[int] = set()
        self.partial = partial

    def hold(self, *indexes: int) -> GatedModel:
        self.held.update(indexes)
        return self

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelResponse:
        if len(self.requests) in self.held:
            if on_text is not None and self.partial:
                for word in self.partial.split(" "):
                    on_text(word + " ")
            self.waiting.set()
            await self.gate.wait()
        return await super().generate(messages, tools, on_text)


class FailingModel(ScriptedModel):
    """The model endpoint is down: every request fails like the openai model reports it."""

    def __init__(
        self, message: str = "APIConnectionError: Connection refused", name: str = "scripted"
    ) -> None:
        super().__init__([], name=name)
        self.message = message

    async def generate(self, messages: Any, tools: Any, on_text: Any = None) -> ModelResponse:
        from agentor.errors import ModelError

        self.requests.append(list(messages))
        raise ModelError(self.message)


def weather_agent(directory: Path, model: Any, executed: list[str] | None = None) -> Agentor:
    """The seed page's weather agent on `model`, saving to `directory`."""
    ran = executed if executed is not None else []

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city to look up.
        """
        ran.append(city)
        return f"The weather in {city} is sunny and 22C."

    return Agentor(
        name="Travel Agent",
        model=model,
        instructions="You are a helpful weather assistant.",
        tools=[get_weather],
        store=FileStore(directory),
    )


def text_reply(text: str) -> ModelResponse:
    return ModelResponse(text=text, usage=Usage(40, 9, 49))


def screen_text(app: RunsApp) -> str:
    """Everything on the screen as the terminal would get it, without styles."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
    )
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text(styles=False)


def terminal_output(app: RunsApp) -> str:
    """The bytes a terminal would get for the current screen, escape sequences included."""
    width, height = app.size
    out = io.StringIO()
    console = Console(
        width=width, height=height, file=out, force_terminal=True, color_system="truecolor"
    )
    console.print(app.screen._compositor.render_update(full=True))
    return out.getvalue()


async def wait_until(
    pilot: Any, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition"
) -> Any:
    """Let the app run until `predicate()` is truthy (watchers and workers need real time)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def watcher_reports(app: RunsApp, paths: Sequence[Path]) -> None:
    """What the watcher does with a batch of paths watchfiles reports: the source reads them,
    the app is told what changed."""
    app.watcher.changed(app.source.refresh_paths(paths))


def notifications(app: RunsApp) -> list[str]:
    return [n.message for n in app._notifications]


def told(app: RunsApp) -> list[str]:
    """Every note the app is told from now on, in order, whether or not a newer one of its kind
    has since taken its place on screen (`notifications` has only those still shown)."""
    said: list[str] = []
    tell_note = app.tell_note

    def recorded(note: Any) -> None:
        said.append(note.text)
        tell_note(note)

    app.tell_note = recorded  # type: ignore[method-assign]
    return said


def row_statuses(app: RunsApp) -> dict[str, str]:
    return {r.run_id: r.status for r in app.runs_screen.run_list.rows}


def toasts(app: RunsApp) -> list[str]:
    """What each notification widget on screen shows (its title, then its message), as drawn:
    the widgets' own text, not the screen's (the same words may be elsewhere on it). A toast
    taken down stays in the DOM until its removal is processed, not displayed: it is left out."""
    return [toast.render().plain for toast in app.screen.query("Toast") if toast.display]


async def priced(pilot: Any) -> None:
    """Until every readable row of the list is read whole and priced (the fill's worker does it
    after the first frame), and the list shows it."""
    from agentor.sources.rowcost import needs_pricing

    app = pilot.app
    await wait_until(
        pilot,
        lambda: (
            not any(needs_pricing(r) for r in app.source.rows())
            and app.watcher.fill_worker is not None
            and app.watcher.fill_worker.is_finished
        ),
        what="every row priced",
    )
    await pilot.pause()
