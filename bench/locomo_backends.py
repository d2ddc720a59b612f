"""Where bench/locomo.py keeps its loaded conversations.

Each loaded shape (the verbatim import, the extraction path) is a *base*; each configuration
searches its own copy of a base, so access counts from one run never leak into the next.
SQLite: the base is a file, copied. Postgres: the base is a database, copied with CREATE
DATABASE ... TEMPLATE. Only databases this script created (marked with a comment) are ever
dropped: an existing database without the mark stops the run instead.
"""

from __future__ import annotations

import shutil
import tempfile
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path

#: Loads the conversations into the database at the given URL or path.
Loader = Callable[[str], Awaitable[object]]


class SqliteCopies:
    label = "sqlite"

    def __init__(self, cache: str | None):
        self.tmp = Path(tempfile.mkdtemp(prefix="locomo-"))
        #: With --cache DIR, each loaded base is kept as DIR/<base>.db and reused next time.
        #: Delete the directory after changing how memories are imported, extracted or embedded.
        self.cache = Path(cache) if cache else None
        self.reused: list[str] = []

    def _base(self, base: str) -> str:
        return str(self.tmp / f"{base}.db")

    async def load(self, base: str, loader: Loader) -> None:
        cached = self.cache / f"{base}.db" if self.cache else None
        if cached is not None and cached.exists():
            shutil.copy(cached, self._base(base))
            self.reused.append(base)
            return
        await loader(self._base(base))
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(self._base(base), cached)

    async def copy(self, base: str, name: str) -> str:
        db = str(self.tmp / f"{base}-{name}.db")
        shutil.copy(self._base(base), db)
        return db

    def describe(self) -> str:
        return self.label + (f" (reused from cache: {', '.join(self.reused)})" if self.reused else "")

    async def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


class PostgresCopies:
    MARK = "scratch database of recall bench/locomo.py"

    def __init__(self, url: str, keep: bool):
        self.url = url
        self.keep = keep
        self.parts = urllib.parse.urlsplit(url)
        self.name = urllib.parse.unquote(self.parts.path.lstrip("/"))
        if not self.name:
            raise SystemExit("--db-url needs a database name: postgresql://host:port/<db>")
        self.bases: list[str] = []
        self.copies: list[str] = []
        self.label = "postgres"
        self.reused: list[str] = []

    def url_for(self, database: str) -> str:
        return urllib.parse.urlunsplit(self.parts._replace(path="/" + urllib.parse.quote(database)))

    def _db(self, base: str) -> str:
        return f"{self.name}_{base}"

    async def _admin(self, *statements: str) -> None:
        import asyncpg

        con = await asyncpg.connect(self.url_for("postgres"))
        try:
            for sql in statements:
                await con.execute(sql)
        finally:
            await con.close()

    async def _state(self, db: str) -> str:
        """'absent', 'ours' (created by this script) or 'foreign'."""
        import asyncpg

        con = await asyncpg.connect(self.url_for("postgres"))
        try:
            row = await con.fetchrow(
                "SELECT shobj_description(oid, 'pg_database') AS mark FROM pg_database "
                "WHERE datname = $1", db)
        finally:
            await con.close()
        if row is None:
            return "absent"
        return "ours" if row["mark"] == self.MARK else "foreign"

    async def _create(self, db: str, template: str | None = None) -> None:
        state = await self._state(db)
        if state == "foreign":
            raise SystemExit(f"database {db!r} exists and was not created by this script; "
                             f"name a database that does not exist yet (it will be created)")
        await self._admin(
            *([f'DROP DATABASE "{db}" WITH (FORCE)'] if state == "ours" else []),
            f'CREATE DATABASE "{db}"' + (f' TEMPLATE "{template}"' if template else ""),
            f"COMMENT ON DATABASE \"{db}\" IS '{self.MARK}'")

    async def load(self, base: str, loader: Loader) -> None:
        import asyncpg

        db = self._db(base)
        self.bases.append(db)
        reuse = self.keep and await self._state(db) == "ours"
        if reuse:
            # Kept from an earlier --keep run: reused as it is. Drop --keep once after
            # changing how memories are imported, extracted or embedded.
            self.reused.append(base)
        else:
            await self._create(db)
            await loader(self.url_for(db))
        con = await asyncpg.connect(self.url_for(db))
        try:
            # Planner statistics, as autovacuum would gather them on a live server (it may be
            # off or not have run yet); TEMPLATE copies carry them along.
            await con.execute("ANALYZE")
            version = await con.fetchval(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            server = await con.fetchval("SHOW server_version")
            vec_type = await con.fetchval(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'")
        finally:
            await con.close()
        self.label = (f"postgres {server.split()[0]}, "
                      + (f"pgvector {version}" if vec_type == "vector" else "real[] fallback"))

    async def copy(self, base: str, name: str) -> str:
        db = f"{self._db(base)}_{name}"
        await self._create(db, template=self._db(base))
        self.copies.append(db)
        return self.url_for(db)

    def describe(self) -> str:
        return self.label + (f" (reused: {', '.join(self.reused)})" if self.reused else "")

    async def close(self) -> None:
        drop = list(dict.fromkeys(self.copies)) + ([] if self.keep else self.bases)
        await self._admin(*(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)' for db in drop))
