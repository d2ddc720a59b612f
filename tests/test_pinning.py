"""Pinning (recall_core.memory.pinning) on real SQLite through the service: the decay job never
lowers a pinned memory, pinning restores what decay took, tools show the flag."""

from __future__ import annotations

from datetime import timedelta

import pytest

from recall_core.jobs.decay import run_decay
from recall_core.errors import MemoryNotFound
from recall_core.models import Memory, utcnow


async def importance(rt, mid: str) -> float:
    return (await rt.storage.get_memories("u", [mid]))[0].importance


async def test_pinned_memory_never_decays(runtime):
    long_ago = utcnow() - timedelta(days=120)
    keep = Memory(namespace="u", text="Our incident hotline is 555-0100.", importance=0.8,
                  created_at=long_ago, valid_from=long_ago, last_accessed_at=long_ago)
    other = Memory(namespace="u", text="Lunch was pasta.", importance=0.8,
                   created_at=long_ago, valid_from=long_ago, last_accessed_at=long_ago)
    await runtime.storage.insert_memories([keep, other])
    rate = runtime.config.decay.rate
    await run_decay(runtime.storage, rate, utcnow())
    decayed = await importance(runtime, keep.id)
    assert decayed < 0.5  # both decayed before the pin

    pinned = await runtime.service.pin("u", keep.id, True)
    assert pinned.pinned and pinned.importance == pytest.approx(0.8)  # decay undone
    await run_decay(runtime.storage, rate, utcnow() + timedelta(days=365))
    assert await importance(runtime, keep.id) == pytest.approx(0.8)
    assert await importance(runtime, other.id) < decayed  # the unpinned one kept decaying

    found = await runtime.service.search("u", "incident hotline", limit=3)
    assert found["results"][0]["pinned"] is True
    page = await runtime.service.inspect("u")
    assert {m["text"]: m.get("pinned", False) for m in page["memories"]} == {
        keep.text: True, other.text: False}

    unpinned = await runtime.service.pin("u", keep.id, False)
    assert not unpinned.pinned
    with pytest.raises(MemoryNotFound):
        await runtime.service.pin("other-namespace", keep.id, True)
