"""Built-in BM25 ranker, registered like any third-party ranker.

Uses the storage's native full-text index when it has one (FTS5, tsvector). A storage
without one still gets BM25: an in-process rank-bm25 index per namespace, cached and rebuilt
only when the namespace's version changes (i.e. on write).
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..hookspecs import hookimpl
from ..models import Memory, ScoredId
from ..contracts import Ranker, Storage
from ..kit.text import index_tokens, query_terms


class BM25Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # How many namespaces keep an in-process fallback index (only without native FTS).
    fallback_cache_size: int = Field(8, ge=1)


class _FallbackIndex:
    def __init__(self, version: int, ids: list[str], corpus: list[list[str]]):
        from rank_bm25 import BM25Plus

        self.version = version
        self.ids = ids
        self.bm25 = BM25Plus(corpus) if corpus else None
        # term -> documents containing it: BM25Plus gives every document a floor score, and
        # only documents that contain a query term are candidates.
        self.postings: dict[str, list[int]] = {}
        for i, doc in enumerate(corpus):
            for tok in set(doc):
                self.postings.setdefault(tok, []).append(i)

    def top(self, terms: list[str], limit: int) -> list[ScoredId]:
        if self.bm25 is None or not terms:
            return []
        import numpy as np

        hits = sorted({i for t in terms for i in self.postings.get(t, ())})
        if not hits:
            return []
        idx = np.asarray(hits)
        scores = np.asarray(self.bm25.get_batch_scores(terms, hits))
        scores_full = np.zeros(len(self.ids))
        scores_full[idx] = scores
        scores = scores_full
        order = idx[np.argsort(-scores[idx], kind="stable")][:limit]
        return [ScoredId(id=self.ids[i], score=float(scores[i])) for i in order]


#: Weight of the session context against the text in `rank_pool` (the SQLite full-text
#: index's CONTEXT_WEIGHT).
CONTEXT_WEIGHT = 0.4


@functools.lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    """A text's index tokens, cached: `as_of` searches tokenize the same rows again."""
    return tuple(index_tokens(text))


def _bm25plus(docs: Sequence[tuple[str, ...]], terms: Sequence[str]) -> dict[int, float]:
    """BM25Plus scores (rank_bm25's formula and defaults) of the documents holding a term,
    computed for the query terms only: building a full rank_bm25 index of every term of a
    few thousand rows per call cost ~0.4 s."""
    k1, b, delta = 1.5, 0.75, 1.0
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n if n else 0.0
    wanted = set(terms)
    found: list[tuple[int, Counter[str], int]] = []
    df: Counter[str] = Counter()
    for i, doc in enumerate(docs):
        hits = Counter(t for t in doc if t in wanted)
        if hits:
            found.append((i, hits, len(doc)))
            df.update(hits.keys())
    idf = {t: math.log((n + 1) / df[t]) for t in df}
    scores: dict[int, float] = {}
    for i, tf, length in found:
        norm = k1 * (1 - b + b * length / avgdl) if avgdl else k1
        scores[i] = sum(w * (delta + tf[t] * (k1 + 1) / (norm + tf[t])) for t, w in idf.items())
    return scores


def _rank_pool(memories: Sequence[Memory], terms: list[str], limit: int) -> list[ScoredId]:
    scores: dict[int, float] = {}
    for weight, docs in ((1.0, [_tokens(m.text) for m in memories]),
                         (CONTEXT_WEIGHT, [_tokens(m.context or "") for m in memories])):
        for i, score in _bm25plus(docs, terms).items():
            scores[i] = scores.get(i, 0.0) + weight * score
    order = sorted(scores, key=lambda i: (-scores[i], i))[:limit]  # ties: older first
    return [ScoredId(id=memories[i].id, score=scores[i]) for i in order]


class BM25Ranker(Ranker):
    name = "bm25"

    def __init__(self, settings: BM25Settings | None = None):
        self.settings = settings or BM25Settings()
        self._cache: OrderedDict[tuple[int, str], _FallbackIndex] = OrderedDict()
        self._lock = asyncio.Lock()

    async def rank(self, storage: Storage, namespace: str, query: str, limit: int) -> list[ScoredId]:
        terms = query_terms(query)
        if not terms:
            return []
        if storage.capabilities.fulltext:
            return await storage.search_fulltext(namespace, terms, limit)
        index = await self._fallback_index(storage, namespace)
        stemmed = list(dict.fromkeys(index_tokens(" ".join(terms)))) or terms
        return await asyncio.to_thread(index.top, stemmed, limit)

    async def rank_pool(self, query: str, memories: Sequence[Memory],
                        vectors: Mapping[str, Sequence[float]], limit: int) -> list[ScoredId]:
        """BM25 over the given rows only (an `as_of` search over the rows valid at a past
        time), built for this call: the text, plus the session context (`Memory.context`)
        at CONTEXT_WEIGHT like the native full-text indexes."""
        terms = query_terms(query)
        if not terms or not memories:
            return []
        stemmed = list(dict.fromkeys(index_tokens(" ".join(terms)))) or terms
        return await asyncio.to_thread(_rank_pool, memories, stemmed, limit)

    def forget_namespace(self, namespace: str) -> None:
        """Drop the namespace's cached index (an erase: no text of it stays in memory)."""
        for key in [k for k in self._cache if k[1] == namespace]:
            del self._cache[key]

    async def _fallback_index(self, storage: Storage, namespace: str) -> _FallbackIndex:
        key = (id(storage), namespace)
        version = await storage.namespace_version(namespace)
        cached = self._cache.get(key)
        if cached is not None and cached.version == version:
            self._cache.move_to_end(key)
            return cached
        async with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached.version == version:
                return cached
            ids: list[str] = []
            corpus: list[list[str]] = []
            async for m in storage.iter_memories(namespace):
                ids.append(m.id)
                corpus.append(index_tokens(m.text))
            index = await asyncio.to_thread(_FallbackIndex, version, ids, corpus)
            self._cache[key] = index
            while len(self._cache) > self.settings.fallback_cache_size:
                self._cache.popitem(last=False)
            return index


def make_bm25(settings: Any = None) -> BM25Ranker:
    return BM25Ranker(settings)


@hookimpl
def register_rankers(register):
    register("bm25", make_bm25, settings=BM25Settings, default_weight=1.0)
