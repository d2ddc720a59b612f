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

Namespaces of `ann_min_rows` rows or more are served by an approximate index instead
(recall_core.kit.ann_index: faiss IVF over int8 vectors, candidates re-scored exactly with
the stored float32 vectors read here by seq), saved per namespace in `index_dir` (beside the
database file by default), so a restart loads it and applies only the events after its
cursor. An erase deletes the namespace's files.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite
import numpy as np

from recall_core.contracts import NotReady
from recall_core.kit import ann_index
from recall_core.kit.ann_files import AnnFiles
from recall_core.kit.ann_index import AnnIndex
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
#: Rows streamed per query while an approximate index is built.
BUILD_CHUNK = 20_000
#: Namespaces of at least this many rows get the approximate index (bench/RESULTS.md,
#: "Approximate nearest neighbours": where the exact scan stops paying).
ANN_MIN_ROWS = 20_000

log = logging.getLogger("recall_sqlite")


class VectorSearch:
    """Per-namespace indexes of one storage instance, refreshed from the event log."""

    def __init__(self, db: Database, max_namespaces: int, max_bytes: int = 0,
                 inline_rows: int = INLINE_ROWS, ann_min_rows: int = ANN_MIN_ROWS,
                 index_dir: str | None = None):
        self.db = db
        self._cache = VectorCache(max_namespaces, max_bytes)
        self._locks = NamespaceLocks()
        #: A big namespace loads in the background; searches meanwhile get NotReady.
        self._loads = BackgroundLoads(self._cache, inline_rows)
        self.ann_min_rows = ann_min_rows
        path = db.path
        in_memory = not path or path == ":memory:" or path.startswith("file::memory:")
        # Beside the database file by default; an in-memory database gets a temporary one.
        self.files = AnnFiles(index_dir or (None if in_memory else path + ".vectors"))

    @property
    def index_dir(self) -> Path:
        return self.files.directory

    def loading(self) -> list[str]:
        return self._loads.loading()

    @property
    def cached_bytes(self) -> int:
        return self._cache.nbytes

    def forget(self, namespace: str) -> None:
        """Erase: the namespace's indexes leave memory and disk."""
        self._cache.drop(namespace)
        self._loads.forget(namespace)
        self.files.forget(namespace)

    async def close(self) -> None:
        await self._loads.close()
        await self.files.close()

    async def search(self, namespace: str, vector: Sequence[float], limit: int,
                     model: str | None = None) -> list[tuple[str, float]]:
        dim = len(vector)
        if dim == 0 or limit <= 0:
            return []
        self._loads.refuse_while_loading(namespace, dim)
        async with self._locks(namespace):
            index = await self._fresh_index(namespace, dim, model)
            if not isinstance(index, AnnIndex):
                return await maybe_in_thread(len(index) * dim, index.search, vector, limit)
            seqs = await asyncio.to_thread(index.candidates, vector, limit)
            self.files.after_search(namespace, index, lambda: self._rebuild(namespace, index))
        return await self._rescore(namespace, vector, seqs, limit, model)

    async def _rescore(self, namespace: str, vector: Sequence[float], seqs: np.ndarray,
                       limit: int, model: str | None) -> list[tuple[str, float]]:
        """Exact cosine of the candidates, from their stored vectors; only rows still
        active, of this namespace and model, count."""
        q = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if not len(seqs) or not np.isfinite(norm) or norm == 0.0:
            return []
        rows: list[Any] = []
        for part in chunks(sorted(int(s) for s in seqs)):
            rows += await self.db.fetch(
                "SELECT id, embedding FROM memories WHERE seq IN "
                f"({', '.join('?' * len(part))}) AND namespace = ? AND valid_until IS NULL "
                f"AND embedding IS NOT NULL AND {OF_MODEL} AND length(embedding) = ?",
                (*part, namespace, model, model, len(q) * 4))
        if not rows:
            return []
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
            len(rows), len(q))
        norms = np.linalg.norm(mat, axis=1)
        norms[norms == 0] = 1.0
        scores = (mat @ (q / norm)) / norms
        top = np.argsort(-scores, kind="stable")[:limit]
        return [(rows[i][0], float(scores[i])) for i in top]

    async def _fresh_index(self, namespace: str, dim: int, model: str | None) -> VectorIndex:
        """The namespace's index of `model`'s vectors (and those without a model id; all
        when `model` is None) with every committed change applied."""
        index = self._cache.get(namespace, dim)
        if index is not None and getattr(index, "model", None) != model:
            index = None  # another model's index: rebuilt (a process embeds with one model)
        if index is not None and getattr(index, "saving", False):
            return index  # changes wait in the log until the save ends (see _save_soon)
        if index is not None and not await self._catch_up(namespace, index, model):
            index = None
        if index is None:
            (rows_now,) = await self.db.fetch_one(
                "SELECT coalesce(sum(n), 0) FROM active_counts WHERE namespace = ?",
                (namespace,))
            if rows_now >= self.ann_min_rows:
                index = await self._loads.load(
                    namespace, dim, rows_now, lambda: self._load_ann(namespace, dim, model),
                    self._locks(namespace), ann_index.estimated_bytes(rows_now, dim))
            else:
                index = await self._loads.load(
                    namespace, dim, rows_now, lambda: self._load(namespace, dim, model),
                    self._locks(namespace))
        return index

    async def _load(self, namespace: str, dim: int, model: str | None) -> VectorIndex:
        """Every current vector of the namespace of width `dim` (and `model`), into the
        cache, streamed into a matrix sized once (peak memory near the final size)."""
        # Cursor first: rows written after it are loaded now and re-applied later, which
        # is harmless (remove then add); the other order could miss a change.
        cursor = (await self.db.fetch_one(
            "SELECT coalesce(max(seq), 0) FROM vector_events"))[0]
        (rows_now,) = await self.db.fetch_one(
            "SELECT coalesce(sum(n), 0) FROM active_counts WHERE namespace = ?", (namespace,))
        index = VectorIndex(dim, cursor)
        index.model = model  # type: ignore[attr-defined]
        index.reserve(rows_now + rows_now // 8)
        async for seqs, ids, block in self._stream(namespace, dim, model):
            await maybe_in_thread(len(seqs) * dim, index.add_matrix, seqs, ids, block)
        self._cache.put(namespace, index)
        return index

    async def _catch_up(self, namespace: str, index: Any, model: str | None) -> bool:
        """Apply the events after the index's cursor; False when it must reload instead
        (log pruned past its cursor, or a RESET)."""
        pruned = await self.db.fetch_one("SELECT upto FROM vector_events_pruned")
        if index.cursor < pruned[0]:
            return False
        events = await self.db.fetch(
            "SELECT seq, memory_seq FROM vector_events WHERE namespace = ? AND seq > ? "
            "ORDER BY seq", (namespace, index.cursor))
        changed = {e[1] for e in events}
        if RESET in changed:
            return False
        if events:
            rows: list[Any] = []
            for part in chunks(sorted(changed)):
                rows += await self.db.fetch(
                    "SELECT seq, id, embedding FROM memories WHERE namespace = ? "
                    f"AND valid_until IS NULL AND embedding IS NOT NULL AND {OF_MODEL} "
                    f"AND seq IN ({', '.join('?' * len(part))})",
                    (namespace, model, model, *part))
            await maybe_in_thread(len(rows) * index.dim, self._apply, index, changed, rows)
            index.cursor = events[-1][0]
            self._cache.trim()  # it may have grown past the byte budget
        return True

    @staticmethod
    def _apply(index: Any, changed: set[int], rows: list[Any]) -> None:
        index.remove(changed)
        index.add(rows)

    async def _load_ann(self, namespace: str, dim: int, model: str | None) -> AnnIndex:
        """The saved approximate index with the events after its cursor applied, or a new
        one built from the rows (streamed) and saved."""
        path = self.files.path(namespace, dim)
        index = await asyncio.to_thread(AnnIndex.open, path, dim, model)
        if index is not None:
            (last,) = await self.db.fetch_one("SELECT coalesce(max(seq), 0) FROM vector_events")
            if index.cursor > last or not await self._catch_up(namespace, index, model):
                # Log pruned past it, or a file from another database (restored backup).
                log.info("vector index %s is behind the event log or not this database's; "
                         "rebuilding", path)
                ann_index.remove_files(path)
                index = None
        if index is None:
            erased = self.files.generation(namespace)
            index = await self._build_ann(namespace, dim, model)
            if self.files.generation(namespace) != erased:
                raise NotReady("dense: this namespace was erased while its index was built")
            await self.files.save_now(namespace, index)
        self._cache.put(namespace, index)
        return index

    async def _build_ann(self, namespace: str, dim: int, model: str | None) -> AnnIndex:
        """`ann_index.build_streamed` over this namespace's rows; the cursor is read first."""
        cursor = (await self.db.fetch_one(
            "SELECT coalesce(max(seq), 0) FROM vector_events"))[0]  # first: see _load
        (rows_now,) = await self.db.fetch_one(
            "SELECT coalesce(sum(n), 0) FROM active_counts WHERE namespace = ?", (namespace,))
        return await ann_index.build_streamed(
            dim, cursor, model, rows_now, lambda: self._stream(namespace, dim, model))

    async def _stream(self, namespace: str, dim: int, model: str | None):
        """(seqs, ids, float32 block) of the namespace's current vectors, BUILD_CHUNK at a
        time."""
        after = -1
        while True:
            rows = await self.db.fetch(
                # `+namespace`: walk the rowid range (each chunk reads only its rows); on
                # the namespace index SQLite read and sorted the whole namespace per chunk.
                "SELECT seq, embedding, id FROM memories WHERE +namespace = ? AND seq > ? "
                f"AND valid_until IS NULL AND embedding IS NOT NULL AND {OF_MODEL} "
                "AND length(embedding) = ? ORDER BY seq LIMIT ?",
                (namespace, after, model, model, dim * 4, BUILD_CHUNK))
            if not rows:
                return
            after = rows[-1][0]
            block = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            yield [r[0] for r in rows], [r[2] for r in rows], block.reshape(len(rows), dim)

    async def _rebuild(self, namespace: str, old: AnnIndex) -> None:
        """A stale index is replaced by a freshly trained one; the old one answers until
        then."""
        erased = self.files.generation(namespace)
        new = await self._build_ann(namespace, old.dim, old.model)
        async with self._locks(namespace):
            if (self._cache.get(namespace, old.dim) is not old
                    or self.files.generation(namespace) != erased):
                return  # erased or reloaded meanwhile
            if await self._catch_up(namespace, new, old.model):
                await self.files.save_now(namespace, new)
                self._cache.put(namespace, new)


async def prune_vector_events(db: aiosqlite.Connection) -> None:
    rows = await db.execute_fetchall("SELECT coalesce(max(seq), 0) FROM vector_events")
    upto = rows[0][0] - KEEP_EVENTS
    if upto > 0:
        await db.execute("DELETE FROM vector_events WHERE seq <= ?", (upto,))
        await db.execute("UPDATE vector_events_pruned SET upto = max(upto, ?) WHERE id = 1", (upto,))
