"""What `agentor trace` has sent, kept in a small file so that a restart neither loses nor
repeats spans.

A span is named by its run and the line that opened it (agentor.telemetry.spans), so what was
sent is, per run, `upto` (every span opened at a line up to it was sent: the run had nothing
open then) and `sent` (lines after `upto` whose spans were sent).

The file is a journal, one JSON object a line: a header naming the collector it is for (the
same file given with another endpoint is refused: each collector has its own), then one line
per send (`{"run": id, "sent": [lines]}`) or settled run (`{"run": id, "upto": n}`), appended
and fsynced as it happens, so what a send costs does not grow with the store. Opening it reads
the lines back (a torn last line, from a kill, is ignored) and writes it anew, compacted, to a
file beside it renamed over it. A span goes again only if the follower is killed between the
collector's answer and the append (it is the same span, the same ids: Phoenix keeps one).

A new file is only written once a collector took spans: a follower whose collector never
answered (a wrong `--endpoint`) leaves no file bound to that collector behind.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "agentor-trace-sent"
VERSION = 1


class _StateError(Exception):
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
        self._fd = -1
        if self._load():
            self._rewrite()

    def run(self, run_id: str) -> RunSent:
        return self.runs.setdefault(run_id, RunSent())

    def sent(self, run_id: str, lines: list[int]) -> None:
        self.run(run_id).sent.update(lines)
        self._append({"run": run_id, "sent": sorted(lines)})

    def settle(self, run_id: str, lines: int) -> None:
        record = self.run(run_id)
        if record.upto < lines or record.sent:
            record.settle(lines)
            self._append({"run": run_id, "upto": record.upto})

    def forget(self, run_id: str) -> None:
        if self.runs.pop(run_id, None) is not None:
            self._append({"run": run_id, "upto": 0, "forget": True})

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # -- the file ------------------------------------------------------------------------------

    def _append(self, entry: dict[str, Any]) -> None:
        if self._fd < 0:  # a new file: written (and bound to the collector) once it took spans
            if "sent" in entry:
                self._rewrite()  # what is known so far, this send included
            return
        data = json.dumps(entry, separators=(",", ":")).encode() + b"\n"
        try:
            os.write(self._fd, data)
            os.fsync(self._fd)
        except OSError as exc:
            raise _StateError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def _rewrite(self) -> None:
        """The file anew: the header and one line a run (what was read, compacted)."""
        header = {"format": FORMAT, "version": VERSION, "endpoint": self.endpoint}
        lines = [header] + [
            {"run": run_id, "upto": r.upto, "sent": sorted(r.sent)}
            for run_id, r in self.runs.items()
        ]
        body = b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, body)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, self.path)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise _StateError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def _load(self) -> bool:
        """Read the file back; False when there is none."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _StateError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        entries = []
        for raw in data.split(b"\n")[:-1]:  # the part after the last newline: a torn write
            with contextlib.suppress(ValueError):
                entries.append(json.loads(raw))
        header = entries[0] if entries else None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise _StateError(f"{self.path} is not a state file of agentor trace")
        if header.get("endpoint") != self.endpoint:
            raise _StateError(
                f"{self.path} records spans sent to {header.get('endpoint')}, not "
                f"{self.endpoint}: give each collector its own --state FILE, or delete "
                f"{self.path} to send every run to {self.endpoint} from the start"
            )
        for entry in entries[1:]:
            if isinstance(entry, dict) and isinstance(entry.get("run"), str):
                self._replay(entry)
        return True

    def _replay(self, entry: dict[str, Any]) -> None:
        if entry.get("forget"):
            self.runs.pop(entry["run"], None)
            return
        record = self.run(entry["run"])
        record.sent.update(x for x in entry.get("sent") or () if isinstance(x, int))
        if isinstance(entry.get("upto"), int):
            record.settle(entry["upto"])
