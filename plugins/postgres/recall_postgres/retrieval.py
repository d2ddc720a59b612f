"""Retrieval: keyword search (fulltext.py), dense vectors (mixed into PostgresStorage)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import asyncpg

from recall_core.models import ScoredId

from .fulltext import FullText
from .rows import IN_NAMESPACE, search_text
from .tx import in_transaction

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

    async def search_vectors(self, namespace: str, vector: Sequence[float], limit: int) -> list[ScoredId]:
        if limit < 1 or len(vector) == 0:
            return []
        return await self.vectors.search(self.pool, namespace, vector, limit)

    async def set_embeddings(self, namespace: str, items: Sequence[tuple[str, Sequence[float]]]) -> None:
        if not items:
            return
        params = []
        dims: set[int] = set()
        for mid, vec in sorted(items, key=lambda kv: kv[0]):
            emb = self.vectors.param(vec)
            if emb is not None:
                dims.add(len(emb))
            params.append((namespace, mid, emb))
        async def body(con: asyncpg.Connection) -> None:
            await con.executemany(
                "UPDATE memories SET embedding = $3 WHERE namespace = $1 AND id = $2", params)
            await self._bump(con, [namespace])

        await in_transaction(self.pool, body)
        await self.vectors.ensure_indexes(self.pool, dims)

    async def get_embeddings(self, namespace: str, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        rows = await self.pool.fetch(
            f"SELECT id, embedding FROM memories WHERE id = ANY($2::text[]) AND {IN_NAMESPACE} "
            "AND embedding IS NOT NULL", namespace, list(ids))
        return {r["id"]: list(r["embedding"]) for r in rows}

    async def ids_missing_embeddings(self, limit: int) -> list[tuple[str, str, str]]:
        rows = await self.pool.fetch(
            "SELECT namespace, id, text FROM memories WHERE valid_until IS NULL "
            "AND embedding IS NULL ORDER BY seq LIMIT $1", max(0, limit))
        return [(r["namespace"], r["id"], r["text"]) for r in rows]
