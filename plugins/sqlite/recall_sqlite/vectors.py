"""Per-namespace in-memory vector matrices for cosine search without a vector extension.

A namespace's active vectors are loaded once into one L2-normalised float32 matrix, keyed by
the namespace version; a query is then a single matrix-vector product plus a partial sort.
Any change of the namespace's memories or vectors changes the version, so the next search
reloads. Least recently used namespaces are evicted beyond `max_namespaces`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VectorMatrix:
    version: int
    ids: list[str]
    matrix: np.ndarray  # (n, dim) float32, rows unit length (zero rows stay zero)

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @classmethod
    def build(cls, version: int, dim: int, rows: Sequence[tuple[str, bytes]]) -> VectorMatrix:
        width = dim * 4
        # Rows of another width (a changed embedding model) cannot be compared; skip them.
        kept = [(i, b) for i, b in rows if len(b) == width]
        if not kept:
            return cls(version, [], np.zeros((0, dim), dtype=np.float32))
        ids = [i for i, _ in kept]
        matrix = np.frombuffer(b"".join(b for _, b in kept), dtype=np.float32).reshape(len(kept), dim)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return cls(version, ids, np.ascontiguousarray(matrix / norms, dtype=np.float32))

    def search(self, vector: Sequence[float], limit: int) -> list[tuple[str, float]]:
        n = len(self.ids)
        if n == 0 or limit <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0.0:
            return []
        scores = self.matrix @ (q / norm)
        k = min(limit, n)
        top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in top]


class VectorCache:
    def __init__(self, max_namespaces: int):
        self.max_namespaces = max_namespaces
        self._entries: OrderedDict[tuple[str, int], VectorMatrix] = OrderedDict()

    def get(self, namespace: str, dim: int, version: int) -> VectorMatrix | None:
        entry = self._entries.get((namespace, dim))
        if entry is None or entry.version != version:
            return None
        self._entries.move_to_end((namespace, dim))
        return entry

    def put(self, namespace: str, entry: VectorMatrix) -> None:
        if self.max_namespaces <= 0:
            return
        self._entries[(namespace, entry.dim)] = entry
        self._entries.move_to_end((namespace, entry.dim))
        while len(self._entries) > self.max_namespaces:
            self._entries.popitem(last=False)

    def drop(self, namespace: str) -> None:
        for key in [k for k in self._entries if k[0] == namespace]:
            del self._entries[key]
