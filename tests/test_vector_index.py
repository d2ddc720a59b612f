"""recall_core.kit.vector_index.NamespaceLocks: one lock per namespace while in use, none after."""

from __future__ import annotations

import asyncio
import gc

from recall_core.kit.vector_index import NamespaceLocks


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
