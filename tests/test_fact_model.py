"""The model-based fact test (recall_core/testing/fact_model.py) on SQLite and real Postgres.
More examples: RECALL_FACT_MODEL_EXAMPLES=500 python -m pytest tests/test_fact_model.py"""

from __future__ import annotations

import os
import tempfile
import uuid

import pytest

from recall_core.testing.fact_model import fact_machine
from recall_core.testing.helpers import dump_tables
from recall_sqlite import make_storage

PG_URL = os.environ.get("RECALL_TEST_PG_URL")
pytestmark = pytest.mark.slow  # a stateful hypothesis run: 12 s on SQLite, 90 s on Postgres


async def _sqlite():
    path = tempfile.mkstemp(suffix=".db")[1]
    os.unlink(path)
    s = make_storage(f"sqlite:///{path}")
    await s.open()
    return s


async def _sqlite_close(storage) -> None:
    await storage.close()
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(storage.db.path + suffix)
        except FileNotFoundError:
            pass


async def _pg():
    # A schema of its own per example: the machine claims every queued job, so it must not
    # share a queue with other tests' leftovers.
    import asyncpg
    from recall_postgres import make_postgres

    schema = f"fm_{uuid.uuid4().hex[:10]}"
    con = await asyncpg.connect(PG_URL)
    try:
        await con.execute(f"CREATE SCHEMA {schema}")
    finally:
        await con.close()
    sep = "&" if "?" in PG_URL else "?"
    s = make_postgres(f"{PG_URL}{sep}search_path={schema}")
    s._fm_schema = schema
    await s.open()
    return s


async def _pg_close(storage) -> None:
    import asyncpg

    await storage.close()
    con = await asyncpg.connect(PG_URL)
    try:
        await con.execute(f"DROP SCHEMA {storage._fm_schema} CASCADE")
    finally:
        await con.close()


TestFactModelSQLite = fact_machine(_sqlite, dump_tables, _sqlite_close).TestCase

if PG_URL:
    TestFactModelPostgres = fact_machine(_pg, dump_tables, _pg_close).TestCase
else:
    @pytest.mark.skip(reason="RECALL_TEST_PG_URL not set: the Postgres half of the fact model")
    def test_fact_model_postgres():
        pass
