from __future__ import annotations

import pytest

from recall_core import NotReady, Ranker
from recall_core.contracts import Capabilities
from recall_core.models import ScoredId
from recall_embeddings import DenseRanker


class FakeStorage:
    def __init__(self, vectors: bool = True):
        self.capabilities = Capabilities(vectors=vectors)
        self.calls: list[tuple[str, list[float], int]] = []
        self.models: list[str | None] = []

    async def search_vectors(self, namespace, vector, limit, model=None):
        self.calls.append((namespace, list(vector), limit))
        self.models.append(model)
        return [ScoredId(id="m1", score=0.9), ScoredId(id="m2", score=0.5)][:limit]


def test_is_a_ranker_with_an_embedder(offline_ranker):
    assert isinstance(offline_ranker, Ranker)
    assert offline_ranker.name == "dense"
    assert offline_ranker.embedder.ready


async def test_rank_embeds_query_with_prefix_and_searches_vectors(make_embedder):
    emb = make_embedder(query_prefix="query: ", quantize_queries=False)
    storage = FakeStorage()
    hits = await DenseRanker(emb).rank(storage, "ns1", "favourite drink", 2)
    assert [h.id for h in hits] == ["m1", "m2"]
    [(namespace, vector, limit)] = storage.calls
    assert (namespace, limit) == ("ns1", 2)
    # only the vectors this model made are compared with the query (issue 14)
    assert storage.models == [emb.model_id] and emb.model_id
    [want] = await make_embedder().embed(["query: favourite drink"])
    assert sum(a * b for a, b in zip(vector, want)) > 0.9999


async def test_storage_without_vectors_is_not_ready(offline_ranker):
    storage = FakeStorage(vectors=False)
    with pytest.raises(NotReady, match="dense: storage has no vector support"):
        await offline_ranker.rank(storage, "ns1", "anything", 5)
    assert storage.calls == []



async def test_nothing_to_rank(offline_ranker):
    storage = FakeStorage()
    assert await offline_ranker.rank(storage, "ns1", "q", 0) == []
    assert await offline_ranker.rank(storage, "ns1", "   ", 5) == []
    assert storage.calls == []
