"""recall_core.kit.vector_index.NamespaceLocks: one lock per namespace while in use, none after."""

from __future__ import annotations

import asyncio
import gc

import numpy as np

from recall_core.kit.vector_index import NamespaceLocks, VectorIndex


async def test_same_namespace_serialises_and_idle_namespaces_keep_no_lock() -> None:
    locks = NamespaceLocks()
    inside: dict[str, int] = {}
    most: dict[str, int] = {}

    async def search(namespace: str) -> None:
        async with locks(namespace):
            inside[namespace] = inside.get(namespace, 0) + 1
            most[namespace] = max(most.get(namespace, 0), inside[namespace])
            await asyncio.sleep(0.001)
            inside[namespace] -= 1

    namespaces = [f"ns{i}" for i in range(200)]
    await asyncio.gather(*(search(ns) for ns in namespaces for _ in range(3)))
    assert set(most) == set(namespaces)
    assert set(most.values()) == {1}, "two searches of one namespace ran at once"

    held = locks("ns0")
    assert locks("ns0") is held and locks("ns1") is not held
    del held
    gc.collect()
    assert len(locks) == 0, "locks of idle namespaces were kept"


def test_vector_cache_is_sized_in_bytes_and_evicts_the_least_recently_used():
    from recall_core.kit.vector_index import VectorCache, estimated_bytes

    def index(rows: int) -> VectorIndex:
        ix = VectorIndex(16)
        ix.add_matrix(list(range(rows)), [f"m{i}" for i in range(rows)],
                      np.ones((rows, 16), dtype=np.float32))
        return ix

    one = index(100)
    assert one.nbytes <= estimated_bytes(100, 16)  # the estimate a storage checks before loading
    cache = VectorCache(max_namespaces=100, max_bytes=int(one.nbytes * 2.5))
    cache.put("a", one)
    cache.put("b", index(100))
    assert cache.get("a", 16) is one  # a is now the most recently used
    cache.put("c", index(100))  # three do not fit: b (least recently used) goes
    assert cache.get("b", 16) is None and cache.get("a", 16) is one
    assert cache.nbytes <= cache.max_bytes
    big = index(1000)
    assert not cache.fits(big.nbytes)
    cache.put("big", big)  # never kept: it alone exceeds the budget
    assert cache.get("big", 16) is None and cache.get("a", 16) is one
