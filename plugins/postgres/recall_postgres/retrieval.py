"""Retrieval: keyword search (fulltext.py), dense vectors (mixed into PostgresStorage)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import asyncpg

from recall_core import ScoredId
from recall_core.contracts import VectorToRedo

from .fulltext import FullText
from .rows import IN_NAMESPACE, search_text
from .retry import in_transaction
from .vectors import OF_MODEL

if TYPE_CHECKING:
    from .vectors import ArrayIndex, PgVectorIndex

_MAX_TERMS = 64


def _clean_term(term: str) -> str:
    # Postgres text cannot hold NUL, and lone surrogates cannot be encoded: drop both.
    return term.replace("\x00", " ").encode("utf-8", "ignore").decode("utf-8")


class RetrievalMethods:
    pool: asyncpg.Pool
    vectors: PgVectorIndex | ArrayIndex | None
    fulltext: FullText

    # -- retrieval ------------------------------------------------------------------------
    async def search_fulltext(self, namespace: str, terms: Sequence[str], limit: int) -> list[ScoredId]:
        # Terms are bound parameters turned into lexemes by to_tsvector, and lexemes are
        # quoted into tsquery operands (fulltext.quote): no input can form query syntax.
        clean = [t for t in (_clean_term(search_text(str(t))) for t in terms) if t.strip()]
        clean = list(dict.fromkeys(clean))[:_MAX_TERMS]
        if not clean or limit < 1:
            return []
        return await self.fulltext.search(self.pool, namespace, clean, limit)

    async def search_near_duplicates(self, namespace: str, terms: Sequence[str],
                                     max_missing: int, limit: int) -> list[ScoredId]:
        """Candidates for the worker's near-duplicate check: ranked for all `terms`, among
        the rows holding one of the `max_missing + 1` rarest (see FullText.near_duplicates)."""
        clean = [t for t in (_clean_term(search_text(str(t))) for t in terms) if t.strip()]
        clean = list(dict.fromkeys(clean))[:_MAX_TERMS]
        if not clean or limit < 1:
            return []
        return await self.fulltext.near_duplicates(self.pool, namespace, clean, max_missing,
                                                   limit)

    async def search_vectors(self, namespace: str, vector: Sequence[float], limit: int,
                             model: str | None = None) -> list[ScoredId]:
        if limit < 1 or len(vector) == 0:
            return []
        return await self.vectors.search(self.pool, namespace, vector, limit, model)

    async def set_embeddings(self, namespace: str, items: Sequence[tuple[str, Sequence[float]]],
                             model: str | None = None) -> None:
        if not items:
            return
        params = []
        dims: set[int] = set()
        for mid, vec in sorted(items, key=lambda kv: kv[0]):
            emb = self.vectors.param(vec)
            if emb is not None:
                dims.add(len(emb))
            params.append((namespace, mid, emb, model))
        async def body(con: asyncpg.Connection) -> None:
            await con.executemany(
                "UPDATE memories SET embedding = $3, embedding_model = $4 "
                "WHERE namespace = $1 AND id = $2", params)
            await self._bump(con, [namespace])

        await in_transaction(self.pool, body)
        await self.vectors.ensure_indexes(self.pool, dims)

    async def get_embeddings(self, namespace: str, ids: Sequence[str],
                             model: str | None = None) -> dict[str, list[float]]:
        if not ids:
            return {}
        rows = await self.pool.fetch(
            f"SELECT id, embedding FROM memories WHERE id = ANY($2::text[]) AND {IN_NAMESPACE} "
            f"AND embedding IS NOT NULL AND {OF_MODEL.format(p=3)}", namespace, list(ids), model)
        return {r["id"]: list(r["embedding"]) for r in rows}

    async def memory_sources(self, namespace: str | None) -> list[dict[str, Any]]:
        rows = await self.pool.fetch(
            "SELECT CASE WHEN m.source_job_id IS NULL THEN NULL "
            "ELSE coalesce(o.payload->'result'->>'extractor', '') END AS x, "
            "o.payload->'result'->>'model' AS mo, "
            "o.payload->'result'->>'prompt_version' AS pv, count(*) AS n "
            "FROM memories m LEFT JOIN operations o ON o.id = m.source_job_id "
            "AND o.namespace = m.namespace WHERE m.valid_until IS NULL "
            "AND ($1::text IS NULL OR m.namespace = $1) GROUP BY x, mo, pv "
            "ORDER BY n DESC, x NULLS FIRST", namespace)
        return [{"extractor": r["x"], "model": r["mo"], "prompt_version": r["pv"],
                 "memories": int(r["n"])} for r in rows]

    async def embedding_models(self, namespace: str | None) -> dict[str | None, int]:
        rows = await self.pool.fetch(
            "SELECT embedding_model, count(*) AS n FROM memories WHERE embedding IS NOT NULL "
            "AND ($1::text IS NULL OR namespace = $1) GROUP BY embedding_model", namespace)
        return {r["embedding_model"]: int(r["n"]) for r in rows}

    async def other_model_vectors(self, namespace: str, model: str) -> int:
        return int(await self.pool.fetchval(
            "SELECT count(*) FROM memories WHERE namespace = $1 AND embedding IS NOT NULL "
            "AND valid_until IS NULL AND embedding_model <> $2", namespace, model))

    async def embeddings_to_redo(self, namespace: str | None, model: str, after: int,
                                 limit: int) -> list[VectorToRedo]:
        rows = await self.pool.fetch(
            "SELECT seq, namespace, id, text, session_id FROM memories WHERE seq > $1 "
            "AND embedding IS NOT NULL AND embedding_model IS DISTINCT FROM $2 "
            "AND ($3::text IS NULL OR namespace = $3) ORDER BY seq LIMIT $4",
            after, model, namespace, max(0, limit))
        return [VectorToRedo(r["seq"], r["namespace"], r["id"], r["text"], r["session_id"])
                for r in rows]

    async def ids_missing_embeddings(self, limit: int) -> list[tuple[str, str, str]]:
        rows = await self.pool.fetch(
            "SELECT namespace, id, text FROM memories WHERE valid_until IS NULL "
            "AND embedding IS NULL ORDER BY seq LIMIT $1", max(0, limit))
        return [(r["namespace"], r["id"], r["text"]) for r in rows]
