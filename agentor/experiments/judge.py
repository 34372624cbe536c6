"""`judge`: a scorer that asks a model whether the candidate's answer is as good as its
baseline's, by a rubric; a pair verdict (False: the candidate regressed).

The judge's question is asked through whatever asks models for the experiment's agent (the
openai client), as a run of the store of its own: its run id is made from the candidate's and
the question, so an experiment that goes on after a crash finds the answer recorded and does
not ask twice (`Agentor.run(run_id=)` returns a finished run without a model call). The model
answers PASS or FAIL on its first line; anything else is the scorer's error, recorded on the
pair.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Protocol

from agentor.engine.events import RUN_START
from agentor.result import RunResult

JUDGE = "judge"
DEFAULT_RUBRIC = (
    "You compare two answers to the same task: a reference answer, from a run that was "
    "accepted, and a candidate answer. The candidate passes when it is as correct, complete "
    "and useful as the reference (other wording is fine); it fails when it is wrong, misses "
    "something the reference has, or does not answer the task."
)
_VERDICT = re.compile(r"\b(PASS|FAIL)\b")


class Asker(Protocol):
    """Asks the judge's model one question as a run of the store named `run_id`; returns
    the answer's text (the caller, which can make agents, gives this)."""

    def __call__(self, model: str | None, rubric: str, prompt: str, run_id: str) -> str: ...


@dataclass(frozen=True)
class Judge:
    """The `judge` scorer: `model` (None: the experiment's candidate model) asked with
    `rubric`. `spec` is how it is named in the experiment's record: `judge` or
    `judge:MODEL`."""

    model: str | None = None
    rubric: str = DEFAULT_RUBRIC
    asker: Asker | None = None

    @property
    def spec(self) -> str:
        return JUDGE if self.model is None else f"{JUDGE}:{self.model}"

    def bound(self, asker: Asker) -> Judge:
        return Judge(self.model, self.rubric, asker)

    def __call__(self, baseline: RunResult, candidate: RunResult) -> bool:
        if self.asker is None:
            raise RuntimeError("this judge has no model to ask: give it to an experiment")
        prompt = question(baseline, candidate)
        digest = hashlib.sha256(
            f"{candidate.run_id}\0{self.spec}\0{self.rubric}\0{prompt}".encode()
        ).hexdigest()
        answer = self.asker(self.model, self.rubric, prompt, "judge-" + digest[:32])
        found = _VERDICT.search(answer or "")
        if found is None:
            raise ValueError(f"the judge answered neither PASS nor FAIL: {answer!r:.120}")
        return found.group(1) == "PASS"


def judge_of(spec: str) -> Judge | None:
    """The judge a scorer spec names (`judge`, `judge:MODEL`), or None."""
    name, sep, model = spec.partition(":")
    if name != JUDGE:
        return None
    return Judge(model or None) if sep else Judge()


def question(baseline: RunResult, candidate: RunResult) -> str:
    """What the judge is asked: the task (the baseline's user messages), both answers."""
    return (
        f"Task:\n{_task(baseline)}\n\n"
        f"Reference answer:\n{_answer(baseline)}\n\n"
        f"Candidate answer:\n{_answer(candidate)}\n\n"
        "Does the candidate answer pass? Reply with PASS or FAIL on the first line, then "
        "one line saying why."
    )


def _task(result: RunResult) -> str:
    start = next((e for e in result.events if e.type == RUN_START), None)
    messages = start.messages if start is not None and start.messages else []
    users = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    return "\n".join(users) or "(no user message recorded)"


def _answer(result: RunResult) -> str:
    if result.final_output is None:
        return f"(no answer: the run ended {result.status})"
    return str(result.final_output)
