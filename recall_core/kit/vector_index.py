"""An in-memory exact cosine index that storage plugins keep fresh incrementally.

A namespace's active vectors of one width live in one L2-normalised float32 matrix; a query
is one matrix-vector product plus a partial sort, never a Python loop over rows. Rows are
appended and removed by the memory's `seq` (the storage's insertion-order key), so a storage
that knows which memories changed since the index was built applies just those instead of
reloading: recall-sqlite from its `vector_events` log, recall-postgres (without pgvector) from
its `vector_changes` table. Removed rows are masked until compaction.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: Above this many floats, loading and multiplying run in a worker thread, off the event loop.
THREAD_FLOATS = 2_000_000
_MIN_CAPACITY = 64
#: Bytes per row beside its floats: the seq (int64), the id (a uuid as 36 bytes), alive (1).
ROW_OVERHEAD = 48


def estimated_bytes(rows: int, dim: int) -> int:
    """What an index of `rows` vectors of width `dim` holds, headroom of a load included."""
    capacity = max(_MIN_CAPACITY, rows + rows // 4)  # as add_matrix grows it
    return capacity * (dim * 4 + ROW_OVERHEAD)


class VectorIndex:
    """Active vectors of one namespace and one width. `cursor` is the storage's own marker of
    the last change applied (an event id, a namespace version)."""

    def __init__(self, dim: int, cursor: int = 0):
        self.dim = dim
        self.cursor = cursor
        self._data = np.zeros((0, dim), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        # Row maps as arrays, not Python objects (issue 31: ~200 bytes a row at 1M rows).
        self._seqs = np.zeros(0, dtype=np.int64)
        self._ids = np.zeros(0, dtype="S36")  # utf-8; widened when a longer id comes
        self._n = 0
        self._dead = 0

    def __len__(self) -> int:
        return self._n - self._dead

    @property
    def nbytes(self) -> int:
        """Memory held: the matrix and its row maps, headroom included."""
        return self._data.nbytes + self._alive.nbytes + self._seqs.nbytes + self._ids.nbytes

    def remove(self, seqs: Iterable[int]) -> None:
        wanted = np.fromiter((int(s) for s in seqs), dtype=np.int64)
        if not len(wanted) or not self._n:
            return
        hit = np.isin(self._seqs[:self._n], wanted) & self._alive[:self._n]
        gone = int(hit.sum())
        if gone:
            self._alive[:self._n][hit] = False
            self._dead += gone
        if self._dead > 1024 and self._dead * 4 > self._n:
            self._compact()

    def reserve(self, rows: int) -> None:
        """Room for `rows` rows in all, so a streamed load fills one matrix instead of
        copying it as it grows (peak memory near the final size)."""
        if rows > len(self._data):
            self._grow(rows)

    def _grow(self, capacity: int) -> None:
        data = np.zeros((capacity, self.dim), dtype=np.float32)
        data[:self._n] = self._data[:self._n]
        alive = np.zeros(capacity, dtype=bool)
        alive[:self._n] = self._alive[:self._n]
        seq_arr = np.zeros(capacity, dtype=np.int64)
        seq_arr[:self._n] = self._seqs[:self._n]
        id_arr = np.zeros(capacity, dtype=self._ids.dtype)
        id_arr[:self._n] = self._ids[:self._n]
        self._data, self._alive, self._seqs, self._ids = data, alive, seq_arr, id_arr

    def add(self, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """(memory seq, id, native float32 blob) of active rows; blobs of another width are
        skipped."""
        rows = [r for r in rows if len(r[2]) == self.dim * 4]
        if rows:
            block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
            self.add_matrix([r[0] for r in rows], [r[1] for r in rows],
                            block.reshape(len(rows), self.dim))

    def add_matrix(self, seqs: Sequence[int], ids: Sequence[str], block: np.ndarray) -> None:
        """Rows of `block` (n x dim) for the memories `seqs` / `ids`; a seq already present is
        replaced."""
        self.remove(seqs)
        if not len(seqs):
            return
        block = np.asarray(block, dtype=np.float32).reshape(len(seqs), self.dim)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        norms[norms == 0] = 1.0  # zero vectors score 0 instead of NaN
        need = self._n + len(seqs)
        if need > len(self._data):
            # Headroom, so the writes that follow a load append in place instead of copying
            # the whole matrix each time.
            self._grow(max(_MIN_CAPACITY, need + need // 4, len(self._data) * 3 // 2))
        new_ids = np.array([str(i).encode() for i in ids])
        if new_ids.dtype.itemsize > self._ids.dtype.itemsize:
            self._ids = self._ids.astype(new_ids.dtype)
        self._data[self._n:need] = block / norms
        self._alive[self._n:need] = True
        self._seqs[self._n:need] = np.asarray(seqs, dtype=np.int64)
        self._ids[self._n:need] = new_ids
        self._n = need

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[:self._n])
        self._data = np.ascontiguousarray(self._data[keep])
        self._alive = np.ones(len(keep), dtype=bool)
        self._seqs = self._seqs[keep]
        self._ids = self._ids[keep]
        self._n, self._dead = len(keep), 0

    def search(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        """(id, cosine) of the `limit` nearest active rows, best first."""
        live = len(self)
        if live == 0 or limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if not np.isfinite(norm) or norm == 0.0 or q.shape != (self.dim,):
            return []
        scores = self._data[:self._n] @ (q / norm)
        if self._dead:
            scores[~self._alive[:self._n]] = -np.inf
        k = min(limit, live)
        top = np.argpartition(-scores, k - 1)[:k] if k < self._n else np.arange(self._n)
        top = top[np.argsort(-scores[top], kind="stable")][:k]
        return [(self._ids[i].decode(), float(scores[i])) for i in top]


class VectorCache:
    """Indexes by (namespace, dim), least recently used dropped first beyond either limit:
    `max_namespaces` indexes, or `max_bytes` of memory in all (0: no byte limit). An index
    that alone exceeds `max_bytes` is never kept (`fits` tells a storage so before it loads
    one)."""

    def __init__(self, max_namespaces: int, max_bytes: int = 0):
        self.max_namespaces = max_namespaces
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, int], VectorIndex] = OrderedDict()

    @property
    def nbytes(self) -> int:
        return sum(index.nbytes for index in self._entries.values())

    def fits(self, nbytes: int) -> bool:
        return self.max_bytes <= 0 or nbytes <= self.max_bytes

    def get(self, namespace: str, dim: int) -> VectorIndex | None:
        entry = self._entries.get((namespace, dim))
        if entry is not None:
            self._entries.move_to_end((namespace, dim))
        return entry

    def put(self, namespace: str, index: VectorIndex) -> None:
        if self.max_namespaces <= 0 or not self.fits(index.nbytes):
            return
        self._entries[(namespace, index.dim)] = index
        self._entries.move_to_end((namespace, index.dim))
        self.trim()

    def trim(self) -> None:
        """Evict the least recently used until within both limits (also after an index in
        the cache grew by its writes)."""
        while len(self._entries) > self.max_namespaces or (
                self.max_bytes > 0 and len(self._entries) > 1 and self.nbytes > self.max_bytes):
            self._entries.popitem(last=False)

    def drop(self, namespace: str) -> None:
        for key in [k for k in self._entries if k[0] == namespace]:
            del self._entries[key]


class NamespaceLocks:
    """One asyncio.Lock per namespace, kept only while a task holds or awaits it: a server
    that has seen many namespaces keeps no lock for the idle ones."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def __call__(self, namespace: str) -> asyncio.Lock:
        lock = self._locks.get(namespace)
        if lock is None:
            lock = self._locks[namespace] = asyncio.Lock()
        return lock

    def __len__(self) -> int:
        return len(self._locks)


async def maybe_in_thread(floats: int, fn: Any, *args: Any) -> Any:
    """Run `fn` in a worker thread when it touches `floats` >= THREAD_FLOATS, else inline."""
    if floats >= THREAD_FLOATS:
        return await asyncio.to_thread(fn, *args)
    return fn(*args)
