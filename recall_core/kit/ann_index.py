"""Approximate nearest neighbours for a big namespace, persisted beside the database.

Above a row threshold (the storage plugins' `*_ann_min_rows`) a namespace's vectors are
served by an inverted-file index over int8-quantized vectors (faiss IVF-SQ8; chosen over
usearch, hnswlib, voyager and faiss HNSW in bench/ann_candidates.py: at recall@10 >= 0.99 it
answered fastest, built 5-10x faster, removes for real, and usearch 2.26.6 imported before
onnxruntime crashes the process) keyed by the memory's `seq`. The index only proposes
candidates; the storage re-scores them exactly with the stored float32 vectors, read by seq
in the same query that checks each is still active, of this namespace and of the query's
model. So a stale or damaged index can cost recall, never a wrong, forgotten or foreign
answer.

The index follows the storage's change log exactly as the exact matrix does (`remove` then
`add` of the changed seqs) and is saved to one file per (namespace, width) with a JSON
sidecar naming the model, the width, the change-log cursor it holds and a CRC32 of the file.
A restart reads that file (no rebuild) and applies the log after its cursor; a file that is
missing, truncated, fails its CRC, or is of another model or width is deleted and rebuilt,
never trusted. IVF removal drops the codes from the lists, so a forgotten memory's vector is
gone from disk at the next save, which a removal asks for at once. An index that has grown
far past the rows its centroids were trained on (`stale`) is rebuilt in the background.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

log = logging.getLogger("recall.vectors")

FORMAT = 1
#: Candidates taken from the index and re-scored exactly: at least this many, and twice
#: the ranker's limit.
RESCORE = 100
#: Lists probed per query: this fraction of them, at least PROBE_MIN (bench/RESULTS.md:
#: recall@10 against exact after re-scoring 0.9955 at 100k rows / 632 lists and 0.9915 at
#: 1M / 2000 lists with 128 probes; 64 probes gave 0.98).
PROBE_FRACTION = 1 / 16
PROBE_MIN = 128
#: faiss wants ~39 training points per list.
POINTS_PER_LIST = 39
#: Save after this many unsaved changes (a removal saves at once: see the module docstring).
SAVE_EVERY = 10_000
#: Rebuild (retrain the lists) when the index holds this many times the rows it was
#: trained for, or fewer than 1/this.
STALE_FACTOR = 4
_CHUNK = 1 << 20


def lists_for(rows: int) -> int:
    """2 * sqrt(rows) lists, as long as each gets enough training points."""
    return max(1, min(int(2 * math.sqrt(max(rows, 1))), rows // POINTS_PER_LIST))


def sample_size(rows: int) -> int:
    return min(rows, lists_for(rows) * POINTS_PER_LIST * 2)


def estimated_bytes(rows: int, dim: int) -> int:
    """int8 codes, int64 ids, list headroom, centroids."""
    return int(rows * (dim + 8) * 1.1) + lists_for(rows) * dim * 4


def file_stem(namespace: str, dim: int) -> str:
    """A file name for any namespace string (names may hold any character)."""
    return f"{hashlib.sha256(namespace.encode()).hexdigest()[:32]}-{int(dim)}"


def _normalised(block: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(unit rows, mask of rows kept): zero or non-finite rows are left out."""
    block = np.asarray(block, dtype=np.float32).reshape(-1, dim)
    norms = np.linalg.norm(block, axis=1)
    ok = np.isfinite(norms) & (norms > 0)
    return np.ascontiguousarray(block[ok] / norms[ok, None]), ok


class AnnIndex:
    """One namespace's vectors of one width and one model in a faiss IVF-SQ8 index keyed
    by memory seq. `cursor` is the storage's marker of the last change applied."""

    kind = "ann"

    def __init__(self, dim: int, cursor: int, model: str | None, index: Any, trained_rows: int):
        self.dim = dim
        self.cursor = cursor
        self.model = model
        self._index = index
        self.trained_rows = trained_rows
        self.unsaved = 0
        self.removed_unsaved = 0
        self.saving = False
        self.saved_at = time.monotonic()

    @classmethod
    def trained(cls, dim: int, cursor: int, model: str | None, sample: np.ndarray,
                rows: int) -> AnnIndex:
        """A new empty index whose lists are trained on `sample` (of a namespace of about
        `rows` rows)."""
        unit, _ = _normalised(sample, dim)
        nlist = max(1, min(lists_for(rows), len(unit)))
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist,
                                              faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = 1  # small namespaces: fewer points are fine
        index.train(unit if len(unit) else np.zeros((1, dim), dtype=np.float32))
        return cls(dim, cursor, model, index, rows)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    @property
    def nbytes(self) -> int:
        return estimated_bytes(len(self), self.dim)

    @property
    def must_save(self) -> bool:
        """Removed vectors are still in the file, or many changes are unsaved."""
        return not self.saving and (self.removed_unsaved > 0 or self.unsaved >= SAVE_EVERY)

    @property
    def stale(self) -> bool:
        """The lists were trained for a very different number of rows."""
        n = len(self)
        return n > 1000 and (n > STALE_FACTOR * self.trained_rows
                             or n * STALE_FACTOR < self.trained_rows)

    def remove(self, seqs: Iterable[int]) -> None:
        ids = np.fromiter((int(s) for s in seqs), dtype=np.int64)
        if len(ids) and len(self):
            gone = int(self._index.remove_ids(faiss.IDSelectorBatch(ids)))
            self.unsaved += gone
            self.removed_unsaved += gone

    def add(self, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """(seq, id, native float32 blob) rows, as the exact index takes them."""
        rows = [r for r in rows if r[2] is not None and len(r[2]) == self.dim * 4]
        if rows:
            block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
            self.add_matrix([r[0] for r in rows], None, block.reshape(len(rows), self.dim))

    def add_matrix(self, seqs: Sequence[int], ids: Any, block: np.ndarray,
                   replace: bool = True) -> None:
        """Rows of `block` for the memories `seqs` (ids are not kept: re-scoring reads
        them); a seq already present is replaced (`replace=False`: the caller knows none
        is, as in a build)."""
        if not len(seqs):
            return
        if replace:
            self.remove(seqs)
        unit, ok = _normalised(block, self.dim)
        keys = np.asarray(seqs, dtype=np.int64)[ok]
        if len(keys):
            self._index.add_with_ids(unit, keys)
            self.unsaved += len(keys)

    def candidates(self, vector: Sequence[float], limit: int) -> np.ndarray:
        """Seqs of about the `max(RESCORE, 2 * limit)` nearest rows (approximate order)."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        unit, ok = _normalised(np.asarray(vector, dtype=np.float32), self.dim)
        if not ok.all():
            return np.zeros(0, dtype=np.int64)
        nlist = self._index.nlist
        params = faiss.SearchParametersIVF(
            nprobe=min(nlist, max(PROBE_MIN, int(nlist * PROBE_FRACTION))))
        k = min(len(self), max(RESCORE, 2 * limit))
        _, found = self._index.search(unit, k, params=params)
        found = found[0]
        return found[found >= 0]

    # -- persistence -------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the index and its sidecar atomically (readers see the old pair or the new
        one). Call with no writer touching the index."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        unsaved, removed, cursor = self.unsaved, self.removed_unsaved, self.cursor
        faiss.write_index(self._index, str(tmp))
        meta = {"format": FORMAT, "dim": self.dim, "model": self.model, "cursor": cursor,
                "count": len(self), "trained_rows": self.trained_rows,
                "size": tmp.stat().st_size, "crc32": _crc(tmp)}
        meta_tmp = path.with_name(path.name + ".json.tmp")
        meta_tmp.write_text(json.dumps(meta))
        os.replace(tmp, path)
        os.replace(meta_tmp, sidecar(path))
        self.unsaved -= unsaved
        self.removed_unsaved -= removed
        self.saved_at = time.monotonic()

    @classmethod
    def open(cls, path: Path, dim: int, model: str | None) -> AnnIndex | None:
        """The saved index, or None (and the files deleted) when there is none or it is not
        exactly what it claims to be."""
        if not path.exists() and not sidecar(path).exists():
            return None
        try:
            meta = json.loads(sidecar(path).read_text())
            problem = None
            if meta.get("format") != FORMAT:
                problem = f"format {meta.get('format')!r}"
            elif meta.get("dim") != dim:
                problem = f"width {meta.get('dim')} (wanted {dim})"
            elif meta.get("model") != model:
                problem = f"model {meta.get('model')!r} (wanted {model!r})"
            elif path.stat().st_size != meta.get("size"):
                problem = "truncated or grown file"
            elif _crc(path) != meta.get("crc32"):
                problem = "CRC mismatch"
            if problem is None:
                index = faiss.read_index(str(path))
                if index.d != dim or index.ntotal != meta.get("count") or not isinstance(
                        index, faiss.IndexIVFScalarQuantizer):
                    problem = "its contents differ from its sidecar"
                else:
                    return cls(dim, int(meta["cursor"]), model, index,
                               int(meta["trained_rows"]))
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        log.warning("vector index %s is not usable (%s): deleted, it will be rebuilt",
                    path, problem)
        remove_files(path)
        return None


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def remove_files(path: Path) -> None:
    for p in (path, sidecar(path), path.with_name(path.name + ".tmp"),
              path.with_name(path.name + ".json.tmp")):
        p.unlink(missing_ok=True)


def remove_namespace(directory: Path | None, namespace: str) -> None:
    """Delete every saved index of `namespace` (erase)."""
    if directory is None or not directory.exists():
        return
    prefix = file_stem(namespace, 0).rsplit("-", 1)[0] + "-"
    for p in directory.glob(prefix + "*"):
        p.unlink(missing_ok=True)


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


async def build_streamed(dim: int, cursor: int, model: str | None, rows_now: int,
                         stream: Callable[[], AsyncIterator[tuple[Any, Any, np.ndarray]]]
                         ) -> AnnIndex:
    """A namespace's index from two streamed passes over its rows (never all vectors in
    memory at once): a sample trains the lists, then every row is added. `stream()` yields
    (seqs, ids, float32 block) and is called once per pass; `cursor` is the storage's change
    marker read before the first pass (rows written after it are re-applied later, which is
    harmless: remove, then add). Shared by both storage plugins."""
    every = max(1, rows_now // max(1, sample_size(rows_now)))
    sample: list[np.ndarray] = []
    async for _, _, block in stream():
        sample.append(block[::every].copy())
    # Training (k-means) takes seconds to minutes: off the event loop.
    index = await asyncio.to_thread(
        AnnIndex.trained, dim, cursor, model,
        np.concatenate(sample) if sample else np.zeros((0, dim)), rows_now)
    del sample
    async for seqs, _, block in stream():
        await asyncio.to_thread(index.add_matrix, seqs, None, block, False)
    index.unsaved = index.removed_unsaved = 0
    return index
