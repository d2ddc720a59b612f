"""recall-sqlite against the admin capability's conformance suite."""

from __future__ import annotations

from pathlib import Path

from recall_core.testing.admin_contract import AdminStorageContract
from recall_sqlite import SQLiteSettings, make_storage


class TestSQLiteAdmin(AdminStorageContract):
    def make_storage(self, location: Path):
        return make_storage(f"sqlite:///{location / 'recall.db'}", SQLiteSettings())
