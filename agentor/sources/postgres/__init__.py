"""The PostgreSQL backend's read side: the runs of one schema as a `RunSource`
(`agentor.sources.postgres.source.PostgresSource`), read from the runs table and kept current by
the change feed; one run's events for the timeline (`runlog.StoredLog`); their cost; the store a
resume writes to (`telling`); and the backend's entry in the registry (`backend`, listed by
`agentor.backends`). The database driver is imported only when a source or a store is made."""
