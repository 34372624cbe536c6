"""Export a run as Markdown, JSON or HTML: every sample run, both stores, and a hostile log whose
markup, scripts and escape sequences stay inert (the HTML opened in a real headless browser)."""

from __future__ import annotations

import html
import html.parser
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from agentor.engine.events import (
    GENERATION,
    MESSAGE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Usage,
)
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.errors import RunNotFoundError
from agentor.ops import format_cost, run_cost
from agentor.ops.run_export import export
from tests.browser import dump_dom, request_counter
from tests.conftest import ROOT

SAMPLES = FileStore(ROOT / "runs")
SAMPLE_IDS = SAMPLES.list_runs()
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")


class Tags(html.parser.HTMLParser):
    """Every element an HTML text holds (parsed the way a browser's tokenizer would)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def hostile(url: str) -> str:
    """What a malicious tool result or model could put in a log."""
    return (
        "<script>document.title='PWNED'</script>"
        "<img src=x onerror=\"document.title='PWNED'\">"
        "</code></pre></section><script>document.title='PWNED'</script>"
        f'<img src="{url}/img"><iframe src="{url}/frame"></iframe>'
        f'<link rel=stylesheet href="{url}/css">'
        f'<meta http-equiv="refresh" content="0;url={url}/meta">'
        f'<script src="{url}/js"></script><style>@import "{url}/import";</style>'
        "[bold red]rich markup[/bold red] "
        "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"
        " \u202eevil\x9b31m "
        f"``` ~~~ `code` ![img]({url}/md-img) [link](javascript:alert(1)) <b>bold</b>"
    )


def write_hostile_run(store: FileStore | MemoryStore, run_id: str, p: str) -> None:
    prompt = [{"role": "user", "content": p}]
    call = {"id": "c1", "type": "function", "function": {"name": p, "arguments": "{}"}}
    store.append_many(
        run_id,
        [
            Event(RUN_START, run_id=run_id, agent=p, model=p, messages=prompt, ts=1.8e9),
            Event(GENERATION, turn=1, model=p, calls=[call], messages=prompt, text=p,
                  usage=Usage(10, 2, 12), ts=1.8e9 + 1),
            Event(TOOL_CALL, turn=1, name=p, call_id=p, args={p: p}, ts=1.8e9 + 2),
            Event(TOOL_RESULT, turn=1, name=p, call_id="c1", args={p: p}, result=p, ts=1.8e9 + 3),
            Event(TOOL_RESULT, turn=1, name=p, call_id="c2", error=p, ts=1.8e9 + 3),
            Event("approval_request", turn=1, name=p, call_id="c3", args={"x": p}, ts=1.8e9 + 4),
            Event("approval", call_id="c3", name=p, decision=p, by=p, note=p, args={p: p},
                  result=p),
            Event(p[:40], text=p),  # an event type this version does not know
            Event(RUN_END, status=p, text=p, error=p, ts=1.8e9 + 5),
        ],
    )  # fmt: skip


# -- every sample run -----------------------------------------------------------------------


def test_a_run_of_a_model_no_price_is_known_for_says_so() -> None:
    store = MemoryStore()
    write_hostile_run(store, "unpriced", "offline-demo")  # a model the price table lacks
    md = export(store, "unpriced", "md")
    assert "- **Cost:** – (no price known for this model)\n" in md


@pytest.mark.parametrize("run_id", SAMPLE_IDS)
def test_every_sample_run_exports_in_every_format(run_id: str) -> None:
    events = SAMPLES.load(run_id)
    prompt = next(e for e in events if e.type == RUN_START).messages[-1]["content"]  # type: ignore[index]
    tools = {e.name for e in events if e.type == TOOL_CALL}
    results = [e.result for e in events if e.type == TOOL_RESULT and isinstance(e.result, str)]
    end = next((e for e in reversed(events) if e.type == RUN_END), None)

    md = export(SAMPLES, run_id, "md")
    page = export(SAMPLES, run_id, "html")
    ending = [end.text or end.error or ""] if end is not None else []
    for text in (prompt, *results, *ending):
        assert text in md
        assert html.escape(text) in page
    for tool in tools:
        assert f"`{tool}`" in md and f"<code>{tool}</code>" in page
    assert md.startswith(f"# Run `{run_id}`\n")
    assert f"- **Status:** `{end.status if end else 'incomplete'}`" in md
    priced = run_cost(events)
    cost = format_cost(priced)
    assert cost.startswith("$") and f"- **Cost:** {cost}\n" in md  # gpt-4o-mini, priced
    assert not {"script", "img", "iframe", "link", "a"} & set(Tags(page).tags)

    document = json.loads(export(SAMPLES, run_id, "json"))
    assert document["format"] == "agentor-run" and document["run_id"] == run_id
    assert [e["type"] for e in document["events"]] == [e.type for e in events]
    for e, loaded in zip(document["events"], events, strict=True):
        if e["type"] == GENERATION:
            assert e["messages"] == loaded.messages and "messages_delta" not in e
            assert Decimal(e["cost"]) > 0
    assert Decimal(document["summary"]["cost"]["usd"]) == priced.total
    assert document["bad_lines"] == []


def test_a_priced_run_shows_its_cost_in_every_format(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    prompt = [{"role": "user", "content": "hi"}]
    store.append_many(
        "priced",
        [
            Event(RUN_START, model="gpt-4o-mini", messages=prompt, ts=1746057600.0),
            Event(GENERATION, turn=1, model="gpt-4o-mini", messages=prompt, text="hello",
                  usage=Usage(1000, 100, 1100), ts=1746057601.0),
            Event(MESSAGE, turn=1, text="hello", ts=1746057601.0),
            Event(RUN_END, status="completed", text="hello", ts=1746057601.0),
        ],
    )  # fmt: skip
    md = export(store, "priced", "md")
    assert (
        "- **Cost:** $0.00021" in md
        and "### Turn 1 · `gpt-4o-mini` · 1,100 tokens · $0.00021" in md
    )
    assert md.count("hello") == 1  # the answer, not repeated by the end
    assert "<dd>$0.00021</dd>" in export(store, "priced", "html")
    document = json.loads(export(store, "priced", "json"))
    assert document["summary"]["cost"] == {
        "usd": "0.00021",
        "priced_generations": 1,
        "unpriced_generations": 0,
    }
    assert document["events"][1]["cost"] == "0.00021"


def test_both_stores_export_the_same_document(tmp_path: Path) -> None:
    file_store, memory = FileStore(tmp_path), MemoryStore()
    for store in (file_store, memory):
        write_hostile_run(store, "r1", hostile("http://127.0.0.1:9"))
    for fmt in ("md", "html", "json"):
        assert export(file_store, "r1", fmt) == export(memory, "r1", fmt)


def test_unknown_runs_and_formats_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RunNotFoundError):
        export(FileStore(tmp_path), "nobody", "md")
    with pytest.raises(ValueError, match="unknown export format 'pdf': use one of md, json, html"):
        export(FileStore(tmp_path), "nobody", "pdf")


def test_json_is_strict_and_says_which_lines_were_skipped(tmp_path: Path) -> None:
    (tmp_path / "odd.jsonl").write_bytes(
        b'{"type": "run_start", "ts": NaN, "messages": [{"role": "user", "content": "\\udcff"}]}\n'
        b"garbage\n"
        b'{"type": "run_end", "status": "completed", "ts": Infinity}\n'
    )
    text = export(FileStore(tmp_path), "odd", "json")
    text.encode("utf-8")
    document = json.loads(text, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert document["events"][0]["ts"] is None and document["events"][1]["ts"] is None
    assert document["events"][0]["messages"][0]["content"] == "\udcff"
    assert document["bad_lines"] == [{"line": 2, "reason": "not JSON: Expecting value at column 1"}]
    for fmt in ("md", "html"):
        export(FileStore(tmp_path), "odd", fmt).encode("utf-8")


# -- a hostile log ---------------------------------------------------------------------------


def test_markdown_of_a_hostile_log_renders_nothing_from_it(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    write_hostile_run(store, "evil", hostile("http://127.0.0.1:9"))
    md = export(store, "evil", "md")
    assert not RAW_CONTROL.search(md)
    assert "␛[2J␛]52;c;cHduZWQ=␇" in md and "\\u202eevil\\x9b31m" in md
    rendered = MarkdownIt("commonmark", {"html": True}).render(md)
    tags = set(Tags(rendered).tags)
    assert tags <= {"h1", "h2", "h3", "ul", "li", "strong", "p", "code", "pre"}, tags
    # Every copy of the text is inside code: nothing of it became markup.
    assert "&lt;script&gt;document.title='PWNED'&lt;/script&gt;" in rendered


def test_html_of_a_hostile_log_is_inert_in_a_real_browser(tmp_path: Path) -> None:
    with request_counter() as (url, requests):
        # The harness can see a script run and a request made: a page that does both.
        control = tmp_path / "control.html"
        control.write_text(
            f"<html><head><title>before</title></head><body>"
            f"<script>document.title='RAN'</script><img src='{url}/control'></body></html>"
        )
        control_dom = dump_dom(control)
        assert "<title>RAN</title>" in control_dom and requests == ["/control"]
        requests.clear()

        store = FileStore(tmp_path / "runs")
        write_hostile_run(store, "evil", hostile(url))
        page = tmp_path / "evil.html"
        page.write_text(export(store, "evil", "html"), encoding="utf-8")
        dom = dump_dom(page)

    assert requests == [], f"the page reached the network: {requests}"
    assert "<title>Run evil · agentor</title>" in dom  # no script changed it
    assert "PWNED" not in re.sub(r"&lt;.*?&gt;|'PWNED'", "", dom)  # only as escaped text
    tags = set(Tags(dom).tags)
    assert not tags & {"script", "img", "iframe", "link", "a", "b", "object", "embed"}, tags
    assert [m.group(1) for m in re.finditer(r"<meta ([^>]*)>", dom)] == [
        'charset="utf-8"',
        'http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src '
        "'unsafe-inline'; img-src 'none'; form-action 'none'\"",
        'name="referrer" content="no-referrer"',
    ]
    text = dom.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert "<script>document.title='PWNED'</script>" in text  # shown, as text
    assert "[bold red]rich markup[/bold red]" in text
    assert "␛[2J␛]52;c;cHduZWQ=␇" in text and "\\u202eevil\\x9b31m" in text
    assert not RAW_CONTROL.search(dom)


def test_a_missing_browser_fails_the_test_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests import browser

    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    with pytest.raises(pytest.fail.Exception, match=r"apt-get install -y chromium"):
        browser.chromium()
