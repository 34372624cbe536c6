"""PostgresStore's parts: the schema and its migrations (`schema`), the SQL (`queries`), the
run summaries it keeps (`rows`), the locks that give a run to one process at a time (`locks`),
the change feed (`feed`), what lists and workers read (`listings`), the store (`store`).
`agentor.engine.store.postgres` is the public face. Nothing here is imported by `import agentor`;
psycopg is imported by `connections`, `locks`, `feed` and `store` only.
"""
