"""recall-sqlite against the shared storage conformance suite."""

from __future__ import annotations

from pathlib import Path

from recall_core.testing import StorageContract
from recall_sqlite import SQLiteSettings, make_storage


class TestSQLiteStorage(StorageContract):
    def make_storage(self, location: Path):
        return make_storage(f"sqlite:///{location / 'recall.db'}", SQLiteSettings())
