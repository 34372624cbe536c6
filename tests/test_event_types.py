"""Each event type is declared once (agentor.engine.events.EVENT_TYPES: its fields, what it
means), and every view that shows events has an entry for it: a new type that is not given its
CLI line, its timeline row, colour and detail, its spans, its export section and its section of
the log format page fails here, naming what it lacks.
"""

from __future__ import annotations

import re
from dataclasses import fields

import agentor.engine.events as events
from agentor.cli.lines import LINES
from agentor.engine.events import EVENT_TYPES, LOGGED_TYPES, TRANSIENT_TYPES, Event
from agentor.ops.run_document import SECTIONS
from agentor.telemetry.spans import SPAN_PARTS
from tests.conftest import ROOT
from tui.text.event_views import EVENT_VIEWS

# Each view: where its table is, and the types it must hold. A live run's transient events are
# printed by the commands that follow a run; the other views read logs, which never hold them.
VIEWS = {
    "the CLI line (agentor.cli.lines.LINES)": (LINES, set(EVENT_TYPES)),
    "the spans (agentor.telemetry.spans.SPAN_PARTS)": (SPAN_PARTS, set(LOGGED_TYPES)),
    "the export's section (agentor.ops.run_document.SECTIONS)": (SECTIONS, set(LOGGED_TYPES)),
    "the timeline row, colour and detail (tui.text.event_views.EVENT_VIEWS)": (
        EVENT_VIEWS,
        set(LOGGED_TYPES),
    ),
}
HEADING = re.compile(r"^### `(\w+)`$", re.M)


def missing_entries() -> list[str]:
    """What each view lacks, or holds for a type that is not declared."""
    said = []
    for view, (table, types) in VIEWS.items():
        said += [f"{kind}: no entry in {view}" for kind in sorted(types - set(table))]
        said += [f"{kind}: in {view}, not a declared type" for kind in sorted(set(table) - types)]
    page = (ROOT / "docs" / "log-format.md").read_text()
    documented = set(HEADING.findall(page))
    undocumented = sorted(EVENT_TYPES.keys() - documented)
    said += [f"{kind}: no section in docs/log-format.md" for kind in undocumented]
    return said


def test_every_type_constant_of_the_schema_is_declared() -> None:
    constants = {
        value for name, value in vars(events).items() if name.isupper() and isinstance(value, str)
    }
    assert constants == set(EVENT_TYPES)
    assert all(kind == t.name for kind, t in EVENT_TYPES.items())
    assert set(LOGGED_TYPES) == set(EVENT_TYPES) - TRANSIENT_TYPES


def test_every_type_has_each_of_its_views_and_its_docs_section() -> None:
    assert not missing_entries(), "\n".join(missing_entries())


def test_the_fields_a_type_declares_are_the_events_own_and_each_is_some_types() -> None:
    own = {f.name for f in fields(Event)} - {"type", "ts", "extra"}
    for t in EVENT_TYPES.values():
        assert set(t.fields) <= own, (t.name, set(t.fields) - own)
        assert not set(t.extra) & own, (t.name, "an extra key named as an Event field")
        assert len(set(t.fields)) == len(t.fields), t.name
    declared = {f for t in EVENT_TYPES.values() for f in t.fields}
    assert own == declared, f"fields no type carries: {sorted(own - declared)}"
