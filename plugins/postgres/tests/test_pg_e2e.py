"""Core's real runtime (service, worker, stub extractor, BM25 on tsvector) on Postgres, with
two 'servers' sharing one database and one queue."""

from __future__ import annotations

import asyncio

import pytest

import recall_extractors
import recall_postgres
from recall_core.config import RecallConfig
from recall_core.server.runtime import build_runtime
from recall_core.testing import plugin_manager

WORDS = ["amber", "basalt", "cobalt", "dahlia", "ember", "fjord", "garnet", "harbor", "indigo",
         "juniper", "kestrel", "lagoon", "magnet", "nectar", "obsidian", "pepper", "quartz",
         "raven", "saffron", "thistle"]


def plugins():
    return plugin_manager(recall_postgres, recall_extractors, names=["postgres", "extractors"])


def config(url: str) -> RecallConfig:
    return RecallConfig(db=url, extractor="stub", rankers={"bm25": 1.0},
                        worker={"concurrency": 2, "poll_interval": 0.05, "lease_seconds": 30},
                        decay={"interval": 0})


async def wait_idle(storage, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        if (await storage.count_jobs(None, "queued") == 0
                and await storage.count_jobs(None, "running") == 0):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("jobs did not drain")


async def test_two_servers_share_one_queue_end_to_end(db_url):
    try:
        one = await build_runtime(config(db_url), plugins())
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"runtime failed to start on postgres: {exc}")
    two = await build_runtime(config(db_url), plugins())
    try:
        assert type(one.storage).__name__ == "PostgresStorage"
        texts = [f"Project {a} ships with {b} support." for a in WORDS[:10] for b in WORDS[10:14]]
        acks = await asyncio.gather(*[
            (one if i % 2 else two).service.store("team", t, topic="releases",
                                                  idempotency_key=f"k{i}")
            for i, t in enumerate(texts)])
        assert all(a["queued"] for a in acks)
        same = await asyncio.gather(*[
            (one if i % 2 else two).service.store("team", "Project zephyr ships in May.",
                                                  idempotency_key="dup") for i in range(10)])
        assert sum(1 for a in same if a["queued"]) == 1 and len({a["job_id"] for a in same}) == 1

        await wait_idle(one.storage)
        pool = one.storage.pool
        jobs = await pool.fetch("SELECT status, attempts FROM operations")
        assert len(jobs) == 41 and {(j["status"], j["attempts"]) for j in jobs} == {("done", 1)}
        per_job = await pool.fetch(
            "SELECT source_job_id, count(*) AS n FROM memories GROUP BY source_job_id")
        assert len(per_job) == 41 and {r["n"] for r in per_job} == {1}

        found = await two.service.search("team", "which project ships with nectar?", limit=20)
        texts_found = [r["text"] for r in found["results"]]
        assert "nectar" in texts_found[0]
        assert sum("nectar" in t for t in texts_found) == 10
        assert (await one.service.search("other-team", "nectar", limit=5))["results"] == []
        stats = await one.service.stats("team")
        assert stats["total"] == 41 and stats["pending_extractions"] == 0
        erased = await two.service.delete_namespace("team", "DELETE MY DATA")
        assert erased["memories_deleted"] == 41
    finally:
        await one.close()
        await two.close()
