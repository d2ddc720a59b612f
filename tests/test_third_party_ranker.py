"""A third-party ranker, installed as its own package with one entry point
(examples/recall-ranker-newest), is picked up and used by a running server."""

from __future__ import annotations

import json

import pytest

from recall_testkit.serverproc import Agent, ServerProcess, recall_cli


def test_entry_point_plugin_is_listed():
    rows = json.loads(recall_cli("plugins", "--json").stdout)
    newest = [r for r in rows if r["name"] == "recall-ranker-newest"]
    assert newest and newest[0]["hooks"] == ["register_rankers"] and newest[0]["version"] == "0.1.0"


@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.slow
async def test_running_server_fuses_the_third_party_ranker(tmp_path):
    cfg = tmp_path / "recall.toml"
    cfg.write_text("[rankers]\nbm25 = 1.0\nnewest = 0.5\n\n[plugins.newest]\nwindow = 5\n")
    srv = ServerProcess(str(tmp_path / "r.db"), tmp_path, args=("--config", str(cfg))).start()
    try:
        async with Agent(srv.url, srv.token("t")) as a:
            await a.ok("store_memory", text="The deploy freeze starts on December 20.")
            await a.wait_idle()
            # No keyword matches: only the newest ranker can answer.
            res = await a.ok("search_memories", query="zebra giraffe")
            assert [r["text"] for r in res["results"]] == ["The deploy freeze starts on December 20."]
            # Searching the past: the ranker ranks the rows valid then with its rank_pool (the
            # Ranker contract's second method), so the keyword-free query still finds it.
            past = await a.ok("search_memories", query="zebra giraffe", as_of="2999-01-01")
            assert [r["text"] for r in past["results"]] == ["The deploy freeze starts on December 20."]
            assert past["degraded"] == []
    finally:
        srv.stop()
    # Without a weight in the config it stays off: the same query finds nothing.
    srv = ServerProcess(str(tmp_path / "r.db"), tmp_path).start()
    try:
        async with Agent(srv.url, srv.token("t2")) as a:
            await a.ok("store_memory", text="Lunch is at noon.")
            await a.wait_idle()
            assert (await a.ok("search_memories", query="zebra giraffe"))["results"] == []
    finally:
        srv.stop()
