"""The read side, textual-free: where runs come from (`source.RunSource`, the seam), the
directory and database sources (`opening.open_source` makes the one a DIR|DSN names), their
rows and how they read logs. Used by the TUI and by `agentor ls` / `show` (`listing`), so both
list the same rows with the same statuses (`agentor.engine.statuses.live_status`)."""
