"""`StreamLine`: the text a model is streaming during a resume, as it arrives."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agentor.engine.statuses import STOPPING
from agentor.literal import literal_line
from tui.text.formatting import short_id
from tui.text.styles import STATUS_STYLES

# Only the end of the stream fits on one line; keep a little more than a wide terminal shows.
KEEP = 400


class StreamLine(Static):
    """One line under the timeline, shown only while a resume runs in this process."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text(""), markup=False, id=id)
        self.run_id: str | None = None
        self.streamed = ""

    def start(self, run_id: str) -> None:
        self.run_id = run_id
        self.streamed = ""
        self.display = True
        self._draw("waiting for the model…")

    def add(self, text: str) -> None:
        self.streamed = (self.streamed + text)[-KEEP:]
        self._draw()

    def turn_done(self) -> None:
        """A step was recorded: its text is in the timeline now, start a fresh line."""
        self.streamed = ""
        self._draw("working…")

    def stopping(self, reason: str) -> None:
        """The resume was stopped and is unwinding: say what it waits for, until it ends."""
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"▍ {literal_line(short_id(self.run_id or ''))} ", "bold")
        line.append(literal_line(reason), STATUS_STYLES[STOPPING])
        self.update(line)

    def stop(self) -> None:
        self.run_id = None
        self.streamed = ""
        self.display = False

    def _draw(self, placeholder: str = "") -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"▍ resuming {literal_line(short_id(self.run_id or ''))} ", "bold cyan")
        if self.streamed:
            width = max(10, self.size.width - 22) if self.size.width else 120
            line.append(literal_line(self.streamed[-width:]))
        else:
            line.append(placeholder, "dim italic")
        self.update(line)
