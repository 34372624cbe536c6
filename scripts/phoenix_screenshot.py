"""screenshots/phoenix-trace.png: a sample run's trace in Arize Phoenix's own UI.

    .venv-phoenix/bin/phoenix serve &        # make phoenix; listens on 127.0.0.1:6006
    .venv/bin/python scripts/phoenix_screenshot.py [--phoenix http://127.0.0.1:6006]

Sends the sample run that crashed and was resumed (runs/, two segments) with `agentor export
--format otlp`, then has headless Chromium (Debian's) take the trace's page.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = "c0f1f8ee98b55cb8bc6b29804e73ad07"  # runs/README.md: "resumed"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--phoenix", default="http://127.0.0.1:6006")
    p.add_argument("--out", default=str(ROOT / "screenshots" / "phoenix-trace.png"))
    args = p.parse_args()
    cli = [sys.executable, "-c", "from agentor.cli import main; raise SystemExit(main())"]
    subprocess.run(
        [
            *cli,
            "export",
            RUN,
            "--dir",
            str(ROOT / "runs"),
            "--format",
            "otlp",
            "--endpoint",
            args.phoenix,
        ],
        check=True,
    )
    with urllib.request.urlopen(f"{args.phoenix}/v1/projects") as answer:
        project = next(p["id"] for p in json.load(answer)["data"] if p["name"] == "default")
    time.sleep(2)  # Phoenix writes what it received in the background
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--user-data-dir={profile}",
                "--window-size=1600,1000",
                "--virtual-time-budget=20000",
                f"--screenshot={args.out}",
                f"{args.phoenix}/projects/{project}/traces/{RUN}",
            ],
            check=True,
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
