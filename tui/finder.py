"""What the timeline looks for in the open run: the lines a search matches and the lines its
jumps go to (errors, tool calls). Plain state, no widgets: `Timeline` scans (`tui.logscan`)
and hands the results here; this says where `n`, `e` or `t` lead from a line.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from .logscan import Scan

SEARCH, ERRORS, CALLS = "search", "errors", "calls"
# Each kind of line, and the scan that finds it.
SCAN_OF = {SEARCH: SEARCH, ERRORS: "marks", CALLS: "marks"}
# How a jump names what it looks for ("no error below").
NAMES = {SEARCH: "match", ERRORS: "error", CALLS: "tool call"}
PLURALS = {SEARCH: "matches", ERRORS: "errors", CALLS: "tool calls"}


@dataclass
class Scanned:
    """How far one scan has read the log, and the token of what it is for: a token moves
    on whenever earlier results no longer apply (another query, another run)."""

    token: int = 0
    end: int = 0  # bytes
    lines: int = 0
    wanted: bool = False  # a scan of this kind is kept up to date as the log grows


@dataclass
class Finder:
    query: str = ""
    found: dict[str, list[int]] = field(default_factory=dict)
    scans: dict[str, Scanned] = field(default_factory=dict)
    _tokens: int = 0

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Another run (or the file was replaced): nothing found, nothing scanned."""
        self.query = ""
        self.found = {SEARCH: [], ERRORS: [], CALLS: []}
        self.scans = {SEARCH: self._fresh(), "marks": self._fresh()}

    def _fresh(self, wanted: bool = False) -> Scanned:
        self._tokens += 1
        return Scanned(token=self._tokens, wanted=wanted)

    def set_query(self, query: str) -> None:
        """A new search: its scan starts over (an empty query is no search)."""
        self.query = query
        self.found[SEARCH] = []
        self.scans[SEARCH] = self._fresh(wanted=bool(query))

    def want(self, kind: str) -> None:
        """Jumps to `kind` were asked for: find those lines, and keep finding them."""
        self.scans[SCAN_OF[kind]].wanted = True

    def add(self, scan_kind: str, token: int, start: int, scan: Scan) -> bool:
        """Take a scan's results; False when they came too late (another query or run, or
        a range already taken)."""
        state = self.scans[scan_kind]
        if token != state.token or start != state.end:
            return False
        if scan_kind == SEARCH:
            self.found[SEARCH] += scan.found
        else:
            self.found[ERRORS] += scan.errors
            self.found[CALLS] += scan.calls
        state.end, state.lines = scan.end, state.lines + scan.lines
        return True

    def complete(self, kind: str, lines: int) -> bool:
        """Whether every one of the log's `lines` was scanned for `kind`."""
        return self.scans[SCAN_OF[kind]].lines >= lines

    def step(self, kind: str, index: int, forward: bool, wrap: bool) -> tuple[int | None, bool]:
        """The next (or previous) line of `kind` from `index`, and whether that wrapped
        around the end of the run."""
        lines = self.found[kind]
        if not lines:
            return None, False
        if forward:
            k = bisect_right(lines, index)
            if k < len(lines):
                return lines[k], False
            return (lines[0], True) if wrap else (None, False)
        k = bisect_left(lines, index) - 1
        if k >= 0:
            return lines[k], False
        return (lines[-1], True) if wrap else (None, False)

    def is_match(self, index: int) -> bool:
        lines = self.found[SEARCH]
        k = bisect_left(lines, index)
        return k < len(lines) and lines[k] == index

    def position(self, index: int) -> int | None:
        """Which match (1-based) line `index` is, or None when it is not one."""
        lines = self.found[SEARCH]
        k = bisect_left(lines, index)
        return k + 1 if k < len(lines) and lines[k] == index else None
