"""What a PostgreSQL error says about the database, for core's storage-fault report
(`Storage.classify_failure`), and the write /health probes with while one is reported."""

from __future__ import annotations

import asyncpg

# SQLSTATE -> kind. 53100 disk_full; 25006 read_only_sql_transaction (a standby, or
# default_transaction_read_only); class 08 connection exceptions; 57P01-57P03 the server
# shutting down, crashed or not yet accepting connections; 53300 too many connections.
BY_SQLSTATE = {"53100": "full", "25006": "read_only", "57P01": "unavailable",
               "57P02": "unavailable", "57P03": "unavailable", "53300": "unavailable"}

# Rewrites the newest schema_version row as it is: a new row version, WAL and a commit, so
# it fails exactly when a store would.
PROBE = ("UPDATE schema_version SET version = version "
         "WHERE version = (SELECT max(version) FROM schema_version)")


def classify(exc: BaseException) -> str | None:
    """"full", "read_only", "unavailable" or None (see Storage.classify_failure)."""
    for err in (exc, exc.__cause__, exc.__context__):
        if err is None:
            continue
        state = getattr(err, "sqlstate", None)
        if isinstance(err, asyncpg.PostgresError) and isinstance(state, str):
            if state in BY_SQLSTATE:
                return BY_SQLSTATE[state]
            return "unavailable" if state.startswith("08") else None
        # The server refused or dropped the connection. (Not a bare TimeoutError: core's own
        # time limits raise it too, and a slow query is not an unreachable database.)
        if isinstance(err, ConnectionError):
            return "unavailable"
        if isinstance(err, asyncpg.InterfaceError) and any(
                w in str(err).lower() for w in ("connection is closed", "pool is closed",
                                                "connection was closed")):
            return "unavailable"
    return None
