"""PostgresStore's parts: the schema and its migrations, the run summaries it keeps, the locks
that give a run to one process at a time, the change feed. `agentor.engine.pgstore` is the
public face; nothing here is imported by `import agentor`, and psycopg only by the modules
that talk to the server (`schema`, `locks`, `feed`, `store`).
"""
