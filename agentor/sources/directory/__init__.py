"""The read side of a FileStore directory: its runs as a `RunSource`
(`agentor.sources.directory.source.DirectorySource`), read from the logs' files (a quick read of
a log's head and tail, whole reads, tailing), kept between starts in a run index, watched with
watchfiles; and one run's events for the timeline (`runlog.RunLog`)."""
