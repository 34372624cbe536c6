"""`ExperimentControl`: what the experiments list and an experiment's pairs share, `x` and `r`
on the experiment they show (the highlighted one, or the one open): `x` stops it when it runs
in this app, `r` resumes it when it has pairs pending (`tui.controllers.experimenter`). Each
key is in the footer when it applies; pressed when it does not, its twin says why."""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import ModalScreen

from agentor.experiments.record import Definition
from tui.controllers.experimenter import RUNNING_HERE, STOPPING_HERE, Experimenter
from tui.text import experiment_notes
from tui.text.notices import Note

ACTIONS = ("stop_experiment", "cannot_stop", "resume_experiment", "cannot_resume")


class ExperimentControl(ModalScreen[None]):
    experimenter: Experimenter
    tell_note: Callable[[Note], None]

    def shown(self) -> tuple[Definition, int] | None:
        """The experiment the keys act on, and how many of its pairs are pending."""
        raise NotImplementedError

    def state(self) -> str | None:
        """The shown experiment's state here (`Experimenter.state_of`)."""
        shown = self.shown()
        return self.experimenter.state_of(shown[0].id) if shown is not None else None

    def state_changed(self) -> None:
        """The experimenter started, stopped or ended an experiment: the keys that apply."""
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in ACTIONS:
            return True
        shown = self.shown()
        if action in ("stop_experiment", "cannot_stop"):
            can = shown is not None and self.state() == RUNNING_HERE
            return can == (action == "stop_experiment")
        can = (
            shown is not None and shown[1] > 0 and self.state() not in (RUNNING_HERE, STOPPING_HERE)
        )
        return can == (action == "resume_experiment")

    def action_stop_experiment(self) -> None:
        shown = self.shown()
        if shown is not None:
            self.experimenter.stop(shown[0].id)
            self.state_changed()

    def action_cannot_stop(self) -> None:
        shown = self.shown()
        if shown is not None and self.state() != STOPPING_HERE:
            self.tell_note(experiment_notes.not_running_here(shown[0].id))

    def action_resume_experiment(self) -> None:
        shown = self.shown()
        if shown is None:
            return
        definition, pending = shown
        why = self.experimenter.resume_refusal(definition, pending)
        if why is not None:
            self.tell_note(experiment_notes.not_resumed(why))
            return
        self.experimenter.resume(definition)
        self.state_changed()

    def action_cannot_resume(self) -> None:
        shown = self.shown()
        if shown is None or self.state() == STOPPING_HERE:
            return
        why = self.experimenter.resume_refusal(*shown)
        self.tell_note(experiment_notes.not_resumed(why or "it runs here already"))
