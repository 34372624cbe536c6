"""`tracing=`: upstream Agentor's switch for tracing a run, accepted with upstream's meaning.

On the agent (`Agentor(tracing=...)`, or upstream's `tracer=`): False or None, no tracing; True,
trace every run; a tracer object, trace every run with it. On a call (`run`, `arun`, `resume`,
`fork`, `chat`, ... `tracing=`): None keeps the agent's setting, False traces nothing for this
call, True traces it even when the agent does not, a tracer object traces this call with it
(never kept on the agent: opting one run in must not enrol every later one).

What tracing does is the OpenTelemetry export of runs (agentor/telemetry/); the run session
(agentor.session.run.RunSession) is where it joins a run's recorder.
"""

from __future__ import annotations

from typing import Any


def agent_tracing(tracing: Any, tracer: Any, enable_tracing: bool) -> Any:
    """The agent's tracing from `tracing=` and upstream's `tracer=` (a tracer given is on)."""
    if enable_tracing:
        raise ValueError(
            "enable_tracing=True sends runs to Celesto's hosted tracer, which agentor-tui does "
            "not offer: pass tracing=True (OpenTelemetry export) or tracer=..."
        )
    if tracer is not None and tracing not in (None, False, True):
        raise ValueError("give a tracer once: tracing=<tracer> or tracer=<tracer>, not both")
    if tracer is not None and tracing is not False:
        return tracer
    return tracing


def call_tracing(agent_setting: Any, call_setting: Any) -> Any:
    """The tracing of one call (upstream's rule, by identity: a tracer object is truthy)."""
    if call_setting is None:
        return agent_setting
    if call_setting is True and agent_setting not in (None, False, True):
        return agent_setting  # the agent's own tracer
    return call_setting
