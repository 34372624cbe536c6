"""A fleet of workers finishing runs by themselves: `agentor worker`, and the runs
`Agentor.submit` records for it, not run (agentor.engine.submit).

    agentor.fleet.worker    `Worker`: find free runs, claim each, finish it, up to N at a time
    agentor.fleet.claims    the claim on a run, its `claim` / `release` events, giving up a
                            poison run
    agentor.fleet.finders   which runs are free, and waking the worker when that may have
                            changed
    agentor.fleet.stopping  stopping runs at the end of a turn (SIGTERM)

Nothing is imported here: the worker imports the agent.
"""
