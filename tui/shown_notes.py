"""`ShownNotes`: which of the app's notes are on screen. A few at once (`MAX_SHOWN`, the oldest
goes first), and a note takes the place of an older one of its kind (`Note.kind`): a decision's
note the one before it, a resume's end its start, a fork's end its start. Each goes after its
own timeout (`Note.timeout`, at most `MAX_TIMEOUT`, and `MAX_INFO_TIMEOUT` for one that only
informs): they are news, and the panes hold the state (statuses, the approvals pane, the line
under the timeline), so none has to stay; a warning or an error, which asks something of the
reader, stays longer than a note that something went as asked.

It knows Textual's `Notification`s only; the app shows and takes them down.
"""

from __future__ import annotations

from textual.notifications import Notification

from agentor.literal import literal_line
from tui.text.notices import Note

MAX_SHOWN = 3
DEFAULT_TIMEOUT = 5.0
MAX_TIMEOUT = 10.0
MAX_INFO_TIMEOUT = 5.0  # severity "information": done as asked, nothing to do


class ShownNotes:
    def __init__(self) -> None:
        self._kinds: dict[str, str] = {}  # a notification's identity -> its note's kind

    def notification(self, note: Note) -> Notification:
        """The note as Textual shows it: literally, for as long as it may stay."""
        longest = MAX_INFO_TIMEOUT if note.severity == "information" else MAX_TIMEOUT
        timeout = DEFAULT_TIMEOUT if note.timeout is None else min(note.timeout, longest)
        shown = Notification(
            literal_line(note.text),
            literal_line(note.title),
            note.severity,
            timeout,
            markup=False,
        )
        if note.kind is not None:
            self._kinds[shown.identity] = note.kind
        return shown

    def to_take_down(self, shown: list[Notification], kind: str | None) -> list[Notification]:
        """Of the notifications `shown` (oldest first), those a new note of `kind` replaces:
        any of its kind, then the oldest while there would be more than MAX_SHOWN."""
        live = {n.identity for n in shown}
        self._kinds = {i: k for i, k in self._kinds.items() if i in live}
        same = [n for n in shown if kind is not None and self._kinds.get(n.identity) == kind]
        rest = [n for n in shown if n.identity not in {s.identity for s in same}]
        return same + rest[: max(0, len(rest) - (MAX_SHOWN - 1))]
