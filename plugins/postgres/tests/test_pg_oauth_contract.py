"""recall-postgres against the OAuth capability's conformance suite."""

from __future__ import annotations

import pytest_asyncio

from recall_core.testing.oauth_contract import OAuthStorageContract
from recall_postgres import PostgresSettings, make_postgres

from recall_testkit.postgres import Schemas


class TestPostgresOAuth(OAuthStorageContract):
    def make_storage(self, location: str):
        return make_postgres(location, PostgresSettings(pool_max=4))

    @pytest_asyncio.fixture
    async def storage_location(self, pg_scratch):
        schemas = Schemas(pg_scratch)
        yield await schemas.create()
        await schemas.drop_all()
