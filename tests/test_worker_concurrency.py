"""A slow extractor never holds up tool calls; the worker runs `worker.concurrency` jobs at
once; get_memory_stats.pending_extractions is the queue's real count.

The extractor is held at a gate (a file the test creates), so "every worker slot is busy"
is a fact of the test, not a matter of timing."""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import time

import pytest

from recall_core.server.auth import create_token
from recall_sqlite import SQLiteSettings, make_storage
from recall_testkit.serverproc import Agent, ServerProcess

DELAY = 0.5  # seconds per extraction once the gate is open
CONCURRENCY = 3
JOBS = 9     # three rounds of three


def job_counts(db: str) -> dict[str, int]:
    """The queue as the database has it, in one read."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return dict(con.execute("SELECT status, count(*) FROM operations GROUP BY status"))
    finally:
        con.close()


async def timed(latencies: list[float], agent: Agent, tool: str, **args):
    t = time.monotonic()
    data = await agent.ok(tool, **args)
    latencies.append(time.monotonic() - t)
    return data


@pytest.mark.slow
async def test_slow_extractor_never_blocks_tool_calls(tmp_path):
    db, gate = str(tmp_path / "r.db"), tmp_path / "gate"
    env = {"RECALL_PLUGIN_MODULES": "recall_testkit.plugins.gated_extractor",
           "RECALL_EXTRACTOR": "gated",
           "GATED_EXTRACTOR_GATE": str(gate), "GATED_EXTRACTOR_DELAY": str(DELAY),
           "RECALL_WORKER__CONCURRENCY": str(CONCURRENCY)}
    seeded = make_storage(f"sqlite:///{db}", SQLiteSettings())
    await seeded.open()
    token = await create_token(seeded, "gina")
    await seeded.close()
    srv = ServerProcess(db, tmp_path, env=env).start()
    try:
        async with Agent(srv.url, token) as a:
            await a.ok("get_memory_stats")  # a session's first call pays one-off warm-up
            latencies: list[float] = []
            texts = [f"Service number {i} listens on port {8000 + i}." for i in range(JOBS)]
            acks = await asyncio.gather(*(timed(latencies, a, "store_memory", text=t, topic="ports")
                                          for t in texts))
            assert all(ack["queued"] for ack in acks)  # acknowledged while no job can finish

            # every slot takes a job and sits in the extractor; the rest wait in the queue
            deadline = time.monotonic() + 10
            while job_counts(db).get("running", 0) < CONCURRENCY:
                assert time.monotonic() < deadline, job_counts(db)
                await asyncio.sleep(0.02)
            for _ in range(20):  # one second of tool calls with the worker fully busy
                stats = await timed(latencies, a, "get_memory_stats")
                assert (stats["pending_extractions"], stats["total"]) == (JOBS, 0)
                await timed(latencies, a, "search_memories", query="port of service 3")
                await timed(latencies, a, "inspect_memories")
                assert job_counts(db) == {"running": CONCURRENCY, "queued": JOBS - CONCURRENCY}
                await asyncio.sleep(0.05)
            busy = list(latencies)

            gate.touch()
            opened = time.monotonic()
            samples: list[tuple[int, int]] = []
            most_running = 0
            while True:
                stats = await timed(latencies, a, "get_memory_stats")
                samples.append((stats["pending_extractions"], stats["total"]))
                most_running = max(most_running, job_counts(db).get("running", 0))
                if stats["pending_extractions"] == 0:
                    break
                assert time.monotonic() - opened < 60, samples
                await asyncio.sleep(0.05)
            elapsed = time.monotonic() - opened

        print(f"busy worker: {len(busy)} tool calls, "
              f"median {statistics.median(busy) * 1000:.1f} ms, "
              f"max {max(busy) * 1000:.1f} ms; {JOBS} jobs drained in {elapsed:.2f} s")
        # Tool calls answered while the extractor held every slot (indefinitely: they could
        # not have been waiting for it).
        assert statistics.median(busy) < 0.1 and max(busy) < 1.0, busy
        # never more than the configured number of jobs at once: three rounds of DELAY
        assert most_running <= CONCURRENCY and elapsed >= (JOBS / CONCURRENCY) * DELAY * 0.9
        # pending only goes down, memories only go up, and a finished job's memory is counted
        # by the time pending drops (pending is read first: a job finishing between the two
        # reads shows in both, at most one per worker slot)
        pendings = [p for p, _ in samples]
        assert pendings == sorted(pendings, reverse=True)
        assert all(JOBS <= p + n <= JOBS + CONCURRENCY for p, n in samples), samples
        assert samples[-1] == (0, JOBS)
        assert job_counts(db) == {"done": JOBS}
    finally:
        gate.touch()
        srv.stop()
