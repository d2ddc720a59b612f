"""plan_memories through the real worker path on SQLite."""

from __future__ import annotations

import recall_extractors
import recall_sqlite
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.memory.writes import process
from recall_core.models import utcnow
from recall_core.plugins import get_plugin_manager


async def _runtime(tmp_path):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    return await build_runtime(load_config(None, db=str(tmp_path / "r.db")), pm, start_worker=False)


async def _run_all(rt):
    while (op := await rt.storage.claim_job(60)) is not None:
        assert await process(rt.storage, rt.extractor, None, op, utcnow())


async def test_one_text_stating_an_attribute_twice_keeps_the_first_as_history(tmp_path):
    rt = await _runtime(tmp_path)
    try:
        await rt.service.store("ns", "I use vim. Last week I switched to VS Code.")
        await _run_all(rt)
        timeline = await rt.service.history("ns", "user", "editor")
        assert [(m.value, m.valid_until is None) for m in timeline] == [("vim", False), ("VS Code", True)]
        found = await rt.service.search("ns", "which editor vim or VS Code", mmr_lambda=1.0)
        assert [r["value"] for r in found["results"] if r.get("attribute") == "editor"] == ["VS Code"]
    finally:
        await rt.close()


async def test_restating_the_same_value_refreshes_instead_of_duplicating(tmp_path):
    rt = await _runtime(tmp_path)
    try:
        await rt.service.store("ns", "I live in Lisbon.")
        await rt.service.store("ns", "I live in Lisbon.", idempotency_key="again")
        await _run_all(rt)
        page = await rt.service.inspect("ns")
        assert [m["text"] for m in page["memories"]] == ["I live in Lisbon."]
    finally:
        await rt.close()


async def test_the_extracted_attribute_makes_a_memory_findable(tmp_path):
    rt = await _runtime(tmp_path)
    try:
        await rt.service.store("ns", "I use vim.", session_id="s1")
        await rt.service.store("ns", "Nice weather today, we walked to the harbour.", session_id="s1")
        await _run_all(rt)
        found = await rt.service.search("ns", "which editor?")
        assert found["results"] and found["results"][0]["text"] == "I use vim."
    finally:
        await rt.close()
