"""What the experiment form (`X`, on the runs selected in the list) asks, and its fields read
into an `ExperimentRequest`: the first thing wrong said in one line, in the form, before
anything is written. What needs the store or the agents to be checked (an instructions file
read, a scorer imported, a run that has not ended) is the controller's
(`tui.controllers.experimenter.Experimenter.refusal`)."""

from __future__ import annotations

from dataclasses import dataclass

from agentor.experiments.experiment import DEFAULT_CONCURRENCY, MATCHES, NOVELS
from agentor.literal import literal_line

# What the form's choices say.
MATCH_WORDS = {
    "strict": "strict: an equal call gets its recorded result",
    "fifo": "fifo: a tool's recorded results in order, whatever the arguments",
}
NOVEL_WORDS = {
    "error": "error: the model is told the tool is unavailable",
    "stop": "stop: the candidate ends diverged there",
    "run": "run: the call runs, with the app's agent",
}
RECORDED = "each run's recorded agent (none of its tools runs here)"


def selected_words(n: int) -> str:
    """What the run list's subtitle says of the runs selected for an experiment ("" none)."""
    return f"{n} selected (X: experiment)" if n else ""


@dataclass(frozen=True)
class FormValues:
    """The form's fields as typed (`agent`: the app's agent's name when chosen; None: each
    run's recorded agent)."""

    runs: tuple[str, ...]
    agent: str | None = None
    model: str = ""
    instructions_file: str = ""
    match: str = "strict"
    novel: str = "error"
    scorers: str = ""
    concurrency: str = str(DEFAULT_CONCURRENCY)
    name: str = ""


@dataclass(frozen=True)
class ExperimentRequest:
    """An experiment as the form asks for it: the baselines, who replays them (`agent`: the
    app's agent's name; None: each run's recorded agent), the one change and how it runs."""

    runs: tuple[str, ...]
    agent: str | None
    model: str | None
    instructions_file: str | None
    match: str
    novel: str
    scorers: tuple[str, ...]
    concurrency: int
    name: str | None


def read_form(values: FormValues) -> ExperimentRequest | str:
    """The request the form's fields make, or what is wrong with them (one line)."""
    model = values.model.strip() or None
    if model is None and values.agent is None:
        return "✗ give a model: each run's recorded agent asks it (at OPENAI_BASE_URL)"
    if values.match not in MATCHES:
        return f"✗ match is one of {', '.join(MATCHES)}"
    if values.novel not in NOVELS:
        return f"✗ novel calls: one of {', '.join(NOVELS)}"
    if values.novel == "run" and values.agent is None:
        return "✗ novel calls run only with the app's agent (agentor-tui --agent): error or stop"
    concurrency = values.concurrency.strip() or str(DEFAULT_CONCURRENCY)
    if not concurrency.isdigit() or int(concurrency) < 1:
        return f"✗ concurrency is a whole number, 1 or more, not {literal_line(concurrency, 20)!r}"
    scorers = tuple(s.strip() for s in values.scorers.split(",") if s.strip())
    if len(set(scorers)) != len(scorers):
        return "✗ a scorer is given twice"
    if not values.runs:
        return "✗ no runs selected: space selects runs in the list"
    return ExperimentRequest(
        runs=values.runs,
        agent=values.agent,
        model=model,
        instructions_file=values.instructions_file.strip() or None,
        match=values.match,
        novel=values.novel,
        scorers=scorers,
        concurrency=int(concurrency),
        name=values.name.strip() or None,
    )
