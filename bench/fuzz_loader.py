"""fuzz_loader: the loader's property tests at scale (`make test` runs 5% of it: --scale 0.05).

Runs every property of tests/test_reliability_fuzz.py through hypothesis with a large example
budget, then a seeded random mutator over real logs (byte flips, splices, truncations, line
shuffles, NULs and invalid UTF-8), each case loaded by FileStore and checked: nothing raises
beyond the documented errors, every line is an event or a reported bad line, whatever loaded
summarises, resumes and re-encodes, and the TUI's RunLog/DirectorySource agree with the loader.

    python bench/fuzz_loader.py                 # ~12,000 cases
    python bench/fuzz_loader.py --scale 0.1     # a quick look
    python bench/fuzz_loader.py --seed 7

The last line: `fuzz_loader cases=N failures=F events=E bad_lines=B seconds=S`.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from agentor.engine.events import Event  # noqa: E402
from tests import test_reliability_fuzz as fz  # noqa: E402

# (name, strategy, check, examples at scale 1)
PROPERTIES = [
    ("random bytes", st.binary(max_size=3000), fz.check_log_bytes, 1500),
    ("json lines", fz.any_json_lines, fz.check_log_bytes, 800),
    ("mutated logs", fz.mutated_logs(), fz.check_log_bytes, 1500),
    ("event dicts", fz.json_values | fz.event_dicts, fz.check_event_dict, 800),
    (
        "event lists",
        st.lists(fz.event_dicts, max_size=6),
        lambda ds: fz.check_events([Event.from_dict(d) for d in ds]),
        400,
    ),
    ("round trips", fz.event_sequences(), fz.check_roundtrip, 500),
    ("tui data layer", fz.mutated_logs() | st.binary(max_size=500), fz.check_tui_data_layer, 800),
]
RANDOM_CASES = 7000


class Tally:
    def __init__(self) -> None:
        self.cases = self.failures = self.events = self.bad = 0
        self.by_name: dict[str, int] = {}

    def count(self, name: str, outcome: object) -> None:
        self.cases += 1
        self.by_name[name] = self.by_name.get(name, 0) + 1
        if isinstance(outcome, tuple):
            self.events += outcome[0]
            self.bad += outcome[1]


def run_property(tally: Tally, name: str, strategy, check, examples: int, seed: int) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def prop(value):
        tally.count(name, check(value))

    prop._hypothesis_internal_use_seed = seed
    try:
        prop()
    except Exception:
        tally.failures += 1
        traceback.print_exc()


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to five random edits of a log's bytes."""
    junk = [b"\xff", b"\xed\xa0\x80", b"\x00", b"\n", b"\x1b[2J", b"{", b'"', b"}", b"\\"]
    for _ in range(rng.randint(1, 5)):
        op = rng.randrange(7)
        at = rng.randint(0, len(data))
        if op == 0:  # truncate
            data = data[:at]
        elif op == 1 and data:  # flip a byte
            i = rng.randrange(len(data))
            data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]
        elif op == 2:  # splice junk in
            data = data[:at] + rng.choice(junk) + data[at:]
        elif op == 3:  # delete a span
            data = data[:at] + data[at + rng.randint(1, 40) :]
        elif op == 4:  # shuffle the lines
            lines = data.splitlines(keepends=True)
            rng.shuffle(lines)
            data = b"".join(lines)
        elif op == 5:  # duplicate a line
            lines = data.splitlines(keepends=True)
            if lines:
                lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
            data = b"".join(lines)
        else:  # drop a line
            lines = data.splitlines(keepends=True)
            if lines:
                del lines[rng.randrange(len(lines))]
            data = b"".join(lines)
    return data


def run_random(tally: Tally, cases: int, seed: int) -> None:
    rng = random.Random(seed)
    logs = fz.base_logs()
    for i in range(cases):
        data = mutate(rng, rng.choice(logs))
        try:
            # Resuming every case would dominate the run: one in ten.
            tally.count("random mutations", fz.check_log_bytes(data, resume=i % 10 == 0))
        except Exception:
            tally.failures += 1
            print(f"random case {i} (seed {seed}) failed on {data[:200]!r}", file=sys.stderr)
            traceback.print_exc()


def main() -> int:
    p = argparse.ArgumentParser(description="fuzz the run-log loader")
    p.add_argument("--scale", type=float, default=1.0, help="multiply every case budget")
    p.add_argument("--seed", type=int, default=20240601)
    args = p.parse_args()
    # Torn-tail repairs warn on every such case; the checks, not the log, decide here.
    logging.getLogger("agentor").setLevel(logging.ERROR)

    tally = Tally()
    started = time.perf_counter()
    for name, strategy, check, examples in PROPERTIES:
        t = time.perf_counter()
        run_property(tally, name, strategy, check, max(1, int(examples * args.scale)), args.seed)
        print(
            f"  {name:<18} {tally.by_name.get(name, 0):>6} cases  {time.perf_counter() - t:6.1f}s"
        )
    t = time.perf_counter()
    run_random(tally, max(1, int(RANDOM_CASES * args.scale)), args.seed)
    n = tally.by_name.get("random mutations", 0)
    print(f"  {'random mutations':<18} {n:>6} cases  {time.perf_counter() - t:6.1f}s")
    seconds = time.perf_counter() - started
    print(
        f"fuzz_loader cases={tally.cases} failures={tally.failures} events={tally.events} "
        f"bad_lines={tally.bad} seconds={seconds:.1f}"
    )
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
