"""recall-sqlite against the OAuth capability's conformance suite."""

from __future__ import annotations

from pathlib import Path

from recall_core.testing.oauth_contract import OAuthStorageContract
from recall_sqlite import SQLiteSettings, make_storage


class TestSQLiteOAuth(OAuthStorageContract):
    def make_storage(self, location: Path):
        return make_storage(f"sqlite:///{location / 'recall.db'}", SQLiteSettings())
