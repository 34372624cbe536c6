"""startup: `agentor-tui --version`, and the app's first frame in a terminal, vs `python -c pass`.

Each is a fresh process of this venv's interpreter, interleaved:

- baseline: `python -c pass`;
- `agentor-tui --version` (the console script);
- first frame: `agentor-tui DIR --no-watch` in a pseudo-terminal (120x40) on a directory of 20
  runs, until the run list's title ("Runs 20") has been written to the terminal; then the
  process is killed.

No goal to meet (the issue asks for the figures); the ratio printed is `--version` / `python
-c pass`.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import harness
import synthetic

NAME = "startup"
RUNS = 20
ANSI = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def agentor_tui() -> list[str]:
    script = Path(sys.executable).parent / "agentor-tui"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui"]


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def first_frame(directory: Path, marker: bytes, timeout: float = 30.0) -> float:
    """Seconds from spawning the app in a pty until `marker` is on its screen."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    env.pop("NO_COLOR", None)
    t = time.perf_counter()
    proc = subprocess.Popen(
        [*agentor_tui(), str(directory), "--no-watch"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    try:
        deadline = t + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no {marker!r} on screen; got {seen[-300:]!r}")
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise RuntimeError(f"the app exited before drawing; got {seen[-300:]!r}")
            seen += chunk
            if marker in ANSI.sub(b"", seen):
                return time.perf_counter() - t
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def main() -> None:
    args = harness.parse_args(__doc__)
    reps = 1 if args.quick else 11
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        now = time.time()
        for i in range(RUNS):
            run_id = synthetic.run_id_for(i)
            synthetic.write_run(tmp, run_id, synthetic.run_events(run_id, 1 + i % 4, now - 60 * i))
        times = harness.interleaved(
            [
                ("baseline", lambda: timed([sys.executable, "-c", "pass"])),
                ("version", lambda: timed([*agentor_tui(), "--version"])),
                ("frame", lambda: first_frame(tmp, f"Runs {RUNS}".encode())),
            ],
            reps,
            warmup=0 if args.quick else 1,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {k: harness.median(v) for k, v in times.items()}
    base = med["baseline"]
    print(f"{NAME}: {reps} interleaved processes each, {harness.machine()}")
    harness.table(
        ["process", "median", "min..max", "vs python -c pass"],
        [
            [label, harness.fmt_s(med[k]), harness.spread(times[k]), f"{med[k] / base:.1f}x"]
            for k, label in [
                ("baseline", "python -c pass"),
                ("version", "agentor-tui --version"),
                ("frame", f"agentor-tui DIR: first frame ({RUNS} runs)"),
            ]
        ],
    )
    harness.result_line(
        NAME,
        med["version"] / base,
        "report",
        f"version:{harness.fmt_s(med['version'])},first_frame:{harness.fmt_s(med['frame'])}",
        harness.fmt_s(base),
    )


if __name__ == "__main__":
    main()
