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


def pytest_collection_modifyitems(config, items) -> None:
    """TestSQLiteScopedFullText re-runs only the contract's full-text tests."""
    keep, drop = [], []
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is not None and cls.__name__ == "TestSQLiteScopedFullText" and "fulltext" not in item.name:
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
