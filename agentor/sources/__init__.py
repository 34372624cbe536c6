"""The read side, textual-free: where runs come from (`source.RunSource`, the seam), one package
per store backend (`directory`: a FileStore directory; `postgres`: a PostgreSQL schema), and
what every backend's source shares: rows (`runrow`), one run's lines indexed and decoded on
demand (`linelog`), lineage, gated calls, and the listings `agentor ls` / `show` print
(`listing`), so the TUI and the commands list the same rows with the same statuses
(`agentor.engine.statuses.live_status`). Which source a DIR|DSN names is the registry's
(`agentor.backends.open_source`)."""
