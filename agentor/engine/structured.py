"""Structured output: `Agentor(output_type=Model)` asks for JSON matching a pydantic model and
gives back the parsed model.

The request carries the strict `response_format` the openai SDK's own `parse` sends (every
object closed and every property required: OpenAI's strict mode refuses anything else). The
log keeps the answer's raw text; `RunResult.final_output` is the model parsed from it,
whichever process finished the run.

Beyond upstream, an answer that does not validate does not end the run at once: it is recorded
as an `invalid_output` event (the raw text in `text`, pydantic's errors in `error`, and in
`messages` the correction the model is sent), and the model is asked again with that correction,
up to `retries` times. Everything needed to go on is in the log: a resume sends the recorded
correction (agentor.engine.history.follow_up_messages), and the retries left are counted from the
recorded events (`re_asks_left`), so a crash between the bad answer and the retry neither repeats
nor skips it. When they are used up the run ends `failed` with the validation error, and `run`
raises `OutputValidationError` (a `ValueError`, as upstream raises); resuming such a run gives it
`retries` more tries, each sent the error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from agentor.engine.events import INVALID_OUTPUT, RUN_END, Event
from agentor.engine.statuses import FAILED
from agentor.errors import OutputValidationError

# How much of a raw answer an error message quotes (the log keeps all of it).
QUOTE_LIMIT = 500


def refuse_open_maps(node: Any) -> None:
    """An open map (a dict field: an object whose `additionalProperties` is a schema) cannot
    be made strict: refused with TypeError when the agent is made rather than by the provider
    with a 400 in the middle of a run (upstream's rule and message)."""
    if isinstance(node, list):
        for item in node:
            refuse_open_maps(item)
    elif isinstance(node, dict):
        if node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
            raise TypeError(
                "output_type contains a dict/mapping field, which OpenAI strict structured "
                "output cannot express. Model the keys explicitly, or use a list of key/value "
                "objects."
            )
        for value in node.values():
            refuse_open_maps(value)


def response_format(output_type: Any) -> dict[str, Any]:
    """The request's `response_format` for `output_type`: exactly what the openai SDK sends
    for `chat.completions.parse(response_format=output_type)` (its own strict-schema helper:
    every object closed with every property required, `None` defaults dropped, a `$ref` with
    siblings inlined), so a schema OpenAI accepts from the SDK is accepted from an agent."""
    from openai.lib._parsing._completions import type_to_response_format_param

    if not (isinstance(output_type, type) and issubclass(output_type, BaseModel)):
        raise TypeError(f"output_type must be a pydantic BaseModel, got {output_type!r}.")
    refuse_open_maps(output_type.model_json_schema())
    made = type_to_response_format_param(output_type)
    assert isinstance(made, dict), "a pydantic model's format is a dict"
    return dict(made)


def check_retries(retries: int) -> int:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"output_retries must be a whole number, 0 or more; got {retries!r}")
    return retries


@dataclass(frozen=True)
class Invalid:
    """Why an answer does not validate: one line for the log and the run's error, and the
    message that asks the model again."""

    error: str
    correction: dict[str, Any]


def problems(exc: ValidationError) -> list[str]:
    """pydantic's errors, one per field: `answer: Input should be a valid integer (got 'x')`."""
    out = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err.get("loc", ())) or "the answer"
        line = f"{where}: {err.get('msg', 'invalid')}"
        if err.get("type") not in ("missing", "json_invalid") and "input" in err:
            line += f" (got {_quote(err['input'])})"
        out.append(line)
    return out


def _quote(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


@dataclass(frozen=True)
class OutputSpec:
    """An agent's structured output: the model type, its response_format, the retries."""

    output_type: type[BaseModel]
    retries: int

    @property
    def name(self) -> str:
        return self.output_type.__name__

    def recorded(self) -> dict[str, Any]:
        """What the run_start records of it (`output`)."""
        return {"type": self.name, "retries": self.retries}

    def check(self, text: str) -> Invalid | None:
        """None when `text` validates; else why not, and what to tell the model."""
        try:
            self.output_type.model_validate_json(text)
        except ValidationError as exc:
            found = problems(exc)
            error = f"the answer does not match {self.name}: " + "; ".join(found)
            correction = (
                f"Your answer did not match the required {self.name} schema:\n"
                + "\n".join(f"- {p}" for p in found)
                + "\nAnswer again with only a JSON object that matches the schema."
            )
            return Invalid(error, {"role": "user", "content": correction})
        return None

    def parse(self, text: str | None, run_id: str | None) -> BaseModel | None:
        """The parsed answer of a finished run (None for no text, as upstream); a recorded
        answer that does not match is an `OutputValidationError` saying so."""
        if not text:
            return None
        try:
            return self.output_type.model_validate_json(text)
        except ValidationError as exc:
            raise OutputValidationError(
                f"Model output did not match {self.name}: {exc}\nRaw output: {text[:QUOTE_LIMIT]}",
                run_id,
                text,
            ) from None


def invalid_output_event(turn: int, text: str, invalid: Invalid) -> Event:
    return Event(
        INVALID_OUTPUT, turn=turn, text=text, error=invalid.error, messages=[invalid.correction]
    )


def re_asks_left(events: Sequence[Event], retries: int) -> bool:
    """Whether the invalid answer just recorded (the last `invalid_output` of `events`) may be
    asked again. Counted from the log: the invalid answers since the run's last failed
    `run_end` (that one's own invalid answer included: a resume asks it again), so a resumed
    crashed run keeps the count and a resumed failed run gets `retries` more tries."""
    counted = 0
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if e.type == RUN_END and e.status == FAILED:
            if i > 0 and events[i - 1].type == INVALID_OUTPUT:
                counted += 1
            break
        if e.type == INVALID_OUTPUT:
            counted += 1
    return counted <= retries


def failed_on_output(events: Sequence[Event]) -> Event | None:
    """The `invalid_output` a run's last segment ended failed on, if it did."""
    if len(events) >= 2 and events[-1].type == RUN_END and events[-1].status == FAILED:
        before = events[-2]
        if before.type == INVALID_OUTPUT and events[-1].error == before.error:
            return before
    return None
