"""Connections, transactions and the write lock.

A file database gets one writer connection, guarded by an asyncio lock so a transaction's
statements never interleave with another coroutine's, and `readers` read-only connections,
which in WAL mode never wait for the writer and only ever see committed data. Each aiosqlite
connection runs its statements one after another on its own thread, so with a single reader a
token check or a search queued behind the worker's 30 ms full-text query (bench/speed.py:
store ack p50 33 ms where the tool took 1 ms); a read goes to the reader with the fewest
statements in flight. `:memory:` has a single connection (a second would be a different
database), so reads take the lock too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from recall_core import ConfigError

from . import fts_terms, schema
from .schema import migrate
from .settings import SQLiteSettings

MEMORY = ":memory:"
SQLITE_HEADER = b"SQLite format 3\x00"
WHERE = "(--db, RECALL_DB_URL or db in recall.toml)"
log = logging.getLogger(__name__)


def check_path(path: str) -> None:
    """Refuse, with what/why/what-to-do, a database path that cannot work, before SQLite
    touches it: a directory, a missing or non-directory parent (a typo must not create a new
    empty database somewhere), a file that is not SQLite, an unwritable location."""
    if path == MEMORY:
        return
    p = Path(path).expanduser()
    if p.is_dir():
        raise ConfigError(f"Database path {p} is a directory, not a database file {WHERE}. "
                          f"Name a file in it, e.g. {p / 'recall.db'}.")
    parent = p.parent
    if not parent.exists():
        # Walk up to what does exist, to tell a typo from a path under a file.
        up = parent
        while not up.exists() and up != up.parent:
            up = up.parent
        if up.exists() and not up.is_dir():
            raise ConfigError(f"Database path {p} is under {up}, which is a file, not a "
                              f"directory {WHERE}. Fix the path.")
        raise ConfigError(f"Database path {p}: directory {parent} does not exist {WHERE}. "
                          f"Fix the path if it is a typo, or create the directory first "
                          f"(mkdir -p {parent}); Recall creates the database file, never its "
                          f"directories.")
    if not parent.is_dir():
        raise ConfigError(f"Database path {p} is under {parent}, which is a file, not a "
                          f"directory {WHERE}. Fix the path.")
    if p.exists():
        try:
            with p.open("rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise ConfigError(f"Database file {p} cannot be read: {exc.strerror} {WHERE}. "
                              f"Fix its permissions or choose another path.") from None
        if head and head != SQLITE_HEADER:
            raise ConfigError(f"Database file {p} exists but is not a SQLite database (it "
                              f"starts with {head[:8]!r}) {WHERE}. Point --db at a Recall "
                              f"database or at a new file name; Recall never overwrites it.")
        if not os.access(p, os.W_OK):
            raise ConfigError(f"Database file {p} is not writable by this user {WHERE}. "
                              f"Fix its permissions or choose another path.")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"Cannot create database file {p}: directory {parent} is not "
                          f"writable by this user {WHERE}. Choose a writable directory.")
    # A plain, thread-free probe: when aiosqlite's connect fails, its worker thread reports
    # to an event loop that may be closed by then (a second traceback at exit).
    try:
        probe = sqlite3.connect(p, timeout=5)
        try:
            probe.execute("PRAGMA schema_version").fetchone()
        finally:
            probe.close()
    except sqlite3.Error as exc:
        raise ConfigError(f"Cannot open database file {p}: {exc} {WHERE}. Check that it is a "
                          f"Recall database and that it and its directory are writable.") from None


def path_from_url(url: str) -> str:
    """`sqlite:////abs/path.db` -> `/abs/path.db`; `sqlite:///rel.db` -> `rel.db`;
    `sqlite:///:memory:` -> `:memory:`. A query string (`?x=y`) is ignored."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme != "sqlite":
        raise ValueError(f"Not a SQLite URL: {url!r}. Expected sqlite:////absolute/path/recall.db "
                         f"or a bare file path.")
    rest = rest.split("?", 1)[0]
    if not rest.startswith("/") or rest == "/":
        raise ValueError(f"SQLite URL {url!r} has no file path (or names a host). Expected "
                         f"sqlite:////absolute/path/recall.db, sqlite:///relative.db or "
                         f"sqlite:///:memory:.")
    return rest[1:]


class Database:
    def __init__(self, path: str, settings: SQLiteSettings):
        self.path = path
        self.settings = settings
        self.journal_mode = "?"
        self._writer: aiosqlite.Connection | None = None
        self._readers: list[aiosqlite.Connection] = []
        self._busy: list[int] = []  # statements in flight per reader
        self._lock = asyncio.Lock()

    @property
    def in_memory(self) -> bool:
        return self.path == MEMORY

    async def open(self) -> None:
        if self._writer is not None:
            return
        check_path(self.path)
        writer = await self._connect()
        try:
            try:
                mode = await writer.execute_fetchall("PRAGMA journal_mode = WAL")
            except sqlite3.DatabaseError as exc:
                raise ConfigError(f"Cannot use database file {self.path}: {exc} {WHERE}. "
                                  f"Check that it is a Recall database and that its directory "
                                  f"is writable.") from exc
            self.journal_mode = str(mode[0][0]).upper()
            await refuse_newer_schema(writer, self.path)
            try:
                await migrate(writer)
            except sqlite3.OperationalError as exc:
                if "fts5" in str(exc):
                    raise RuntimeError(
                        f"This Python's sqlite3 (SQLite {sqlite3.sqlite_version}) lacks the FTS5 "
                        f"extension recall-sqlite needs for full-text search. Use a Python built "
                        f"with FTS5 (python.org and most distributions are) or the Postgres "
                        f"backend (recall-postgres).") from exc
                raise
            if not self.in_memory:
                for _ in range(self.settings.readers):
                    reader = await self._connect()
                    self._readers.append(reader)
                    await reader.execute("PRAGMA query_only = ON")
                self._busy = [0] * len(self._readers)
        except BaseException:
            for reader in self._readers:
                await reader.close()
            self._readers, self._busy = [], []
            await writer.close()
            raise
        self._writer = writer

    async def _connect(self) -> aiosqlite.Connection:
        s = self.settings
        try:
            db = await aiosqlite.connect(self.path, isolation_level=None,
                                         timeout=s.busy_timeout_ms / 1000)
        except sqlite3.Error as exc:
            raise ConfigError(f"Cannot open database file {self.path}: {exc} {WHERE}. Check "
                              f"that the path and its directory are writable.") from exc
        try:
            # The full-text triggers call them (fts_terms.py): on every connection, before
            # the migrations that may rebuild the index.
            await db.create_function(fts_terms.FUNCTION, 2, fts_terms.index_text,
                                     deterministic=True)
            await db.create_function(fts_terms.COUNT, 1, fts_terms.count_tokens,
                                     deterministic=True)
            for pragma in (f"busy_timeout = {int(s.busy_timeout_ms)}",
                           f"synchronous = {s.synchronous}",
                           f"cache_size = {-int(s.cache_size_kib)}",
                           f"mmap_size = {int(s.mmap_size_mib) * 1024 * 1024}",
                           "temp_store = MEMORY",
                           # Deleted rows are overwritten on disk, not left in free pages:
                           # forgotten text must not be recoverable from the file.
                           "secure_delete = ON"):
                await db.execute(f"PRAGMA {pragma}")
            # FTS5's vocabulary of the full-text index, per connection (temp: nothing is
            # written to the file; it reads memories_fts only when queried): term counts
            # for the level search (fulltext.py `_counts`).
            await db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_rows "
                             "USING fts5vocab(main, memories_fts, 'row')")
            await db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instances "
                             "USING fts5vocab(main, memories_fts, 'instance')")
        except BaseException as exc:
            # An unclosed connection keeps its (non-daemon) thread alive: the process would
            # print the error and then hang instead of exiting.
            await db.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise ConfigError(f"Cannot use database file {self.path}: {exc} {WHERE}. "
                                  f"Check that it is a Recall database.") from exc
            raise
        return db

    async def close(self) -> None:
        readers, writer = self._readers, self._writer
        self._readers, self._busy, self._writer = [], [], None
        for reader in readers:
            await reader.close()
        if writer is not None:
            try:
                async with self._lock:
                    await writer.execute("PRAGMA optimize")
            except sqlite3.OperationalError as exc:
                # Only refreshes planner statistics; another process holding the write lock
                # past busy_timeout must not turn a clean shutdown into an error.
                log.warning("PRAGMA optimize skipped at close of %s: %s", self.path, exc)
            finally:
                await writer.close()

    def _conn(self) -> aiosqlite.Connection:
        if self._writer is None:
            raise RuntimeError("SQLite storage is not open: call `await storage.open()` first.")
        return self._writer

    # -- writes -------------------------------------------------------------------------------
    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """BEGIN IMMEDIATE ... COMMIT under the write lock; ROLLBACK on any exception.

        IMMEDIATE takes the database write lock up front, so a transaction that reads then
        writes (claim, complete) can't be overtaken by another process between the two."""
        db = self._conn()
        async with self._lock:
            try:
                await db.execute("BEGIN IMMEDIATE")
                yield db
                await asyncio.shield(db.execute("COMMIT"))
            except BaseException:
                # Shielded, and queued behind whatever this connection still has to run (a
                # cancelled caller's BEGIN may not have executed yet): the next lock holder
                # must never find a transaction left open.
                await asyncio.shield(_rollback(db))
                raise

    async def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One autocommit statement under the write lock; returns the changed row count."""
        db = self._conn()
        async with self._lock:
            cur = await db.execute(sql, params)
            return cur.rowcount

    # -- reads --------------------------------------------------------------------------------
    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row | tuple]:
        if self._readers:
            i = min(range(len(self._readers)), key=self._busy.__getitem__)
            self._busy[i] += 1
            try:
                return list(await self._readers[i].execute_fetchall(sql, params))
            finally:
                if i < len(self._busy):  # close() may have emptied the pool meanwhile
                    self._busy[i] -= 1
        db = self._conn()
        async with self._lock:
            return list(await db.execute_fetchall(sql, params))

    async def fetch_one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None


async def refuse_newer_schema(db: aiosqlite.Connection, path: str) -> None:
    """A file migrated by a newer Recall: this one would write rows that schema does not
    expect. Refuse, before migrating anything."""
    exists = await db.execute_fetchall(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
    if not exists:
        return
    rows = await db.execute_fetchall("SELECT max(version) FROM schema_version")
    have = rows[0][0] if rows and rows[0][0] is not None else 0
    latest = max(version for version, _ in schema.MIGRATIONS)
    if have > latest:
        raise ConfigError(
            f"Database file {path} has schema version {have}, newer than this recall-sqlite "
            f"understands ({latest}): it was written by a newer Recall. Downgrades are not "
            f"supported: upgrade Recall (update the checkout, then run the same `pip install` "
            f"of its folders again, e.g. `pip install -e . -e plugins/sqlite`), or restore the "
            f"backup taken before the upgrade.")


async def _rollback(db: aiosqlite.Connection) -> None:
    try:
        await db.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if "no transaction is active" not in str(exc):
            raise


def chunks(items: Sequence[Any], size: int = 500) -> Iterable[Sequence[Any]]:
    """Keep `IN (...)` lists under SQLite's bound-parameter limit (999 on old builds)."""
    for start in range(0, len(items), size):
        yield items[start:start + size]
