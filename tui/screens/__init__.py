"""The app's screens: `runs.RunsScreen`, the run list with the open run's timeline and detail,
which owns its panes, their handlers and the keys that act on them, and shows what the
controllers report. The dialogs it opens are modal screens under `tui.widgets`."""
