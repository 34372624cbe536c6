"""Experiments: recorded runs replayed against a change (another model, agent or prompt),
each pair (baseline, candidate) measured and scored, the change summed up with paired
statistics (docs/experiments.md).

`measures` holds what one pair is measured by (status, output, tool trajectory, turns, tokens,
cost, latency); `scorers` what says a candidate got better or worse (built-ins and a user's
`module:function`); `summary` sums the pairs up; `stats` holds the paired statistics (a seeded
paired bootstrap of the mean delta, the exact McNemar test for boolean scores).
"""
