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
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from .schema import migrate
from .settings import SQLiteSettings

MEMORY = ":memory:"
log = logging.getLogger(__name__)


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
        if not self.in_memory:
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        writer = await self._connect()
        try:
            mode = await writer.execute_fetchall("PRAGMA journal_mode = WAL")
            self.journal_mode = str(mode[0][0]).upper()
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
        db = await aiosqlite.connect(self.path, isolation_level=None,
                                     timeout=s.busy_timeout_ms / 1000)
        for pragma in (f"busy_timeout = {int(s.busy_timeout_ms)}",
                       f"synchronous = {s.synchronous}",
                       f"cache_size = {-int(s.cache_size_kib)}",
                       f"mmap_size = {int(s.mmap_size_mib) * 1024 * 1024}",
                       "temp_store = MEMORY"):
            await db.execute(f"PRAGMA {pragma}")
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
