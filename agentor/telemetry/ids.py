"""Trace and span ids made from what a log says, so that every export of a run, by any process,
gives the same ids: a backend that keys spans by id (Phoenix does) keeps one copy of a span
sent twice, and a fork can link to its parent's span without asking anyone.

- A run's trace id is its run id when that is 32 hex digits (a uuid4 hex, the engine's
  default: the trace is found in a backend by the run id as it is), else the first 16 bytes of
  the SHA-256 of the run id.
- A span is named by the line of the run's log that opened it (a `run_start`, a `generation`,
  a `tool_call`, an `approval_request`): its id is the first 8 bytes of the SHA-256 of the run
  id and that line number.
An id of zero is invalid in OpenTelemetry; the (astronomically rare) zero digest becomes 1.
"""

from __future__ import annotations

import hashlib
import re

_HEX32 = re.compile(r"[0-9a-f]{32}")


def trace_id_of(run_id: str) -> int:
    """The 128-bit trace id of a run (see the module)."""
    if _HEX32.fullmatch(run_id):
        return int(run_id, 16) or 1
    digest = hashlib.sha256(b"agentor trace\0" + run_id.encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest()[:16], "big") or 1


def span_id_of(run_id: str, line: int) -> int:
    """The 64-bit id of the span that line `line` (1-based) of run `run_id` opened."""
    key = f"{run_id}\0{line}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(b"agentor span\0" + key).digest()[:8], "big") or 1
