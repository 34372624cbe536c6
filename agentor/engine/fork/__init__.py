"""Forks and replays: planning a fork, its marker, the recording a replay answers from,
and comparing two runs."""
