"""The team hub: this daemon as a runner of a PostgreSQL hub (docs/team.md).

Only a daemon whose global file names a `hub` imports this package (and
psycopg with it). `connect.py` reaches the database, `schema.py` holds the
versioned migrations; the runner's parts build on them.
"""
