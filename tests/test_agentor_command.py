"""The `agentor` command, run as the installed console script in subprocesses: ls, show,
approve, reject, resume; exit status 0 done / 1 refused / 2 usage, each refusal one line."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.approval.pending import pending_calls
from agentor.engine.events import APPROVAL
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED, INTERRUPTED, RUNNING
from agentor.engine.store.file import FileStore
from tests import approvalkit, crashkit
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.conftest import ROOT, log_lines
from tests.openai_server import FakeOpenAI

SCRIPT = Path(sys.executable).parent / "agentor"
ENV = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
ENV["PYTHONPATH"] = str(ROOT)
LS_FIELDS = [
    "run_id",
    "status",
    "agent",
    "model",
    "started_at",
    "last_event_at",
    "age",
    "pending",
    "turns",
    "tool_calls",
    "total_tokens",
    "first_prompt",
    "error",
    "pinned",
]


# Commands that only read or maintain a store, and fork and replay (a run of an agent over HTTP,
# in the same engine a child would run): run in this process (the console script's own
# `main`, with the console script's environment plus `env`, its output and exit status captured
# as a process's would be), which spares the suite an interpreter a call. Every other command
# runs the console script in a fresh process.
IN_PROCESS = {
    "ls",
    "show",
    "search",
    "export",
    "pin",
    "unpin",
    "prune",
    "diff",
    "copy",
    "fork",
    "replay",
}


def agentor(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """The `agentor` command: its exit status, stdout and stderr."""
    if args and args[0] in IN_PROCESS:
        return in_process(list(args), cwd, env or {})
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        env={**ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def in_process(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`agentor.cli.main(argv)` in this process, in `cwd`, with the console script's
    environment, its standard streams captured (UTF-8, as the child's are)."""
    from agentor.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", newline="", write_through=True)
    saved_env, here = dict(os.environ), os.getcwd()
    # Logged warnings reach stderr as in a process of its own (logging's last resort), not
    # pytest's capture.
    root = logging.getLogger()
    handlers, root.handlers = root.handlers, []
    os.environ.clear()
    os.environ.update({**ENV, **env})
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                status = main(argv)
            except SystemExit as exit_:  # argparse's refusals, --help
                code = exit_.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
                if not isinstance(code, int | None):
                    print(code, file=sys.stderr)
    finally:
        root.handlers = handlers
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(
        argv, status, out.getvalue().decode(), err.getvalue().decode()
    )


def refused(proc: subprocess.CompletedProcess[str], status: int = 1) -> str:
    """The one stderr line of a refused command (and nothing on stdout)."""
    assert proc.returncode == status, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs"


def awaiting_run(runs: Path, **travel: Any) -> str:
    """A run of the in-process travel agent, paused at its gated book_hotel call."""
    result = Travel(FileStore(runs), **travel).agent.run(TRAVEL_PROMPT)
    assert result.status == AWAITING_APPROVAL
    return result.run_id


def ages_out(text: str) -> str:
    """What a command printed, without the ages it counts from now."""
    return re.sub(r"\b\d+(?:\.\d+)?(?:ms|s|m|h|d)\b( ago)?", "<age>", text)


def cut(runs: Path, run_id: str, lines: int) -> None:
    path = FileStore(runs).path(run_id)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:lines]))


# -- the script itself ----------------------------------------------------------------------------


def test_help_loads_neither_the_engine_nor_the_model_client() -> None:
    assert SCRIPT.exists(), "make test installs the console script (pip install -e .)"
    assert agentor("--help").returncode == 0
    code = (
        "import sys\n"
        "from agentor.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "heavy = ('openai', 'pydantic', 'asyncio', 'agentor.agent', 'agentor.engine.store.file')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stderr.strip() == "[]", proc.stderr


def test_usage_errors_are_one_line_and_exit_2() -> None:
    line = refused(agentor("approve"), 2)
    assert line.startswith("agentor approve: error: the following arguments are required: RUN")
    assert refused(agentor("reject", "abc"), 2).startswith(
        "agentor reject: error: the following arguments are required: --reason"
    )
    assert "invalid choice" in refused(agentor("ls", "--status", "done"), 2)
    assert "is not a run id" in refused(agentor("show", "a b", "--dir", str(ROOT)), 2)


# -- ls -------------------------------------------------------------------------------------------


def test_ls_lists_status_agent_model_age_and_pending_approvals(runs: Path) -> None:
    waiting = awaiting_run(runs)
    done = Travel(FileStore(runs), gate=False).agent.run(TRAVEL_PROMPT).run_id
    crashed = awaiting_run(runs)
    cut(runs, crashed, 3)  # killed after its first tool call: nobody holds it
    held = awaiting_run(runs)
    cut(runs, held, 3)

    with FileStore(runs).lock(held):  # a live process holds it while ls looks
        proc = agentor("ls", str(runs))

    assert proc.returncode == 0, proc.stderr
    header, *rows = proc.stdout.splitlines()
    assert header.split() == [
        "STATUS", "RUN", "AGENT", "MODEL", "AGE", "PENDING", "PINNED", "PROMPT"
    ]  # fmt: skip
    by_id = {row.split()[1]: row.split() for row in rows}
    assert by_id[waiting][:5] == [AWAITING_APPROVAL, waiting, "Travel", "Agent", "scripted"]
    assert re.fullmatch(r"\d+s", by_id[waiting][5]), "made seconds ago (a loaded machine: 0s or 3s)"
    assert by_id[waiting][6] == "1"
    assert (by_id[done][0], by_id[done][6], by_id[done][7]) == (COMPLETED, "-", "-")
    assert by_id[crashed][0] == INTERRUPTED and by_id[held][0] == RUNNING
    assert rows[0].split()[1] == held, "newest first"
    assert all(row.endswith(TRAVEL_PROMPT) for row in rows)

    only = agentor("ls", str(runs), "--status", AWAITING_APPROVAL)
    assert [row.split()[1] for row in only.stdout.splitlines()[1:]] == [waiting]


def test_ls_json_is_an_array_of_the_documented_fields(runs: Path) -> None:
    waiting = awaiting_run(runs)
    proc = agentor("ls", str(runs), "--json")
    assert proc.returncode == 0, proc.stderr
    [row] = json.loads(proc.stdout)
    assert list(row) == LS_FIELDS
    events = FileStore(runs).load(waiting)
    assert row | {"age": None, "last_event_at": None} == {
        "run_id": waiting,
        "status": AWAITING_APPROVAL,
        "agent": "Travel Agent",
        "model": "scripted",
        "started_at": events[0].started_at,
        "last_event_at": None,
        "age": None,
        "pending": 1,
        "turns": 1,
        "tool_calls": 2,
        "total_tokens": 6,
        "first_prompt": TRAVEL_PROMPT,
        "error": None,
        "pinned": False,
    }
    assert row["last_event_at"] == events[-1].ts and 0 <= row["age"] < 60
    filtered = agentor("ls", str(runs), "--json", "--status", COMPLETED)
    assert json.loads(filtered.stdout) == []


def test_ls_of_an_empty_or_missing_directory(tmp_path: Path) -> None:
    empty = agentor("ls", str(tmp_path))
    assert (empty.returncode, empty.stdout) == (0, f"no runs in {tmp_path.resolve()}\n")
    assert json.loads(agentor("ls", str(tmp_path), "--json").stdout) == []
    missing = tmp_path / "nope"
    assert refused(agentor("ls", str(missing))) == f"agentor ls: no such directory: {missing}"
    assert not missing.exists(), "a command never creates a directory"


def test_without_a_directory_the_commands_use_runs_in_the_current_directory(
    tmp_path: Path,
) -> None:
    run_id = awaiting_run(tmp_path / "runs")
    listed = agentor("ls", "--json", cwd=tmp_path)
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [run_id], listed.stderr
    decided = agentor("reject", run_id, "--reason", "not now", "--by", "dora", cwd=tmp_path)
    assert decided.returncode == 0, decided.stderr
    decisions = [e for e in FileStore(tmp_path / "runs").load(run_id) if e.type == "approval"]
    assert [(d.decision, d.by, d.note) for d in decisions] == [("rejected", "dora", "not now")]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    missing = refused(agentor("ls", cwd=elsewhere))
    assert missing == f"agentor ls: no such directory: runs (in {elsewhere})"


# -- show -----------------------------------------------------------------------------------------


def test_show_prints_the_summary_the_timeline_and_the_pending_calls(runs: Path) -> None:
    run_id = awaiting_run(runs)
    proc = agentor("show", run_id[:6], "--dir", str(runs))  # a unique prefix will do
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"run      {run_id}\nstatus   awaiting approval\n")
    assert "agent    Travel Agent · scripted\n" in out
    kinds = [
        line.split()[1]
        for line in out.split("timeline (7 events)\n")[1].split("\n\n")[0].splitlines()
    ]
    assert kinds == [
        "run_start",
        "generation",
        "tool_call",
        "tool_call",
        "approval_request",
        "tool_result",
        "run_end",
    ]
    [call] = pending_calls(FileStore(runs).load(run_id))
    pending = out.split("waiting for approval (1)\n")[1]
    assert pending.startswith(f"  {call.call_id}  book_hotel  requested ")
    assert '    {\n      "city": "Rome",\n      "nights": 2\n    }\n' in pending

    by_path = agentor("show", str(FileStore(runs).path(run_id)))
    assert ages_out(by_path.stdout) == ages_out(out)  # a second later, "1s ago" may be "2s ago"


def test_show_json_holds_the_run_its_pending_calls_decisions_and_events(runs: Path) -> None:
    run_id = awaiting_run(runs)
    store = FileStore(runs)
    [call] = pending_calls(store.load(run_id))
    proc = agentor("show", run_id, "--dir", str(runs), "--json")
    doc = json.loads(proc.stdout)
    assert list(doc) == [
        "run",
        "ended_at",
        "final_output",
        "usage",
        "segments",
        "pending",
        "approvals",
        "events",
        "bad_lines",
        "output_type",
        "parsed_output",
        "fork",
        "tool_results",
    ]
    assert doc["fork"] is None
    assert list(doc["run"]) == LS_FIELDS and doc["run"]["pending"] == 1
    expected = {
        "call_id": call.call_id,
        "name": "book_hotel",
        "args": {"city": "Rome", "nights": 2},
        "turn": 1,
        "requested_at": call.requested_at,
        "deadline": None,
        "server": None,
        "reason": None,
        "started_at": None,
        "host": None,
        "pid": None,
    }
    assert doc["pending"] == [expected]
    assert doc["approvals"] == [{**expected, "decision": None}]
    assert doc["events"] == log_lines(store.path(run_id))

    agentor("approve", run_id, "--dir", str(runs), "--by", "alice", "--args", '{"city": "Oslo"}')
    decided = json.loads(agentor("show", run_id, "--dir", str(runs), "--json").stdout)
    assert decided["pending"] == []
    decision = decided["approvals"][0]["decision"]
    assert decision | {"at": None} == {
        "decision": "approved",
        "by": "alice",
        "note": None,
        "args": {"city": "Oslo"},
        "at": None,
        "result": None,
    }


def test_show_refuses_unknown_and_ambiguous_runs(runs: Path) -> None:
    for name in ("job-1", "job-2"):
        Travel(FileStore(runs), gate=False).agent.run(TRAVEL_PROMPT, run_id=name)
    assert refused(agentor("show", "nope", "--dir", str(runs))) == (
        f"agentor show: no run nope in {runs.resolve()}"
    )
    assert refused(agentor("show", "job", "--dir", str(runs))) == (
        "agentor show: 2 runs start with job: job-1, job-2; give more of the id"
    )


# -- approve and reject ---------------------------------------------------------------------------


def test_approve_and_reject_record_decisions_and_the_second_is_refused(runs: Path) -> None:
    run_id = awaiting_run(runs)
    store = FileStore(runs)
    [call] = pending_calls(store.load(run_id))

    proc = agentor(
        "approve", run_id, call.call_id, "--dir", str(runs), "--args", '{"city": "Milan"}',
        "--note", "cheaper", "--by", "alice",
    )  # fmt: skip

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f'approved {call.call_id} (book_hotel) of run {run_id} as alice, with {{"city": "Milan"}}',
        f"every call is decided: agentor resume {run_id} --agent SPEC continues the run",
    ]
    [decision] = [e for e in store.load(run_id) if e.type == APPROVAL]
    assert (decision.by, decision.note, decision.args) == ("alice", "cheaper", {"city": "Milan"})
    size = store.path(run_id).stat().st_size

    again = refused(agentor("reject", run_id, "--dir", str(runs), "--reason", "no", "--by", "bob"))
    assert again.startswith(
        f"agentor reject: call {call.call_id} (book_hotel) of run {run_id} was already approved "
        "by alice at "
    )
    assert again.endswith(" UTC (cheaper)")
    assert store.path(run_id).stat().st_size == size


def test_bad_decisions_are_refused_and_nothing_is_written(runs: Path) -> None:
    run_id = awaiting_run(runs)
    store = FileStore(runs)
    weather = next(e.call_id for e in store.load(run_id) if e.name == "get_weather")
    size = store.path(run_id).stat().st_size
    d = ("--dir", str(runs))

    assert "--args is not JSON" in refused(agentor("approve", run_id, *d, "--args", "{city"), 2)
    assert "--args must be a JSON object" in refused(
        agentor("approve", run_id, *d, "--args", "[1]"), 2
    )
    assert refused(agentor("approve", run_id, "nope", *d)).endswith(
        f"run {run_id} has no call nope"
    )
    assert refused(agentor("approve", run_id, weather, *d)).endswith("did not ask for approval")
    assert "--reason must say why" in refused(agentor("reject", run_id, *d, "--reason", " "), 2)
    assert store.path(run_id).stat().st_size == size


def test_a_decision_on_a_run_held_by_a_live_process_is_refused(runs: Path) -> None:
    run_id = awaiting_run(runs)
    with FileStore(runs).lock(run_id):
        line = refused(agentor("approve", run_id, "--dir", str(runs)))
    assert line == (
        f"agentor approve: run {run_id} is locked by process {os.getpid()}: it is being run or "
        "resumed there"
    )
    assert pending_calls(FileStore(runs).load(run_id)), "nothing was decided"


# -- resume, end to end (real processes, the real openai client) ----------------------------------


class Served:
    """FakeOpenAI on the approval kit's script; while `gate` is unset, a request that carries
    tool results waits for it (so a test can watch a resume's lines arrive)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.srv = FakeOpenAI(self.script).start()

    def script(self, request: dict[str, Any]) -> dict[str, Any]:
        if any(m.get("role") == "tool" for m in request.get("messages", [])):
            self.gate.wait(60)
        return approvalkit.script(request)


@pytest.fixture
def served():
    s = Served()
    yield s
    s.gate.set()
    s.srv.stop()


def start_in_a_child(served: Served, runs: Path, tool_log: Path) -> str:
    out = runs.parent / "start.json"
    cfg = {
        "dir": str(runs),
        "url": served.srv.url,
        "action": "start",
        "tool_log": str(tool_log),
        "out": str(out),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "tests.approvalkit", "child", json.dumps(cfg)],
        cwd=ROOT,
        env=crashkit.child_env(),
        timeout=60,
    )
    assert proc.returncode == 0
    outcome = json.loads(out.read_text())
    assert outcome["status"] == AWAITING_APPROVAL, outcome
    return outcome["run_id"]


@pytest.mark.parametrize("decision", ["approve", "edit", "reject"])
def test_a_decision_from_the_shell_and_a_resume_in_a_new_process(
    served: Served, runs: Path, decision: str
) -> None:
    tool_log = runs.parent / "tools.log"
    run_id = start_in_a_child(served, runs, tool_log)
    assert crashkit.tool_runs(tool_log) == {"get_weather Rome": 1}, "book_hotel waits"
    d = ("--dir", str(runs))
    if decision == "reject":
        decided = agentor("reject", run_id, *d, "--reason", "too dear", "--by", "bob")
    else:
        edit = ("--args", '{"city": "Milan"}') if decision == "edit" else ()
        decided = agentor("approve", run_id, *d, *edit, "--by", "alice")
    assert decided.returncode == 0, decided.stderr
    assert crashkit.tool_runs(tool_log) == {"get_weather Rome": 1}, "a decision runs nothing"

    served.gate.clear()  # the model's answer waits: the lines before it must arrive first
    env = {
        "OPENAI_BASE_URL": served.srv.url,
        "OPENAI_API_KEY": "sk-test",
        "TOOL_LOG": str(tool_log),
    }
    proc = subprocess.Popen(
        [str(SCRIPT), "resume", run_id, *d, "--agent", "tests/approvalkit.py:make_agent"],
        cwd=ROOT,
        env={**ENV, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ran = decision != "reject"  # an approved call's start is saved before it runs
    try:
        assert proc.stdout is not None
        first = [proc.stdout.readline() for _ in range(3 if ran else 2)]
        assert proc.poll() is None, "lines are printed as events are recorded, not at the end"
        served.gate.set()
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    lines = first + rest.splitlines(keepends=True)
    if ran:
        assert lines.pop(1).split()[1] == "tool_start"
    assert [line.split()[1] for line in lines[:5]] == [
        "run_start", "tool_result", "generation", "message", "run_end",
    ]  # fmt: skip
    hotel = {
        "approve": "book_hotel → Booked a room in Rome.",
        "edit": "book_hotel → Booked a room in Milan.",
        "reject": "book_hotel ✗ rejected by bob: too dear",
    }[decision]
    assert lines[1].split(None, 2)[2].strip() == hotel
    told = {
        "approve": "Booked a room in Rome.",
        "edit": "Booked a room in Milan.",
        "reject": "Error: rejected by bob: too dear",
    }[decision]
    answer = approvalkit.answer(told)
    assert lines[5:] == [f"run {run_id} is completed:\n", answer + "\n"]
    ran = crashkit.tool_runs(tool_log)
    assert (
        ran
        == {
            "approve": {"get_weather Rome": 1, "book_hotel Rome": 1},
            "edit": {"get_weather Rome": 1, "book_hotel Milan": 1},
            "reject": {"get_weather Rome": 1},
        }[decision]
    )


AGENTS_FILE = textwrap.dedent(
    """
    from agentor import Agentor
    from agentor import ModelError

    class Broken:
        name = "broken"

        async def generate(self, messages, tools, on_text=None):
            raise ModelError("the model is down")

    travel = Agentor("Travel Agent", model=Broken())
    other = Agentor("Other Agent", model=Broken())
    """
)


def test_resume_refusals_say_why_on_one_line(runs: Path, tmp_path: Path) -> None:
    run_id = awaiting_run(runs)
    cut(runs, run_id, 3)  # interrupted: a resume has work to do
    agents = tmp_path / "agents.py"
    agents.write_text(AGENTS_FILE)
    d = ("--dir", str(runs))

    line = refused(agentor("resume", run_id, *d, "--agent", f"{agents}:other"))
    assert line == (
        "agentor resume: this run was written by Travel Agent; --agent gives Other Agent (add "
        "--any-agent to resume it with that agent anyway)"
    )
    assert "no attribute 'nope'" in refused(
        agentor("resume", run_id, *d, "--agent", f"{agents}:nope"), 2
    )
    with FileStore(runs).lock(run_id):
        assert "is locked by process" in refused(
            agentor("resume", run_id, *d, "--agent", f"{agents}:travel")
        )
    failed = agentor("resume", run_id, *d, "--agent", f"{agents}:other", "--any-agent")
    assert failed.returncode == 1
    assert failed.stderr == f"agentor resume: run {run_id} ended failed: the model is down\n"
    assert [line.split()[1] for line in failed.stdout.splitlines()] == ["run_start", "run_end"]


# -- untrusted text -------------------------------------------------------------------------------


def test_escape_sequences_from_a_log_never_reach_the_terminal(runs: Path) -> None:
    hostile = "\x1b]52;c;aGk=\x07\x1b[2J\x1b[31mred"
    travel = Travel(FileStore(runs))
    travel.asks = [("book_hotel", {"city": hostile})]
    run_id = travel.agent.run(hostile).run_id
    d = ("--dir", str(runs))
    shown = "␛]52;c;aGk=␇␛[2J␛[31mred"  # the prompt and the tool's result, made visible
    outputs = [
        (agentor("ls", str(runs)), shown),
        (agentor("show", run_id, *d), shown),
        (
            agentor("approve", run_id, *d, "--by", "\x1b[2Jmallory", "--args", '{"city": "x"}'),
            "as ␛[2Jmallory",
        ),
        (agentor("show", run_id, *d), "by ␛[2Jmallory"),
    ]
    for proc, visible in outputs:
        assert proc.returncode == 0, proc.stderr
        assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
        assert visible in proc.stdout


def test_interrupting_a_resume_leaves_the_run_resumable(served: Served, runs: Path) -> None:
    tool_log = runs.parent / "tools.log"
    run_id = start_in_a_child(served, runs, tool_log)
    d = ("--dir", str(runs))
    assert agentor("approve", run_id, *d).returncode == 0
    served.gate.clear()  # the model's answer never comes while the resume runs
    env = {
        "OPENAI_BASE_URL": served.srv.url,
        "OPENAI_API_KEY": "sk-test",
        "TOOL_LOG": str(tool_log),
    }
    argv = [str(SCRIPT), "resume", run_id, *d, "--agent", "tests/approvalkit.py:make_agent"]
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**ENV, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert [line.split()[1] for line in lines[1:]] == ["tool_start", "tool_result"], lines
        # book_hotel ran and was recorded
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err == f"agentor resume: interrupted; run {run_id} is left resumable\n"

    served.gate.set()
    again = agentor("resume", run_id, *d, "--agent", "tests/approvalkit.py:make_agent", env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == approvalkit.answer("Booked a room in Rome.")
    assert crashkit.tool_runs(tool_log) == {"get_weather Rome": 1, "book_hotel Rome": 1}
