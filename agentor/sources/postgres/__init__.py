"""The read side of a PostgreSQL store: the runs of one schema as a `RunSource`
(`agentor.sources.postgres.source.PostgresSource`), read from the runs table and kept current
by the change feed; one run's events for the timeline (`runlog.StoredLog`); and their cost. The
database driver is imported only when a source is made."""
