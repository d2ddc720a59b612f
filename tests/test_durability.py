"""Data and queued jobs survive restarts and kill -9 of a real `recall serve` process."""

from __future__ import annotations

import asyncio
import json

import pytest

from recall_testkit.serverproc import Agent, ServerProcess, recall_cli

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.slow]


async def test_data_survives_restart(tmp_path):
    srv = ServerProcess(str(tmp_path / "r.db"), tmp_path).start()
    try:
        token = srv.token("carol")
        async with Agent(srv.url, token) as a:
            await a.ok("store_memory", text="I work at Acme Robotics.", topic="work")
            await a.wait_idle()
        srv.stop()
        srv.start()
        async with Agent(srv.url, token) as a:
            found = await a.ok("search_memories", query="where does the user work")
            assert any("Acme" in r["text"] for r in found["results"])
    finally:
        srv.stop()


async def test_kill9_with_500_jobs_loses_nothing_and_duplicates_nothing(tmp_path):
    # A slow single worker keeps most of the 500 jobs queued or running at the kill.
    env = {"RECALL_WORKER__CONCURRENCY": "1", "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.slow_extractor",
           "RECALL_EXTRACTOR": "slow"}
    srv = ServerProcess(str(tmp_path / "r.db"), tmp_path, env=env).start()
    texts = [f"Fact {i}: the build agent number {i} runs on host h{i}.example.lan." for i in range(500)]
    try:
        token = srv.token("dave")
        async with Agent(srv.url, token) as a:
            sem = asyncio.Semaphore(20)

            async def put(i: int) -> None:
                async with sem:
                    await a.ok("store_memory", text=texts[i], idempotency_key=f"job-{i}")

            await asyncio.gather(*(put(i) for i in range(500)))
            stats = await a.ok("get_memory_stats")
        srv.kill()
        assert stats["pending_extractions"] > 0, "kill should happen while jobs are pending"

        status = json.loads(recall_cli("status", "--db", srv.db, "--json").stdout)
        assert sum(status["jobs"].values()) == 500

        srv.env.pop("RECALL_WORKER__CONCURRENCY")
        srv.start()
        async with Agent(srv.url, token) as a:
            # Retrying every store after the crash must not queue anything twice.
            for i in range(0, 500, 50):
                again = await a.ok("store_memory", text=texts[i], idempotency_key=f"job-{i}")
                assert again["queued"] is False
            await a.wait_idle(120)
            seen: list[str] = []
            offset = 0
            while True:
                page = await a.ok("inspect_memories", limit=50, offset=offset)
                seen += [m["text"] for m in page["memories"]]
                if not page["has_more"]:
                    break
                offset = page["next_offset"]
        status = json.loads(recall_cli("status", "--db", srv.db, "--json").stdout)
        assert status["jobs"]["done"] == 500 and status["jobs"]["failed"] == 0
        assert len(seen) == len(set(seen)) == 500
        assert set(seen) == set(texts)
    finally:
        srv.stop()
