"""What `agentor trace` has sent, kept in a small JSON file so that a restart neither loses nor
repeats spans.

A span is named by its run and the line that opened it (spans.py), so what was sent is, per
run, `upto` (every span opened at a line up to it was sent: the run had nothing open then)
and `sent` (lines after `upto` whose spans were sent). The file names the collector it is
for: the same file given with another endpoint is refused (each collector has its own file).
It is written whole to a new file beside it, flushed and renamed over it: a kill leaves the
old file or the new one. A span goes again only if the follower is killed between the
collector's answer and this write (it is the same span, the same ids: Phoenix keeps one).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

FORMAT = "agentor-trace-sent"
VERSION = 1


class StateError(Exception):
    """The state file cannot be used; the message says why in one line."""


@dataclass
class RunSent:
    upto: int = 0
    sent: set[int] = field(default_factory=set)

    def has(self, line: int) -> bool:
        return line <= self.upto or line in self.sent

    def settle(self, lines: int) -> None:
        """Nothing of the run's first `lines` lines is open, and all of it was sent."""
        self.upto = max(self.upto, lines)
        self.sent = {line for line in self.sent if line > self.upto}


class SentFile:
    """The state of one follower for one collector (see the module)."""

    def __init__(self, path: Path, endpoint: str) -> None:
        self.path = path
        self.endpoint = endpoint
        self.runs: dict[str, RunSent] = {}
        self._load()

    def run(self, run_id: str) -> RunSent:
        return self.runs.setdefault(run_id, RunSent())

    def forget(self, run_id: str) -> None:
        self.runs.pop(run_id, None)

    def save(self) -> None:
        data = {
            "format": FORMAT,
            "version": VERSION,
            "endpoint": self.endpoint,
            "runs": {
                run_id: {"upto": r.upto, "sent": sorted(r.sent)} for run_id, r in self.runs.items()
            },
        }
        body = json.dumps(data, separators=(",", ":")).encode()
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, body)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise StateError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not a state file of agentor trace"
            raise StateError(f"cannot read {self.path}: {why}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise StateError(f"{self.path} is not a state file of agentor trace")
        if data.get("endpoint") != self.endpoint:
            raise StateError(
                f"{self.path} records spans sent to {data.get('endpoint')}, not {self.endpoint}: "
                "give each collector its own --state FILE"
            )
        for run_id, r in (data.get("runs") or {}).items():
            if isinstance(r, dict) and isinstance(r.get("upto"), int):
                sent = {x for x in r.get("sent") or () if isinstance(x, int)}
                self.runs[run_id] = RunSent(r["upto"], sent)
