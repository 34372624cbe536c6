"""The directory backend's read side: a FileStore directory's runs as a `RunSource`
(`agentor.sources.directory.source.DirectorySource`), read from the logs' files (a quick read of
a log's head and tail, whole reads, tailing), kept between starts in a run index, watched with
watchfiles; one run's events for the timeline (`runlog.RunLog`); the store a resume writes to
(`telling`); and the backend's entry in the registry (`backend`, listed by `agentor.backends`)."""
