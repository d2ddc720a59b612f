"""Shared checks of how a storage that keeps vectors in process loads them
(`recall_core.kit.vector_loads`): run by recall-sqlite and recall-postgres (real[] fallback)
on a storage built with a small inline-row limit (`inline_rows`) or a small byte budget.

    await background_load_answers_not_ready_then_searches(storage)
    await too_big_for_the_cache_is_refused(storage)
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from ..contracts import NotReady
from .storage_contract.base import memory

NS = "loads"


async def _fill(storage, n: int, dim: int = 8, seed: int = 5) -> list:
    rng = np.random.default_rng(seed)
    rows = [memory(NS, f"m{i}", embedding=rng.normal(size=dim).tolist()) for i in range(n)]
    await storage.insert_memories(rows)
    return rows


async def background_load_answers_not_ready_then_searches(storage, rows: int = 60) -> None:
    """Above the inline limit: the first search gets NotReady naming the load, the namespace
    is listed as loading, and once the load ends the same search answers exactly."""
    made = await _fill(storage, rows)
    query = made[7].embedding
    with pytest.raises(NotReady, match="loading this namespace's"):
        await storage.search_vectors(NS, query, 3)
    assert NS in storage.vectors_loading() or not storage.vectors_loading()  # may end fast
    for _ in range(200):
        if NS not in storage.vectors_loading():
            break
        await asyncio.sleep(0.02)
    assert storage.vectors_loading() == []
    hits = await storage.search_vectors(NS, query, 3)
    assert hits[0].id == made[7].id and hits[0].score == pytest.approx(1.0)
    # Writes after the load are applied incrementally, not by another background load.
    extra = memory(NS, "late", embedding=[1.0] * 8)
    await storage.insert_memories([extra])
    assert (await storage.search_vectors(NS, [1.0] * 8, 1))[0].id == extra.id


async def too_big_for_the_cache_is_refused(storage, rows: int = 1000) -> None:
    """A namespace whose vectors alone exceed the byte budget (build the storage with a
    1 MiB budget: 1000 x 384 floats need ~2 MiB) is never loaded."""
    made = await _fill(storage, rows, dim=384)
    for _ in range(2):  # and stays refused: nothing was loaded meanwhile
        with pytest.raises(NotReady, match="more than the vector cache"):
            await storage.search_vectors(NS, made[0].embedding, 3)
    assert storage.vectors_loading() == []
