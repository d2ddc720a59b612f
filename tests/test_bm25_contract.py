"""The built-in BM25 ranker against the RankerContract every ranker runs: on SQLite's FTS5
index, and on a storage without a native full-text index (its in-process fallback)."""

from __future__ import annotations

from dataclasses import replace

import pytest_asyncio

import recall_sqlite
from recall_core.builtin.bm25 import BM25Ranker
from recall_core.testing import RankerContract


async def opened(path):
    storage = recall_sqlite.make_storage(f"sqlite:///{path}")
    await storage.open()
    return storage


class TestBM25OnNativeFullText(RankerContract):
    def make_ranker(self):
        return BM25Ranker()

    @pytest_asyncio.fixture
    async def storage(self, tmp_path):
        storage = await opened(tmp_path / "r.db")
        yield storage
        await storage.close()


class TestBM25InProcessFallback(TestBM25OnNativeFullText):
    """The same storage declaring no full-text capability: BM25 keeps its own index."""

    @pytest_asyncio.fixture
    async def storage(self, tmp_path):
        storage = await opened(tmp_path / "r.db")
        storage.capabilities = replace(storage.capabilities, fulltext=False)
        yield storage
        await storage.close()
