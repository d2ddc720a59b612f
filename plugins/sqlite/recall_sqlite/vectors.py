"""In-memory vector indexes for cosine search without a vector extension.

A namespace's active vectors live in one L2-normalised float32 matrix; a query is one
matrix-vector product plus a partial sort, never a Python loop over rows.

The matrix is kept fresh incrementally: triggers append the `seq` of every memory whose vector
or active state changes to `vector_events`, and before a search the index applies only the
events after its cursor (drop those rows, re-add the ones still active). So a store followed
by a search costs a few rows, not a reload, and writes by other processes are seen too. A full
load happens on first use, after the event log was pruned past the cursor, or when a
`RESET` event (delete_namespace) says so.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

import aiosqlite
import numpy as np

from .connection import Database, chunks

#: `vector_events.memory_seq` meaning "forget everything of this namespace".
RESET = -1
#: The event log keeps this many recent events; an index further behind reloads.
KEEP_EVENTS = 100_000
#: Prune the log every this many write transactions of one storage instance.
PRUNE_EVERY = 1000
#: Above this many floats, loading and multiplying run in a worker thread, off the event loop.
THREAD_FLOATS = 2_000_000
_MIN_CAPACITY = 64


class VectorIndex:
    """Active vectors of one namespace and one width. Rows are appended; removed rows are
    masked until compaction."""

    def __init__(self, dim: int, cursor: int = 0):
        self.dim = dim
        self.cursor = cursor  # last vector_events.seq applied
        self._data = np.zeros((0, dim), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._ids: list[str] = []
        self._row_of: dict[int, int] = {}  # memory seq -> row
        self._n = 0
        self._dead = 0

    def __len__(self) -> int:
        return self._n - self._dead

    def remove(self, seqs: Iterable[int]) -> None:
        for seq in seqs:
            row = self._row_of.pop(seq, None)
            if row is not None:
                self._alive[row] = False
                self._dead += 1
        if self._dead > 1024 and self._dead * 4 > self._n:
            self._compact()

    def add(self, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """(memory seq, id, float32 blob) of active rows; blobs of another width are skipped."""
        rows = [r for r in rows if len(r[2]) == self.dim * 4]
        self.remove(r[0] for r in rows)
        if not rows:
            return
        block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.dim)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        need = self._n + len(rows)
        if need > len(self._data):
            # Headroom, so the writes that follow a load append in place instead of copying
            # the whole matrix each time.
            capacity = max(_MIN_CAPACITY, need + need // 4, len(self._data) * 3 // 2)
            data = np.zeros((capacity, self.dim), dtype=np.float32)
            data[:self._n] = self._data[:self._n]
            alive = np.zeros(capacity, dtype=bool)
            alive[:self._n] = self._alive[:self._n]
            self._data, self._alive = data, alive
        self._data[self._n:need] = block / norms
        self._alive[self._n:need] = True
        for offset, (seq, mid, _) in enumerate(rows):
            self._row_of[seq] = self._n + offset
            self._ids.append(mid)
        self._n = need

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[:self._n])
        self._data = np.ascontiguousarray(self._data[keep])
        self._alive = np.ones(len(keep), dtype=bool)
        old_ids = self._ids
        self._ids = [old_ids[i] for i in keep]
        new_row = {int(old): new for new, old in enumerate(keep)}
        self._row_of = {seq: new_row[row] for seq, row in self._row_of.items()}
        self._n, self._dead = len(keep), 0

    def search(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        live = len(self)
        if live == 0 or limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or q.shape != (self.dim,):
            return []
        scores = self._data[:self._n] @ (q / norm)
        if self._dead:
            scores[~self._alive[:self._n]] = -np.inf
        k = min(limit, live)
        top = np.argpartition(-scores, k - 1)[:k] if k < self._n else np.arange(self._n)
        top = top[np.argsort(-scores[top], kind="stable")][:k]
        return [(self._ids[i], float(scores[i])) for i in top]


class VectorCache:
    """Indexes by (namespace, dim); least recently used ones are dropped beyond the limit."""

    def __init__(self, max_namespaces: int):
        self.max_namespaces = max_namespaces
        self._entries: OrderedDict[tuple[str, int], VectorIndex] = OrderedDict()

    def get(self, namespace: str, dim: int) -> VectorIndex | None:
        entry = self._entries.get((namespace, dim))
        if entry is not None:
            self._entries.move_to_end((namespace, dim))
        return entry

    def put(self, namespace: str, index: VectorIndex) -> None:
        if self.max_namespaces <= 0:
            return
        self._entries[(namespace, index.dim)] = index
        self._entries.move_to_end((namespace, index.dim))
        while len(self._entries) > self.max_namespaces:
            self._entries.popitem(last=False)

    def drop(self, namespace: str) -> None:
        for key in [k for k in self._entries if k[0] == namespace]:
            del self._entries[key]


class VectorSearch:
    """Per-namespace indexes of one storage instance, refreshed from the event log."""

    def __init__(self, db: Database, max_namespaces: int):
        self.db = db
        self._cache = VectorCache(max_namespaces)
        self._locks: dict[str, asyncio.Lock] = {}

    def forget(self, namespace: str) -> None:
        self._cache.drop(namespace)

    async def search(self, namespace: str, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        dim = len(vector)
        if dim == 0 or limit <= 0:
            return []
        async with self._locks.setdefault(namespace, asyncio.Lock()):
            index = await self._fresh_index(namespace, dim)
            return await _maybe_thread(len(index) * dim, index.search, vector, limit)

    async def _fresh_index(self, namespace: str, dim: int) -> VectorIndex:
        """The namespace's index with every committed change applied."""
        index = self._cache.get(namespace, dim)
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
                        "AND valid_until IS NULL AND embedding IS NOT NULL "
                        f"AND seq IN ({', '.join('?' * len(part))})", (namespace, *part))
                index.remove(changed)
                index.add(rows)
                index.cursor = events[-1][0]
        if index is None:
            # Cursor first: rows written after it are loaded now and re-applied later, which
            # is harmless (remove then add); the other order could miss a change.
            cursor = (await self.db.fetch_one(
                "SELECT coalesce(max(seq), 0) FROM vector_events"))[0]
            rows = await self.db.fetch(
                "SELECT seq, id, embedding FROM memories WHERE namespace = ? "
                "AND valid_until IS NULL AND embedding IS NOT NULL AND length(embedding) = ?",
                (namespace, dim * 4))
            index = VectorIndex(dim, cursor)
            await _maybe_thread(len(rows) * dim, index.add, rows)
            self._cache.put(namespace, index)
        return index


async def prune_vector_events(db: aiosqlite.Connection) -> None:
    rows = await db.execute_fetchall("SELECT coalesce(max(seq), 0) FROM vector_events")
    upto = rows[0][0] - KEEP_EVENTS
    if upto > 0:
        await db.execute("DELETE FROM vector_events WHERE seq <= ?", (upto,))
        await db.execute("UPDATE vector_events_pruned SET upto = max(upto, ?) WHERE id = 1", (upto,))


async def _maybe_thread(floats: int, fn: Any, *args: Any) -> Any:
    if floats >= THREAD_FLOATS:
        return await asyncio.to_thread(fn, *args)
    return fn(*args)
