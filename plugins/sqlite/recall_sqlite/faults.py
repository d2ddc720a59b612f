"""What a SQLite error says about the database, for core's storage-fault report
(`Storage.classify_failure`), and the write /health probes with while one is reported."""

from __future__ import annotations

import errno
import os
import sqlite3

# Primary result codes (https://sqlite.org/rescode.html); extended codes keep them in the
# low byte (SQLITE_READONLY_DBMOVED is 8 | 4 << 8).
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
KINDS = {SQLITE_FULL: "full", SQLITE_READONLY: "read_only", SQLITE_CANTOPEN: "unavailable",
         SQLITE_IOERR: "unavailable"}

# Rewrites the newest schema_version row as it is: a real page write and commit, so it
# fails exactly when a store would (full disk, read-only file or mount, file gone).
PROBE = ("UPDATE schema_version SET applied_at = applied_at "
         "WHERE version = (SELECT max(version) FROM schema_version)")


# Below this much free space the disk counts as still full: a one-page probe write can fit in
# the WAL's reused space while a store's few pages do not (seen on a full tmpfs).
MIN_FREE_BYTES = 1 << 20


def check_free_space(path: str) -> None:
    """Raise ENOSPC when the database's filesystem has less than MIN_FREE_BYTES free."""
    if path == ":memory:":
        return
    st = os.statvfs(os.path.dirname(os.path.abspath(path)))
    free = st.f_bavail * st.f_frsize
    if free < MIN_FREE_BYTES:
        raise OSError(errno.ENOSPC, f"only {free} bytes free on the database's filesystem "
                                    f"(at least {MIN_FREE_BYTES} needed)")


def classify(exc: BaseException) -> str | None:
    """"full", "read_only", "unavailable" or None (see Storage.classify_failure)."""
    for err in (exc, exc.__cause__, exc.__context__):
        if isinstance(err, OSError) and err.errno == errno.ENOSPC:
            return "full"
        if isinstance(err, sqlite3.Error):
            code = getattr(err, "sqlite_errorcode", None)
            if code is not None:
                return KINDS.get(code & 0xFF)
            # A driver without result codes: the messages SQLite gives these codes.
            text = str(err).lower()
            if "disk is full" in text:
                return "full"
            if "readonly" in text or "read-only" in text:
                return "read_only"
            if "unable to open" in text or "disk i/o error" in text:
                return "unavailable"
            return None
    return None
