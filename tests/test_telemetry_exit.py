"""Tracing in process at exit: a script that exits right after `run()` still sends its spans
(the tracing thread's events included), and a collector that is down or never answers holds
the exit no longer than the bound docs/tracing.md gives (3 s). Real child processes, the real
OTLP exporter, the tests' OpenAI-compatible server and a local OTLP receiver."""

from __future__ import annotations

import re
import socket
import textwrap
import threading
from collections.abc import Iterator

import pytest

from agentor.telemetry.ids import trace_id_of
from agentor.telemetry.inprocess import EXIT_WAIT_S
from tests.conftest import Children
from tests.otlp_receiver import OTLPReceiver, otlp_receiver_fixture  # noqa: F401 (fixture)
from tests.phoenix_support import free_port

# One tool, one run, and the exit right after it. The first atexit hook is registered before
# agentor is imported, so it runs after agentor's own: it says how long that one held the exit.
SHORT_SCRIPT = textwrap.dedent(
    """
    import atexit, os, time
    ran = []
    atexit.register(lambda: print(f"held {time.monotonic() - ran[0]:.3f}", flush=True))

    from agentor import Agentor, function_tool

    @function_tool
    def get_weather(city: str) -> str:
        \"\"\"Get the current weather for a city.

        Args:
            city: The city to look up.
        \"\"\"
        return f"The weather in {city} is sunny and 22C."

    agent = Agentor(
        name="Weather Agent",
        model="gpt-4o-mini",
        tools=[get_weather],
        store=os.environ["RUNS_DIR"],
        tracing=True,
        max_retries=0,
    )
    run = agent.run("What is the weather in Oslo?")
    print(run.run_id, run.status, flush=True)
    ran.append(time.monotonic())
    """
)


def run_short_script(children: Children, endpoint: str) -> tuple[str, float]:
    """The script's run id and how long its exit was held, once it exited (status 0)."""
    proc = children.spawn(SHORT_SCRIPT, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    run_id, status = out.splitlines()[0].split()
    assert status == "completed", out
    held = re.search(r"^held (\S+)$", out, re.MULTILINE)
    assert held, out
    return run_id, float(held.group(1))


def test_a_script_that_exits_right_after_run_sends_every_span(
    children: Children, otlp_receiver: OTLPReceiver
) -> None:
    run_id, held = run_short_script(children, otlp_receiver.url)
    # Received before the process was gone: nothing was left to send after it.
    spans = otlp_receiver.of_trace(format(trace_id_of(run_id), "032x"))
    assert sorted(s.name for s in spans) == [
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "execute_tool get_weather",
        "invoke_agent Weather Agent",
    ]
    assert held <= EXIT_WAIT_S


@pytest.fixture
def silent_collector() -> Iterator[str]:
    """A collector that takes connections and never answers: its URL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in held:
        conn.close()


@pytest.mark.parametrize("collector", ["refusing", "silent"])
def test_a_collector_that_is_down_holds_the_exit_no_longer_than_the_bound(
    children: Children, silent_collector: str, collector: str
) -> None:
    # Refusing: nothing listens (the exporter retries for up to 10 s). Silent: it takes the
    # request and never answers (the exporter waits up to its timeout, 10 s).
    endpoint = f"http://127.0.0.1:{free_port()}" if collector == "refusing" else silent_collector
    _, held = run_short_script(children, endpoint)
    # The bound, and the hook's own return on a busy machine; without it, 10 s (the timeout).
    assert held <= EXIT_WAIT_S + 1.0
