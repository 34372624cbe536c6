"""A fleet of workers finishing runs by themselves: `agentor worker` and `Agentor.submit`.

    submit.py    a new run recorded for the fleet, not run (`Agentor.submit`)
    worker.py    `Worker`: find free runs, claim each, finish it, up to N at a time
    claims.py    the claim on a run, its `claim` / `release` events, giving up a poison run
    finders.py   which runs are free, and waking the worker when that may have changed
    stopping.py  stopping runs at the end of a turn (SIGTERM)

Nothing is imported here: `agentor.agent` imports `fleet.submit`, and the worker imports the
agent.
"""
