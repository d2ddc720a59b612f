"""search_memories through MemoryService on real SQLite: relevance stays the query's,
degraded mode, hostile queries, budget and threshold."""

from __future__ import annotations

import asyncio

import pytest

import recall_extractors
import recall_sqlite
from recall_core import NotReady, hookimpl
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.plugins import get_plugin_manager
from recall_core.memory.transfer import ImportLine, import_verbatim
from recall_core import Ranker

SUBJECTS = [
    "astronomy", "baking", "chess", "diving", "embroidery", "fencing", "gardening", "hiking",
    "ice skating", "juggling", "karate", "languages", "marathons", "knitting", "origami",
    "painting", "quilting", "rowing", "sailing", "tennis", "ukulele", "violin", "woodworking",
    "xylophone", "yoga", "zumba", "archery", "bowling", "cycling", "dancing", "fishing",
    "golf", "hockey", "kayaking", "lacrosse", "mountaineering", "netball", "photography",
    "pottery", "rugby", "skiing", "surfing", "trampolining", "volleyball", "wrestling",
    "birdwatching", "calligraphy", "drumming", "falconry", "geocaching",
]


async def _load(rt, ns="u", subjects=SUBJECTS):
    rows = [(i, ImportLine(text=f"The user took up {s} as a hobby in year {2000 + i} and loves it."))
            for i, s in enumerate(subjects, 1)]
    await import_verbatim(rt.storage, ns, rows)


async def test_fifty_queries_keep_fifty_different_relevant_tops_after_many_searches(runtime):
    await _load(runtime)
    for _ in range(6):  # access counts grow with every round
        for s in SUBJECTS:
            await runtime.service.search("u", f"when did the user start {s}?", limit=5)
        await runtime.service.drain()
    tops = []
    for s in SUBJECTS:
        res = await runtime.service.search("u", f"when did the user start {s}?", limit=5)
        tops.append(res["results"][0]["text"])
        assert s in res["results"][0]["text"], (s, res["results"][0])
    assert len(set(tops)) == 50


@pytest.mark.parametrize("query", [
    '"', "'", '"unbalanced', "AND", "OR NOT", "NEAR(a b)", "*", "col:value", "^start",
    "(((", "a-b-c", "DROP TABLE memories;", "🦄 emoji", "naïve café", "日本語のテキスト",
    "x" * 4096, "\\", "%_", "NULL", "{}[]",  # 4096: the longest limits.max_query_chars allows
])
async def test_hostile_queries_never_break_search(runtime, query):
    await _load(runtime, subjects=SUBJECTS[:5])
    res = await runtime.service.search("u", query)
    assert isinstance(res["results"], list) and res["degraded"] == []


async def test_accents_and_case_are_folded(runtime):
    rows = [(1, ImportLine(text="We met at the Café Noir in Zürich."))]
    await import_verbatim(runtime.storage, "u", rows)
    res = await runtime.service.search("u", "cafe zurich")
    assert res["results"] and "Café" in res["results"][0]["text"]


async def test_score_threshold_and_budget(runtime):
    await _load(runtime)
    full = await runtime.service.search("u", "user hobby loves", limit=50, mmr_lambda=1.0)
    assert full["total"] > 3
    scores = [r["score"] for r in full["results"]]
    assert scores == sorted(scores, reverse=True)
    cut = scores[2]
    some = await runtime.service.search("u", "user hobby loves", limit=50, score_threshold=cut,
                                        mmr_lambda=1.0)
    assert 0 < some["total"] < full["total"] and all(r["score"] >= cut for r in some["results"])
    tight = await runtime.service.search("u", "user hobby loves", limit=50, max_tokens=40)
    assert tight["truncated"] is True and tight["tokens"] <= 40
    assert 1 <= len(tight["results"]) < len(full["results"])
    # total counts what matched, before the limit and the token budget cut
    assert tight["total"] == full["total"] >= len(full["results"])
    two = await runtime.service.search("u", "user hobby loves", limit=2, mmr_lambda=1.0)
    assert len(two["results"]) == 2 and two["total"] == full["total"]


async def test_degraded_when_a_ranker_is_not_ready(tmp_path):
    class Cold(Ranker):
        name = "cold"

        async def rank(self, storage, namespace, query, limit):
            raise NotReady("cold: warming up")

        async def rank_pool(self, query, memories, vectors, limit):
            raise NotReady("cold: warming up")

    class Plugin:
        @hookimpl
        def register_rankers(self, register):
            register("cold", lambda settings: Cold())

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    pm.register(Plugin(), name="cold-plugin")
    try:
        rt = await build_runtime(load_config(None, db=str(tmp_path / "r.db"),
                                             rankers={"bm25": 1.0, "cold": 1.0}), pm,
                                 start_worker=False)
        await _load(rt, subjects=SUBJECTS[:3])
        res = await rt.service.search("u", "chess hobby")
        assert res["degraded"] == ["cold: warming up"]
        assert "chess" in res["results"][0]["text"]
        await rt.close()
    finally:
        pm.unregister(name="cold-plugin")


async def test_search_never_crosses_namespaces(runtime):
    await _load(runtime, "a", SUBJECTS[:10])
    await _load(runtime, "b", SUBJECTS[10:20])
    res = await runtime.service.search("b", "astronomy baking chess hobby", limit=50)
    assert all(not any(s in r["text"] for s in SUBJECTS[:10]) for r in res["results"])


async def test_searches_raise_access_counts_in_batches(runtime):
    await _load(runtime, subjects=SUBJECTS[:5])
    runtime.service.access.delay_s = 0.05
    ids = [r["id"] for r in (await runtime.service.search("u", "chess hobby", limit=2))["results"]]
    again = [r["id"] for r in (await runtime.service.search("u", "chess", limit=1))["results"]]
    assert again[0] == ids[0]

    async def counts():
        return {m.id: m.access_count for m in await runtime.storage.get_memories("u", ids)}

    assert await counts() == {ids[0]: 0, ids[1]: 0}  # gathered, not written per search
    for _ in range(100):  # written by the timer, without anyone calling drain()
        if (await counts())[ids[0]]:
            break
        await asyncio.sleep(0.02)
    assert await counts() == {ids[0]: 2, ids[1]: 1}
    got = (await runtime.storage.get_memories("u", ids[:1]))[0]
    assert got.last_accessed_at is not None


async def test_access_counts_pending_at_shutdown_are_written(tmp_path):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    config = load_config(None, db=str(tmp_path / "r.db"))
    rt = await build_runtime(config, pm, start_worker=False)
    await _load(rt, subjects=SUBJECTS[:3])
    hit = (await rt.service.search("u", "chess", limit=1))["results"][0]["id"]
    await rt.close()  # long before the flush timer fires
    rt = await build_runtime(config, pm, start_worker=False)
    try:
        assert (await rt.storage.get_memories("u", [hit]))[0].access_count == 1
    finally:
        await rt.close()
