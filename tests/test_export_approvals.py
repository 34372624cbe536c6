"""`agentor export` of real runs a person decided: an approval with a note and edited arguments,
and a rejection with a reason, each shown with its decision, who made it, what they said and
what they changed, in Markdown, HTML and JSON; what a person wrote stays literal text."""

from __future__ import annotations

import html
import json
from pathlib import Path

from markdown_it import MarkdownIt

from agentor import approve, reject
from agentor.engine.events import APPROVAL, APPROVAL_REQUEST
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from tests.approvalkit import Travel
from tests.test_agentor_command import agentor, awaiting_run
from tests.test_export import Tags

NOTE = "one night is enough <script>document.title='PWNED'</script> [bold]loud[/bold]"
REASON = "too dear <img src=x onerror=alert(1)> [red]now[/red]"
EDIT = {"city": "Rome", "nights": 1}


def decided(runs: Path, approved: bool) -> tuple[str, str]:
    """A travel run whose gated book_hotel call was approved (edited, with a note) or
    rejected (with a reason), then resumed to its end: its id and the call's."""
    store = FileStore(runs)
    run_id = awaiting_run(runs)
    (request,) = [e for e in store.load(run_id) if e.type == APPROVAL_REQUEST]
    assert request.call_id is not None
    if approved:
        approve(store, run_id, request.call_id, args=EDIT, note=NOTE, by="alice")
    else:
        reject(store, run_id, request.call_id, reason=REASON, by="bob")
    assert Travel(store).agent.resume(run_id).status == COMPLETED
    return run_id, request.call_id


def exported(runs: Path, run_id: str, fmt: str) -> str:
    proc = agentor("export", run_id, "--store", str(runs), "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_an_approval_is_exported_with_its_decision_approver_note_and_edit(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_id, call = decided(runs, approved=True)

    md = exported(runs, run_id, "md")
    said = f"Approval: `approved` (`{call}`) for `book_hotel` by `alice` · note"
    assert f"{said}\n\n```text\n{NOTE}\n```\n" in md
    edit = json.dumps(EDIT, indent=2)
    assert f"Edited arguments (`{call}`)\n\n```json\n{edit}\n```\n" in md
    assert "decided" not in md
    rendered = MarkdownIt("commonmark", {"html": True}).render(md)
    assert not {"script", "img", "b"} & set(Tags(rendered).tags)

    page = exported(runs, run_id, "html")
    label = (
        f"Approval: <code>approved</code> (<code>{call}</code>) for <code>book_hotel</code> "
        "by <code>alice</code> · note"
    )
    assert f'<div class="label">{label}</div><pre><code>{html.escape(NOTE)}</code></pre>' in page
    assert f"<pre><code>{html.escape(edit)}</code></pre>" in page
    assert "[bold]loud[/bold]" in page and not {"script", "img"} & set(Tags(page).tags)

    (approval,) = [e for e in json.loads(exported(runs, run_id, "json"))["events"]
                   if e["type"] == APPROVAL]  # fmt: skip
    assert (approval["decision"], approval["by"], approval["note"], approval["args"]) == (
        "approved",
        "alice",
        NOTE,
        EDIT,
    )


def test_a_rejection_is_exported_with_who_rejected_it_and_why(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_id, call = decided(runs, approved=False)

    md = exported(runs, run_id, "md")
    said = f"Approval: `rejected` (`{call}`) for `book_hotel` by `bob` · reason"
    assert f"{said}\n\n```text\n{REASON}\n```\n" in md
    assert "Edited arguments" not in md and "decided" not in md
    assert f"rejected by bob: {REASON}" in md  # what the model was told, as the call's error

    page = exported(runs, run_id, "html")
    label = (
        f"Approval: <code>rejected</code> (<code>{call}</code>) for <code>book_hotel</code> "
        "by <code>bob</code> · reason"
    )
    assert f'<div class="label">{label}</div><pre><code>{html.escape(REASON)}</code></pre>' in page
    assert not {"script", "img"} & set(Tags(page).tags)

    (approval,) = [e for e in json.loads(exported(runs, run_id, "json"))["events"]
                   if e["type"] == APPROVAL]  # fmt: skip
    assert (approval["decision"], approval["by"], approval["note"]) == ("rejected", "bob", REASON)
