"""The explained search (MemoryService.search(explain=True)): the same pipeline as
search_memories, with a trace that accounts for every result's score and every candidate
that did not make it."""

from __future__ import annotations

import math

import pytest

import recall_extractors
import recall_sqlite
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.plugins import get_plugin_manager
from recall_core.memory.transfer import ImportLine, import_verbatim


@pytest.fixture
async def runtime(tmp_path):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    rt = await build_runtime(load_config(None, db=str(tmp_path / "r.db")), pm, start_worker=False)
    texts = ["The user prefers dark mode in the editor.",
             "The user prefers dark mode in the editor!",  # a near-duplicate: MMR drops one
             "Dark roast coffee is the user's morning habit.",
             "The editor theme should be dark, with a large font.",
             "The user's cat is called Miso."]
    await import_verbatim(rt.storage, "u", [(i, ImportLine(text=t)) for i, t in enumerate(texts)])
    yield rt
    await rt.close()


async def test_trace_accounts_for_every_score(runtime):
    svc = runtime.service
    plain = await svc.search("u", "dark mode editor", limit=3, mmr_lambda=0.5)
    explained = await svc.search("u", "dark mode editor", limit=3, mmr_lambda=0.5, explain=True)
    assert [r["id"] for r in explained["results"]] == [r["id"] for r in plain["results"]]
    trace = explained["explain"]
    assert [r["name"] for r in trace.rankers] == ["bm25"] and trace.rankers[0]["hits"] >= 3
    w = trace.weights
    assert math.isclose(sum(w.values()), 1.0)
    for result in explained["results"]:
        p = trace.parts[result["id"]]
        base = (w["relevance"] * p["relevance"] + w["recency"] * p["recency"]
                + w["importance"] * p["importance"]
                + w["strength"] * p["strength"] * p["relevance"])
        assert math.isclose(p["score"], base * p["evidence"], rel_tol=1e-9)
        assert math.isclose(result["score"], p["score"], abs_tol=1e-6)
        assert trace.outcome[result["id"]] == "returned"
        assert trace.ranks[result["id"]]["bm25"][0] >= 1
    outcomes = set(trace.outcome.values())
    assert "mmr" in outcomes, trace.outcome  # the near-duplicate, removed for diversity


async def test_threshold_budget_and_no_access_bump(runtime):
    svc = runtime.service
    res = await svc.search("u", "dark mode editor", limit=5, score_threshold=0.6,
                           max_tokens=12, mmr_lambda=1.0, explain=True)
    trace = res["explain"]
    below = [mid for mid, o in trace.outcome.items() if o == "below_threshold"]
    assert below and all(trace.parts[mid]["score"] < 0.6 for mid in below)
    assert res["truncated"] and "budget" in trace.outcome.values()
    await svc.drain()
    rows, _ = await runtime.storage.list_memories("u", 10, 0)
    assert all(m.access_count == 0 for m in rows), "an explained search must not count as access"
