"""Dense retrieval end to end against the real SQLite backend, when it is installed and
offers vectors. Goes through `register_storage` (factory(url, settings)) so it does not
depend on recall_sqlite's internal class names."""

from __future__ import annotations

from typing import Any

import pytest

from recall_core.models import Memory
from recall_core.testing import registrations

recall_sqlite = pytest.importorskip("recall_sqlite")


@pytest.fixture
async def sqlite_storage(tmp_path, recall_plugin_manager) -> Any:
    if not hasattr(recall_sqlite, "register_storage"):
        pytest.skip("recall_sqlite does not implement register_storage yet")
    pm = recall_plugin_manager
    pm.register(recall_sqlite, name="sqlite")
    try:
        entry = registrations(pm, "register_storage").get("sqlite")
    finally:
        pm.unregister(recall_sqlite)
    settings = entry.settings.model_validate({}) if entry.settings else {}
    storage = entry.factory(f"sqlite:///{tmp_path / 'recall.db'}", settings)
    await storage.open()
    try:
        if not storage.capabilities.vectors:
            pytest.skip("recall_sqlite declares no vector capability")
        yield storage
    finally:
        await storage.close()


async def test_dense_ranker_over_sqlite_vectors(sqlite_storage, offline_ranker):
    texts = {
        "tea": "The user drinks green tea every morning.",
        "deploy": "Production deploys are frozen on Fridays.",
        "editor": "The user prefers dark mode in the code editor.",
    }
    memories = [Memory(namespace="ns1", text=t) for t in texts.values()]
    other = Memory(namespace="ns2", text="The user drinks green tea every morning.")
    await sqlite_storage.insert_memories([*memories, other])
    vectors = await offline_ranker.embedder.embed([m.text for m in memories])
    await sqlite_storage.set_embeddings("ns1", [(m.id, v) for m, v in zip(memories, vectors)])
    [other_vec] = await offline_ranker.embedder.embed([other.text])
    await sqlite_storage.set_embeddings("ns2", [(other.id, other_vec)])

    stored = await sqlite_storage.get_embeddings("ns1", [memories[0].id])
    assert len(stored[memories[0].id]) == 384

    hits = await offline_ranker.rank(sqlite_storage, "ns1", "what does the user like to drink?", 3)
    assert hits and hits[0].id == memories[0].id
    assert other.id not in {h.id for h in hits}
    assert hits[0].score >= hits[-1].score

    hits = await offline_ranker.rank(sqlite_storage, "ns1", "IDE colour theme", 1)
    assert [h.id for h in hits] == [memories[2].id]
