"""Write screenshots/browser.png: `agentor-tui serve` on the sample runs, as a real browser
(Debian's headless Chromium, driven by Playwright) shows it.

    python scripts/browser_screenshot.py [RUNS_DIR] [--out screenshots/browser.png]

The runs are copied to a scratch directory first, served with a token and the offline demo
agent; the picture is taken once the page's terminal shows the run list.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.servekit import Served, Tab, launch  # noqa: E402
from tui.serve.options import TOKEN_ENV  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", default=str(ROOT / "runs"))
    parser.add_argument("--out", default=str(ROOT / "screenshots" / "browser.png"))
    args = parser.parse_args()
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="agentor-serve-shot-") as scratch:
        runs = Path(scratch) / "runs"
        shutil.copytree(args.runs, runs)
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        env[TOKEN_ENV] = token
        agent = ["--agent", f"{ROOT / 'examples' / 'weather.py'}:agent"]
        log = Path(scratch) / "serve.log"
        served = Served(Path("runs"), agent, env, log, cwd=Path(scratch))
        try:
            with sync_playwright() as playwright:
                browser = launch(playwright)
                tab = Tab(browser, served.url)
                tab.page.goto(f"{served.url}/?token={token}")
                tab.wait_for(lambda s: "Runs " in s and "Approval" in s, "the run list")
                tab.page.screenshot(path=args.out)
                browser.close()
        finally:
            served.stop()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
