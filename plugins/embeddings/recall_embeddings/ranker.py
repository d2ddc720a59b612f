"""The dense ranker: embed the query, ask storage for the nearest stored vectors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from recall_core import NotReady, Ranker
from recall_core import ScoredId
from recall_core.kit import ramp

from .embedder import Loader, PackagedEmbedder, SentenceTransformerEmbedder
from .settings import DenseSettings


class DenseRanker(Ranker):
    """A `recall_core.Ranker` with an `embedder`, so core also embeds memories at write time,
    and calibrated: a hit's cosine similarity is evidence of relevance."""

    name = "dense"
    calibrated = True

    def __init__(self, embedder: Any):
        self.embedder = embedder

    async def rank(self, storage: Any, namespace: str, query: str, limit: int) -> list[ScoredId]:
        # Checked before embedding: without vector support dense can never answer, and
        # saying so beats "warming up".
        if not storage.capabilities.vectors:
            raise NotReady("dense: storage has no vector support")
        if limit < 1 or not query.strip():
            return []
        vector = await self.embedder.embed_query(query)
        # Only this model's vectors: another model's (before `recall reindex`) are not
        # comparable with the query's, even when they have the same width.
        return await storage.search_vectors(namespace, vector, limit,
                                            model=self.embedder.model_id or None)

    async def rank_pool(self, query: str, memories: Sequence[Any],
                        vectors: Mapping[str, Sequence[float]], limit: int) -> list[ScoredId]:
        """Cosine similarity to the query over the given rows' vectors (an `as_of` search
        over the rows valid at a past time). Rows without a vector are left out."""
        if limit < 1 or not query.strip():
            return []
        query_vec = np.asarray(await self.embedder.embed_query(query), dtype=np.float32)
        ids = [m.id for m in memories
               if m.id in vectors and len(vectors[m.id]) == len(query_vec)]
        if not ids:
            return []
        mat = np.asarray([vectors[i] for i in ids], dtype=np.float32)
        norms = np.linalg.norm(mat, axis=1) * max(float(np.linalg.norm(query_vec)), 1e-12)
        sims = (mat @ query_vec) / np.where(norms == 0, 1.0, norms)
        order = np.argsort(-sims, kind="stable")[:limit]
        return [ScoredId(id=ids[i], score=float(sims[i])) for i in order]

    def evidence(self, score: float) -> float:
        """A hit's cosine similarity as 0..1 evidence of relevance (recall_core.search.relevance)."""
        lo, hi = self.embedder.similarity_scale
        return ramp(score, lo, hi)

    def status(self) -> dict[str, Any]:
        return self.embedder.status()


def make_dense(settings: DenseSettings | dict[str, Any] | None = None, *,
               loader: Loader | None = None) -> DenseRanker:
    """Factory given to `register_rankers`. Returns at once; the model loads behind it.
    A torch-free packaged engine unless `model` names a sentence-transformers model (or a
    test passes its own `loader`)."""
    if not isinstance(settings, DenseSettings):
        settings = DenseSettings.model_validate(settings or {})
    spec = settings.engine() if loader is None else None
    if spec is not None:
        return DenseRanker(PackagedEmbedder(settings, spec))
    return DenseRanker(SentenceTransformerEmbedder(settings, loader=loader))
