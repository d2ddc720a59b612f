from __future__ import annotations

from pathlib import Path

import pytest_asyncio

from recall_sqlite import SQLiteSettings, SQLiteStorage, make_storage


@pytest_asyncio.fixture
async def db_path(tmp_path: Path) -> Path:
    return tmp_path / "recall.db"


@pytest_asyncio.fixture
async def storage(db_path: Path) -> SQLiteStorage:
    s = make_storage(f"sqlite:///{db_path}", SQLiteSettings())
    await s.open()
    yield s
    await s.close()
