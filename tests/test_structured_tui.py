"""What the TUI and `agentor show` say of a structured run: an invalid answer a red row with the
validation error in the detail, the final output shown as the object, a withdrawn tool, an
answer from a fallback model."""

from __future__ import annotations

import json
from pathlib import Path

from agentor import Agentor, function_tool
from agentor.engine.store.file import FileStore
from agentor.errors import ModelError
from agentor.testing import ScriptedModel
from tests.app_support import SIZE, app_for
from tests.structuredkit import INVALID, VALID, Answer
from tests.test_agentor_command import agentor
from tui.text.event_views import type_style
from tui.text.styles import ERROR_STYLE


class Down:
    """A primary model whose endpoint always fails."""

    name = "primary-model"

    async def generate(self, messages, tools, on_text=None):
        raise ModelError("RateLimitError: Error code: 429 - slow down")


async def structured_run(runs: Path) -> str:
    @function_tool
    def flaky(city: str) -> str:
        """A tool whose service is down."""
        raise RuntimeError("down")

    fallback = ScriptedModel(
        [
            ScriptedModel([]).calls(("flaky", {"city": "A"})),
            ScriptedModel([]).calls(("flaky", {"city": "B"})),
            ScriptedModel.text(INVALID),
            ScriptedModel.text(VALID),
        ],
        name="fallback-model",
    )
    agent = Agentor("Typed", model=Down(), tools=[flaky], output_type=Answer, store=FileStore(runs))
    result = await agent.arun("Six times seven?", fallback_models=[fallback])
    assert result.final_output == Answer(answer=42)
    return result.run_id


ROWS = [
    "run_start",
    "generation",
    "tool_call",
    "tool_result",
    "generation",
    "tool_call",
    "tool_result",
    "tool_disabled",
    "generation",
    "invalid_output",
    "generation",
    "message",
    "run_end",
]


async def test_a_structured_run_on_screen(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_id = await structured_run(runs)
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await pilot.pause()
        rows = {kind: app.runs_screen.timeline.render_row(i, 200) for i, kind in enumerate(ROWS)}
        # The invalid answer: a red row with the validation error.
        invalid = rows["invalid_output"]
        assert "invalid" in invalid.plain
        assert "✗ the answer does not match Answer: answer: Input should be" in invalid.plain
        error_at = invalid.plain.index("✗")
        assert any(
            str(s.style) == ERROR_STYLE and s.start <= error_at < s.end for s in invalid.spans
        )
        assert type_style("invalid_output", "") == "bold red"
        assert "flaky withdrawn after 2 failed calls" in rows["tool_disabled"].plain
        assert "by fallback-model (fallback)" in app.runs_screen.timeline.render_row(1, 200).plain

        await pilot.press("enter", "home", *["down"] * ROWS.index("invalid_output"))
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert detail.startswith("invalid_output · turn 3")
        assert "Error\n  the answer does not match Answer: answer: Input should be" in detail
        assert "Sent to the model (1 message)" in detail
        assert "- answer: Input should be a valid integer" in detail
        assert '"answer": "not-an-int"' in detail  # the raw answer

        await pilot.press("up")  # the generation that gave it: tools withdrawn
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert "Tools offered (0)" in detail
        assert "withdrawn after repeated failures: flaky" in detail

        await pilot.press("end")  # run_end: the output as the object
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        output = detail[detail.index("Output · Answer\n") :]
        assert output.startswith("Output · Answer\nanswer   42\nnote     null")

        await pilot.press("home")
        await pilot.pause()
        assert "output   Answer · 1 retry" in app.runs_screen.event_detail.text


async def test_agentor_show_json_has_the_parsed_output(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_id = await structured_run(runs)
    shown = agentor("show", run_id, "--store", str(runs), "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["final_output"] == VALID
    assert data["output_type"] == "Answer"
    assert data["parsed_output"] == {"answer": 42, "note": None}
    text = agentor("show", run_id, "--store", str(runs))
    assert "✗ the answer does not match Answer" in text.stdout
    assert "by fallback-model (fallback)" in text.stdout
