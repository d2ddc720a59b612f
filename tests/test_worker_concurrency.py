"""A slow extractor never holds up tool calls; the worker runs `worker.concurrency` jobs at
once; get_memory_stats.pending_extractions is the queue's real count."""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import time
from pathlib import Path

from recall_core.auth import create_token
from recall_sqlite import SQLiteSettings, make_storage
from serverproc import Agent, ServerProcess

TESTS = Path(__file__).parent
DELAY = 1.0  # seconds per extraction
CONCURRENCY = 3
JOBS = 9     # three rounds of three


def job_counts(db: str) -> dict[str, int]:
    """The queue as the database has it, in one read."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return dict(con.execute("SELECT status, count(*) FROM operations GROUP BY status"))
    finally:
        con.close()


async def test_slow_extractor_never_blocks_tool_calls(tmp_path):
    db = str(tmp_path / "r.db")
    env = {"RECALL_PLUGIN_MODULES": "plugins_for_tests.slow_extractor", "RECALL_EXTRACTOR": "slow",
           "SLOW_EXTRACTOR_DELAY": str(DELAY), "PYTHONPATH": str(TESTS),
           "RECALL_WORKER__CONCURRENCY": str(CONCURRENCY)}
    seeded = make_storage(f"sqlite:///{db}", SQLiteSettings())
    await seeded.open()
    token = await create_token(seeded, "gina")
    await seeded.close()
    srv = ServerProcess(db, tmp_path, env=env).start()
    try:
        async with Agent(srv.url, token) as a:
            texts = [f"Service number {i} listens on port {8000 + i}." for i in range(JOBS)]
            started = time.monotonic()
            acks = await asyncio.gather(*(a.ok("store_memory", text=t, topic="ports") for t in texts))
            store_seconds = time.monotonic() - started
            assert all(ack["queued"] for ack in acks)
            assert store_seconds < DELAY, f"storing waited for extraction ({store_seconds:.2f} s)"
            # nothing can have finished yet: every job is pending, none twice
            first = await a.ok("get_memory_stats")
            assert first["pending_extractions"] == JOBS and first["total"] == 0

            latencies: list[float] = []
            seen_running: list[int] = []
            samples: list[tuple[int, int]] = []
            while True:
                t = time.monotonic()
                stats = await a.ok("get_memory_stats")
                latencies.append(time.monotonic() - t)
                t = time.monotonic()
                await a.ok("search_memories", query="which port does service 3 listen on")
                latencies.append(time.monotonic() - t)
                samples.append((stats["pending_extractions"], stats["total"]))
                seen_running.append(job_counts(db).get("running", 0))
                if stats["pending_extractions"] == 0:
                    break
                assert time.monotonic() - started < 60, samples
                await asyncio.sleep(0.05)
            elapsed = time.monotonic() - started

        print(f"latency median {statistics.median(latencies)*1000:.1f} ms, max {max(latencies)*1000:.1f} ms, elapsed {elapsed:.2f} s, samples {len(samples)}")
        # tool calls answered at once while every worker slot slept in the extractor
        assert max(latencies) < 0.5 and statistics.median(latencies) < 0.1, latencies
        # the configured number of jobs ran side by side, never more
        assert max(seen_running) == CONCURRENCY
        assert elapsed < JOBS / CONCURRENCY * DELAY + 2.5, elapsed
        # pending only goes down; memories only go up; a finished job's memory is already
        # counted when pending drops (pending is read first, so a job finishing between the
        # two reads shows in both, at most one per worker slot)
        pendings = [p for p, _ in samples]
        assert pendings == sorted(pendings, reverse=True)
        assert all(JOBS <= p + n <= JOBS + CONCURRENCY for p, n in samples), samples
        assert samples[-1] == (0, JOBS)
        assert job_counts(db) == {"done": JOBS}
    finally:
        srv.stop()
