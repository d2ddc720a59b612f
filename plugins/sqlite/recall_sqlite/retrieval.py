"""The native indexes the rankers use: FTS5 full text and the in-process vector index, and
the embedding-model bookkeeping (`recall reindex`, `recall status`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recall_core import ScoredId
from recall_core.contracts import VectorToRedo

from .codec import by_ids, pack_vector, unpack_vector
from .connection import chunks
from .vectors import OF_MODEL


class RetrievalMethods:
    async def search_fulltext(self, namespace: str, terms: Sequence[str], limit: int) -> list[ScoredId]:
        return await self._fulltext.search(namespace, terms, limit)

    async def search_near_duplicates(self, namespace: str, terms: Sequence[str],
                                     max_missing: int, limit: int) -> list[ScoredId]:
        return await self._fulltext.near_duplicates(namespace, terms, max_missing, limit)

    async def search_vectors(self, namespace: str, vector: Sequence[float], limit: int,
                             model: str | None = None) -> list[ScoredId]:
        return [ScoredId(id=i, score=s)
                for i, s in await self._vectors.search(namespace, vector, limit, model)]

    async def set_embeddings(self, namespace: str, items: Sequence[tuple[str, Sequence[float]]],
                             model: str | None = None) -> None:
        if not items:
            return
        async with self.db.transaction() as db:
            cur = await db.executemany(
                "UPDATE memories SET embedding = ?, embedding_model = ? "
                "WHERE namespace = ? AND id = ?",
                [(pack_vector(vec), model, namespace, mid) for mid, vec in items])
            if cur.rowcount:
                await self._changed(db, [namespace])

    async def get_embeddings(self, namespace: str, ids: Sequence[str],
                             model: str | None = None) -> dict[str, list[float]]:
        # The model parameters go between namespace and ids: by_ids puts `condition` first.
        out: dict[str, list[float]] = {}
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.fetch(
                by_ids("id, embedding", f"embedding IS NOT NULL AND {OF_MODEL}", len(part)),
                (namespace, model, model, *part))
            out.update((r[0], unpack_vector(r[1])) for r in rows)
        return out

    async def memory_sources(self, namespace: str | None) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT CASE WHEN m.source_job_id IS NULL THEN NULL "
            "ELSE coalesce(json_extract(o.payload, '$.result.extractor'), '') END AS x, "
            "json_extract(o.payload, '$.result.model') AS mo, "
            "json_extract(o.payload, '$.result.prompt_version') AS pv, count(*) AS n "
            "FROM memories m LEFT JOIN operations o ON o.id = m.source_job_id "
            "AND o.namespace = m.namespace WHERE m.valid_until IS NULL "
            "AND (? IS NULL OR m.namespace = ?) GROUP BY x, mo, pv ORDER BY n DESC, x",
            (namespace, namespace))
        return [{"extractor": r[0], "model": r[1], "prompt_version": r[2], "memories": int(r[3])}
                for r in rows]

    async def embedding_models(self, namespace: str | None) -> dict[str | None, int]:
        rows = await self.db.fetch(
            "SELECT embedding_model, count(*) FROM memories WHERE embedding IS NOT NULL "
            "AND (? IS NULL OR namespace = ?) GROUP BY embedding_model", (namespace, namespace))
        return {r[0]: int(r[1]) for r in rows}

    async def other_model_vectors(self, namespace: str, model: str) -> int:
        # Two ranges of the (namespace, embedding_model) index rather than a scan of it.
        row = await self.db.fetch_one(
            "SELECT count(*) FROM memories WHERE namespace = ? AND embedding IS NOT NULL "
            "AND valid_until IS NULL AND (embedding_model < ? OR embedding_model > ?)",
            (namespace, model, model))
        return int(row[0])

    async def embeddings_to_redo(self, namespace: str | None, model: str, after: int,
                                 limit: int) -> list[VectorToRedo]:
        # A walk of the rowid from `after`: a whole run reads the table once.
        rows = await self.db.fetch(
            "SELECT seq, namespace, id, text, session_id FROM memories WHERE seq > ? "
            "AND embedding IS NOT NULL AND (embedding_model IS NULL OR embedding_model != ?) "
            "AND (? IS NULL OR namespace = ?) ORDER BY seq LIMIT ?",
            (after, model, namespace, namespace, max(0, limit)))
        return [VectorToRedo(*r) for r in rows]

    async def ids_missing_embeddings(self, limit: int) -> list[tuple[str, str, str]]:
        rows = await self.db.fetch(
            "SELECT namespace, id, text FROM memories "
            "WHERE valid_until IS NULL AND embedding IS NULL ORDER BY seq LIMIT ?",
            (max(0, limit),))
        return [(r[0], r[1], r[2]) for r in rows]
