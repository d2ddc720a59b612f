"""In-memory vector indexes for cosine search without a vector extension.

A namespace's active vectors live in one L2-normalised float32 matrix (recall_core's
VectorIndex); a query is one matrix-vector product plus a partial sort, never a Python loop
over rows.

The matrix is kept fresh incrementally: triggers append the `seq` of every memory whose vector
or active state changes to `vector_events`, and before a search the index applies only the
events after its cursor (drop those rows, re-add the ones still active). So a store followed
by a search costs a few rows, not a reload, and writes by other processes are seen too. A full
load happens on first use, after the event log was pruned past the cursor, or when a
`RESET` event (delete_namespace) says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiosqlite

from recall_core.kit.vector_index import NamespaceLocks, VectorCache, VectorIndex, maybe_in_thread
from recall_core.kit.vector_loads import INLINE_ROWS, BackgroundLoads

from .connection import Database, chunks

#: `vector_events.memory_seq` meaning "forget everything of this namespace".
RESET = -1
#: The event log keeps this many recent events; an index further behind reloads.
KEEP_EVENTS = 100_000
#: Prune the log every this many write transactions of one storage instance.
PRUNE_EVERY = 1000
#: Vectors of one embedding model (parameters: model, model): those recorded with that
#: model id, and those stored before ids were recorded; every vector when the model is NULL.
OF_MODEL = "(? IS NULL OR embedding_model IS NULL OR embedding_model = ?)"


class VectorSearch:
    """Per-namespace indexes of one storage instance, refreshed from the event log."""

    def __init__(self, db: Database, max_namespaces: int, max_bytes: int = 0,
                 inline_rows: int = INLINE_ROWS):
        self.db = db
        self._cache = VectorCache(max_namespaces, max_bytes)
        self._locks = NamespaceLocks()
        #: A big namespace loads in the background; searches meanwhile get NotReady.
        self._loads = BackgroundLoads(self._cache, inline_rows)

    def loading(self) -> list[str]:
        return self._loads.loading()

    @property
    def cached_bytes(self) -> int:
        return self._cache.nbytes

    def forget(self, namespace: str) -> None:
        self._cache.drop(namespace)
        self._loads.forget(namespace)

    async def close(self) -> None:
        await self._loads.close()

    async def search(self, namespace: str, vector: Sequence[float], limit: int,
                     model: str | None = None) -> list[tuple[str, float]]:
        dim = len(vector)
        if dim == 0 or limit <= 0:
            return []
        async with self._locks(namespace):
            index = await self._fresh_index(namespace, dim, model)
            return await maybe_in_thread(len(index) * dim, index.search, vector, limit)

    async def _fresh_index(self, namespace: str, dim: int, model: str | None) -> VectorIndex:
        """The namespace's index of `model`'s vectors (and those without a model id; all
        when `model` is None) with every committed change applied."""
        index = self._cache.get(namespace, dim)
        if index is not None and getattr(index, "model", None) != model:
            index = None  # another model's index: rebuilt (a process embeds with one model)
        if index is not None:
            pruned = await self.db.fetch_one("SELECT upto FROM vector_events_pruned")
            if index.cursor < pruned[0]:
                index = None
        if index is not None:
            events = await self.db.fetch(
                "SELECT seq, memory_seq FROM vector_events WHERE namespace = ? AND seq > ? "
                "ORDER BY seq", (namespace, index.cursor))
            changed = {e[1] for e in events}
            if RESET in changed:
                index = None
            elif events:
                rows: list[Any] = []
                for part in chunks(sorted(changed)):
                    rows += await self.db.fetch(
                        "SELECT seq, id, embedding FROM memories WHERE namespace = ? "
                        f"AND valid_until IS NULL AND embedding IS NOT NULL AND {OF_MODEL} "
                        f"AND seq IN ({', '.join('?' * len(part))})",
                        (namespace, model, model, *part))
                index.remove(changed)
                index.add(rows)
                index.cursor = events[-1][0]
                self._cache.trim()  # it may have grown past the byte budget
        if index is None:
            (rows_now,) = await self.db.fetch_one(
                "SELECT coalesce(sum(n), 0) FROM active_counts WHERE namespace = ?",
                (namespace,))
            index = await self._loads.load(
                namespace, dim, rows_now, lambda: self._load(namespace, dim, model),
                self._locks(namespace))
        return index

    async def _load(self, namespace: str, dim: int, model: str | None) -> VectorIndex:
        """Every current vector of the namespace of width `dim` (and `model`), into the
        cache."""
        # Cursor first: rows written after it are loaded now and re-applied later, which
        # is harmless (remove then add); the other order could miss a change.
        cursor = (await self.db.fetch_one(
            "SELECT coalesce(max(seq), 0) FROM vector_events"))[0]
        rows = await self.db.fetch(
            "SELECT seq, id, embedding FROM memories WHERE namespace = ? "
            f"AND valid_until IS NULL AND embedding IS NOT NULL AND {OF_MODEL} "
            "AND length(embedding) = ?", (namespace, model, model, dim * 4))
        index = VectorIndex(dim, cursor)
        index.model = model  # type: ignore[attr-defined]
        await maybe_in_thread(len(rows) * dim, index.add, rows)
        self._cache.put(namespace, index)
        return index


async def prune_vector_events(db: aiosqlite.Connection) -> None:
    rows = await db.execute_fetchall("SELECT coalesce(max(seq), 0) FROM vector_events")
    upto = rows[0][0] - KEEP_EVENTS
    if upto > 0:
        await db.execute("DELETE FROM vector_events WHERE seq <= ?", (upto,))
        await db.execute("UPDATE vector_events_pruned SET upto = max(upto, ?) WHERE id = 1", (upto,))
