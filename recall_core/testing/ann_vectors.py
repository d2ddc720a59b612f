"""Shared checks of the approximate vector index (`recall_core.kit.ann_index`): run by
recall-sqlite and recall-postgres (real[] fallback) on storages opened by `open_storage()`
with the index forced on (an ANN row threshold of 0) and its files saved in `index_dir`.

    await ann_answers_equal_exact(open_storage)
    await restart_reuses_the_saved_index(open_storage, index_dir)
    await forgotten_vectors_leave_answers_and_file(open_storage, index_dir)
    await corrupt_or_foreign_file_is_rebuilt(open_storage, index_dir)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from .storage_contract.base import memory

NS = "ann"
DIM = 16

Opener = Callable[[], Awaitable[Any]]


def _vectors(n: int, seed: int = 3) -> np.ndarray:
    """Clustered vectors (as sentence embeddings are), not uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(12, DIM))
    return centres[rng.integers(0, 12, n)] + rng.normal(0, 0.35, (n, DIM))


async def _fill(storage, n: int, seed: int = 3) -> tuple[list, np.ndarray]:
    vecs = _vectors(n, seed)
    rows = [memory(NS, f"m{i}", minutes=i, embedding=v.tolist()) for i, v in enumerate(vecs)]
    await storage.insert_memories(rows)
    return rows, vecs


async def _search(storage, query, limit: int = 10) -> list:
    for _ in range(600):  # a background load (if any) ends within seconds
        try:
            return await storage.search_vectors(NS, list(map(float, query)), limit)
        except Exception as exc:  # noqa: BLE001 - NotReady while loading
            if type(exc).__name__ != "NotReady":
                raise
            await asyncio.sleep(0.02)
    raise AssertionError("the vector index never became ready")


def _exact(vecs: np.ndarray, ids: list[str], query: np.ndarray, limit: int) -> list[str]:
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:limit]]


def index_files(index_dir: Path) -> list[Path]:
    return sorted(p for p in Path(index_dir).glob("*.faiss"))


async def _saved(index_dir: Path, timeout: float = 20.0) -> list[Path]:
    for _ in range(int(timeout / 0.05)):
        files = index_files(index_dir)
        if files:
            return files
        await asyncio.sleep(0.05)
    raise AssertionError(f"no index file was saved in {index_dir}")


async def ann_answers_equal_exact(open_storage: Opener) -> None:
    """On a small namespace the approximate path (candidates re-scored exactly) answers
    the same ids, in the same order, with the exact cosines."""
    s = await open_storage()
    try:
        rows, vecs = await _fill(s, 400)
        ids = [m.id for m in rows]
        rng = np.random.default_rng(9)
        for q in list(vecs[:5]) + list(rng.normal(size=(10, DIM))):
            hits = await _search(s, q, 10)
            assert [h.id for h in hits] == _exact(vecs, ids, q, 10)
            want = (vecs[ids.index(hits[0].id)] @ q) / (
                np.linalg.norm(vecs[ids.index(hits[0].id)]) * np.linalg.norm(q))
            assert abs(hits[0].score - want) < 1e-4
    finally:
        await s.close()


async def restart_reuses_the_saved_index(open_storage: Opener, index_dir: Path) -> None:
    """The index is saved; a new storage on the same database loads that file instead of
    building again, and applies the writes made while no process held it."""
    s = await open_storage()
    try:
        rows, vecs = await _fill(s, 300)
        await _search(s, vecs[0])
        (path,) = await _saved(index_dir)
        before = path.stat().st_ino, path.stat().st_mtime_ns
    finally:
        await s.close()
    s = await open_storage()
    try:
        late = memory(NS, "late", minutes=999, embedding=[5.0] * DIM)
        await s.insert_memories([late])
        hits = await _search(s, [5.0] * DIM, 3)
        assert hits[0].id == late.id
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == before, "rebuilt, not reused"
        assert [h.id for h in await _search(s, vecs[7], 1)] == [rows[7].id]
    finally:
        await s.close()


async def forgotten_vectors_leave_answers_and_file(open_storage: Opener, index_dir: Path) -> None:
    """A deleted memory is gone from the answers at once and from the saved file soon
    after (the save its removal asks for); an erase deletes the namespace's files."""
    import faiss

    s = await open_storage()
    try:
        rows, vecs = await _fill(s, 300)
        await _search(s, vecs[0])
        (path,) = await _saved(index_dir)
        gone = rows[42]
        unit = (vecs[42] / np.linalg.norm(vecs[42])).astype(np.float32)[None, :]
        assert faiss.read_index(str(path)).search(unit, 1)[0][0][0] > 0.99  # it is there
        async with s.write(NS) as tx:
            assert await tx.delete([gone.id]) == 1
        hits = await _search(s, vecs[42], 10)
        assert gone.id not in [h.id for h in hits]
        for _ in range(400):
            saved = faiss.read_index(str(path)) if path.exists() else None
            if saved is not None and saved.ntotal == 299:
                break
            await asyncio.sleep(0.05)
        assert saved is not None and saved.ntotal == 299
        assert saved.search(unit, 1)[0][0][0] < 0.99, "the forgotten vector is still on disk"
        await s.delete_namespace(NS)
        assert index_files(index_dir) == []
        assert await _search(s, vecs[0]) == []
    finally:
        await s.close()


async def corrupt_or_foreign_file_is_rebuilt(open_storage: Opener, index_dir: Path) -> None:
    """A damaged file (or one whose sidecar names another model) is never trusted: the
    next load rebuilds it and answers exactly."""
    s = await open_storage()
    try:
        rows, vecs = await _fill(s, 300)
        await _search(s, vecs[0])
        (path,) = await _saved(index_dir)
    finally:
        await s.close()
    raw = bytearray(path.read_bytes())
    for i in range(len(raw) // 3, len(raw) // 3 + 64):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    s = await open_storage()
    try:
        ids = [m.id for m in rows]
        assert [h.id for h in await _search(s, vecs[3], 10)] == _exact(vecs, ids, vecs[3], 10)
        (again,) = await _saved(index_dir)
        assert again.read_bytes() != bytes(raw), "the corrupt file was kept"
    finally:
        await s.close()
