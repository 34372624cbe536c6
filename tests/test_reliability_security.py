"""Hostile run ids, symlinks and special files in the runs directory, file modes, the API key."""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path

import pytest

from agentor import Agentor
from agentor.engine.events import RUN_START, Event
from agentor.engine.statuses import COMPLETED, FAILED
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from tests import crashkit
from tests.openai_server import FakeOpenAI

BAD_IDS = [
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "/tmp/agentor-evil",
    "a/b",
    "a\x00b",
    "\x00",
    ".",
    "..",
    "",
    "a" * 129,
    "run\u0430",  # Cyrillic 'а'
    "\u0430bc",
    "run\uff11\uff12",  # fullwidth digits
    "x.jsonl",
    "a\n",
    " a",
    "a b",
    "~",
    None,
    123,
    1.5,
    b"abc",
    ["x"],
    ("x",),
    Path("x"),
]


def _calls(store):
    """Every run-id-taking method of `store`, as callables of the run id."""
    ev = Event(RUN_START)

    def enter_lock(run_id):
        with store.lock(run_id):
            pass

    calls = {
        "append": lambda r: store.append(r, ev),
        "append_many": lambda r: store.append_many(r, [ev]),
        "load": store.load,
        "lock": enter_lock,
        "is_locked": store.is_locked,
    }
    for name in ("load_with_errors", "lock_holder", "path"):
        if hasattr(store, name):
            calls[name] = getattr(store, name)
    return calls


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.lstat().st_size) for p in [root, *root.rglob("*")])


@pytest.mark.parametrize("kind", ["file", "memory"])
def test_every_store_method_refuses_bad_run_ids_before_touching_the_disk(tmp_path, kind):
    runs = tmp_path / "runs"
    store = FileStore(runs) if kind == "file" else MemoryStore()
    store.append("good", Event(RUN_START))  # a run already exists (its encoder is cached)
    calls = _calls(store)
    assert len(calls) == (8 if kind == "file" else 6)
    before = _tree(tmp_path)
    for bad in BAD_IDS:
        for name, call in calls.items():
            with pytest.raises(ValueError, match="invalid run id"):
                call(bad)
                pytest.fail(f"{name}({bad!r}) was accepted")
    assert _tree(tmp_path) == before
    assert not Path("/tmp/agentor-evil").exists()
    assert not Path("/tmp/agentor-evil.jsonl").exists()


def test_longest_valid_run_id_is_accepted(tmp_path):
    store = FileStore(tmp_path)
    store.append("a" * 128, Event(RUN_START))
    assert store.list_runs() == ["a" * 128]


async def test_resume_refuses_a_bad_run_id(tmp_path):
    agent = Agentor("a", model=crashkit_model(), store=FileStore(tmp_path / "runs"))
    before = _tree(tmp_path)
    for bad in ["../x", "", "a\x00b", "run\u0430"]:
        with pytest.raises(ValueError):
            await agent.aresume(bad)
    assert _tree(tmp_path) == before


def crashkit_model():
    class Never:
        name = "never"

        async def generate(self, messages, tools, on_text=None):
            raise AssertionError("no model call expected")

    return Never()


def test_list_runs_skips_files_whose_names_are_not_run_ids(tmp_path):
    for name in ["ok.jsonl", "run\u0430.jsonl", "a b.jsonl", ".jsonl", "x.jsonl.torn", "y.txt"]:
        (tmp_path / name).write_text("{}\n")
    assert FileStore(tmp_path).list_runs() == ["ok"]


# -- symlinks and special files ---------------------------------------------------------------


def test_filestore_refuses_to_write_through_a_symlink(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    runs = tmp_path / "runs"
    store = FileStore(runs)
    (runs / "r.jsonl").symlink_to(target)
    with pytest.raises(OSError, match="symlink"):
        store.append("r", Event(RUN_START))
    with pytest.raises(OSError, match="symlink"):
        store.append_many("r", [Event(RUN_START)])
    with pytest.raises(OSError, match="symlink"), store.lock("r"):
        pass
    with pytest.raises(OSError, match="symlink"):
        store.load("r")
    assert store.is_locked("r") is False
    assert target.read_text() == "precious\n"


def test_a_symlink_planted_as_the_torn_file_is_not_written_through(tmp_path, caplog):
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    runs = tmp_path / "runs"
    store = FileStore(runs)
    store.append("r", Event(RUN_START))
    with open(store.path("r"), "ab") as f:
        f.write(b'{"type": "tool_res')  # a torn last line
    (runs / "r.jsonl.torn").symlink_to(target)
    store.append("r", Event("message", text="next"))
    assert target.read_text() == "precious\n"
    events, bad = store.load_with_errors("r")
    assert [e.type for e in events] == [RUN_START, "message"] and bad == []
    assert any("could not keep the torn line" in r.getMessage() for r in caplog.records)


def _repoint(link: Path, target: Path) -> None:
    """Make `link` a symlink to `target` in one step (as an attacker racing the store would)."""
    tmp = link.with_name(link.name + ".new")
    tmp.symlink_to(target)
    os.replace(tmp, link)


def test_a_symlinked_runs_directory_is_resolved_once_and_never_followed_again(tmp_path):
    real, elsewhere, link = tmp_path / "real", tmp_path / "elsewhere", tmp_path / "runs"
    real.mkdir()
    elsewhere.mkdir()
    link.symlink_to(real)
    store = FileStore(link)
    assert store.directory == real and store.path("r") == real / "r.jsonl"
    store.append("r", Event(RUN_START))

    _repoint(link, elsewhere)  # the link now leads somewhere else: the store does not follow
    with store.lock("r"):
        store.append("r", Event("message", text="held"))
    store.append("r", Event("run_end", status=COMPLETED))
    assert [e.type for e in FileStore(real).load("r")] == [RUN_START, "message", "run_end"]
    assert store.list_runs() == ["r"]
    assert list(elsewhere.iterdir()) == []


def test_a_runs_directory_swapped_for_a_symlink_is_refused_and_nothing_written_through_it(
    tmp_path, caplog
):
    runs, moved, attacker = tmp_path / "runs", tmp_path / "moved", tmp_path / "attacker"
    attacker.mkdir()
    store = FileStore(runs)
    store.append("r", Event(RUN_START))
    before = store.path("r").read_bytes()

    runs.rename(moved)
    runs.symlink_to(attacker)  # the directory the store made is now a symlink
    refused = "refusing to use .*runs: it is no longer a directory"
    with pytest.raises(OSError, match=refused):
        store.append("r", Event("message", text="next"))
    with pytest.raises(OSError, match=refused):
        store.append_many("new", [Event(RUN_START)])
    with pytest.raises(OSError, match=refused), store.lock("r"):
        pass
    with pytest.raises(OSError, match=refused):
        store.load("r")
    with pytest.raises(OSError, match=refused):
        store.list_runs()
    assert store.is_locked("r") is False and store.lock_holder("r") is None
    # A run on that store is refused when it takes the run.
    with pytest.raises(OSError, match=refused):
        Agentor("A", model=crashkit.scripted_model(), store=store).run("Hi?")
    assert list(attacker.iterdir()) == []
    assert (moved / "r.jsonl").read_bytes() == before


def test_a_runs_directory_deleted_and_made_again_is_used(tmp_path):
    runs = tmp_path / "runs"
    store = FileStore(runs)
    store.append("r", Event(RUN_START))
    (runs / "r.jsonl").unlink()
    runs.rmdir()
    runs.mkdir(mode=0o700)  # `rm -r runs && mkdir runs`: a real directory, the same place
    store.append("r", Event(RUN_START))
    assert [e.type for e in FileStore(runs).load("r")] == [RUN_START]


def _within(seconds: float, fn):
    """fn() run in a thread; fails (instead of hanging the suite) if it blocks."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "blocked"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_a_fifo_named_like_a_run_does_not_hang_the_store(tmp_path):
    store = FileStore(tmp_path)
    os.mkfifo(tmp_path / "f.jsonl")
    assert store.list_runs() == ["f"]
    with pytest.raises(OSError, match="not a regular file"):
        _within(5, lambda: store.load("f"))
    with pytest.raises(OSError, match="not a regular file"):
        _within(5, lambda: store.append("f", Event(RUN_START)))
    assert _within(5, lambda: store.is_locked("f")) is False


def test_a_directory_named_like_a_run_is_an_error_not_a_crash(tmp_path):
    store = FileStore(tmp_path)
    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(OSError):
        store.load("d")
    with pytest.raises(OSError):
        store.load_with_errors("d")
    with pytest.raises(OSError):
        store.append("d", Event(RUN_START))
    assert store.is_locked("d") is False


def test_skipped_lines_are_logged_without_their_content(tmp_path, caplog):
    """A hostile log must not put escape sequences into the warnings it causes."""
    store = FileStore(tmp_path)
    store.path("r").write_bytes(
        b'{"type": "run_start"}\n'
        b"\x1b]0;owned\x07\x1b[2J not json\n"
        b'["\\u001b[2J"]\n'
        b'{"type": 5, "x": "\x1b]52;c;ZWNobw==\x07"}\n'
        b"\x1b[31m torn"
    )
    with caplog.at_level(logging.WARNING, logger="agentor"):
        events = store.load("r")
    assert [e.type for e in events] == [RUN_START]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1 and "skipped 4 bad lines" in messages[0]  # one for the file
    assert not any("\x1b" in m or "\x07" in m for m in messages), messages


# -- privacy ------------------------------------------------------------------------------------


@pytest.fixture
def permissive_umask():
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


async def test_run_files_are_0600_and_the_directory_0700(tmp_path, permissive_umask):
    with FakeOpenAI(crashkit.script) as srv:
        runs = tmp_path / "deep" / "runs"
        agent = crashkit.build_agent("parallel", FileStore(runs), srv.url)
        result = await agent.arun(crashkit.WEATHER_PROMPT)
    assert result.status == COMPLETED
    assert stat.S_IMODE(runs.stat().st_mode) == 0o700
    path = FileStore(runs).path(result.run_id)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # The file a torn tail is moved to holds run content too.
    with open(path, "ab") as f:
        f.write(b'{"type": "tor')
    FileStore(runs).append(result.run_id, Event("message", text="x"))
    torn = path.with_name(path.name + ".torn")
    assert stat.S_IMODE(torn.stat().st_mode) == 0o600
    # A lock taken on a run that has no file yet creates it private as well.
    store = FileStore(runs)
    with store.lock("fresh"):
        assert stat.S_IMODE(store.path("fresh").stat().st_mode) == 0o600


KEY = "sk-proj-SECRETsecret0123456789abcdefXYZ"


def _leaks(text: str | bytes | None) -> bool:
    if text is None:
        return False
    if isinstance(text, bytes):
        return KEY.encode() in text or KEY[8:].encode() in text
    return KEY in text or KEY[8:] in text


def _records_text(records: list[logging.LogRecord]) -> list[str]:
    fmt = logging.Formatter()
    out = []
    for r in records:
        out.append(r.getMessage())
        if r.exc_info:
            out.append(fmt.formatException(r.exc_info))
        if r.exc_text:
            out.append(r.exc_text)
    return out


@pytest.mark.parametrize("source", ["env", "argument"])
@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
async def test_the_api_key_never_leaks_on_auth_failure(
    tmp_path, monkeypatch, caplog, capsys, source, streamed
):
    def deny(request):
        return {"status": 401, "message": f"Incorrect API key provided: {KEY}"}

    if source == "env":
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
    else:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    caplog.set_level(logging.DEBUG)
    runs = tmp_path / "runs"
    with FakeOpenAI(deny) as srv:
        agent = Agentor(
            "a",
            store=FileStore(runs),
            base_url=srv.url,
            api_key=KEY if source == "argument" else None,
            max_retries=0,
        )
        if streamed:
            events = [e async for e in agent.stream_chat("hello")]
            run_id = events[0].run_id
            end = events[-1]
            assert end.type == "run_end" and end.status == FAILED
            errors = [end.error]
        else:
            result = await agent.arun("hello")
            run_id = result.run_id
            assert result.status == FAILED
            errors = [result.error]
        assert srv.requests, "the request did reach the server"
    assert errors[0] and "401" in errors[0] and "***" in errors[0]
    assert not any(_leaks(e) for e in errors)
    assert not _leaks(repr(agent.model)) and not _leaks(repr(agent))
    for path in runs.iterdir():
        assert not _leaks(path.read_bytes()), path
    assert run_id in FileStore(runs).list_runs()
    texts = _records_text(caplog.records)
    assert texts, "the run logged something to check"
    assert not any(_leaks(t) for t in texts)
    out, err = capsys.readouterr()
    assert not _leaks(out) and not _leaks(err)


async def test_the_api_key_never_leaks_from_a_server_error(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)

    def boom(request):
        return {"status": 500, "message": f"upstream said: bad key {KEY} (and more)"}

    with FakeOpenAI(boom) as srv:
        agent = Agentor(
            "a", store=FileStore(tmp_path), base_url=srv.url, api_key=KEY, max_retries=0
        )
        result = await agent.arun("hello")
    assert result.status == FAILED and "500" in (result.error or "")
    assert not _leaks(result.error)
    assert not _leaks(FileStore(tmp_path).path(result.run_id).read_bytes())
    assert not any(_leaks(t) for t in _records_text(caplog.records))
