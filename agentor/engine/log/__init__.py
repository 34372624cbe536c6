"""A run log on disk: its line format, and the file under it."""
