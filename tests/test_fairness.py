"""A shared server is fair across namespaces (issue 28), through a real `recall serve` on
SQLite and (with RECALL_TEST_PG_URL) Postgres:

- a backlog of thousands of stores from one namespace, said-at times backdated years, never
  makes another namespace's store wait behind it (the queue takes turns; created_at, the
  caller's "when it was said", never sets the order);
- per namespace, a cap on queued stores (QUEUE_FULL) and on call rate (RATE_LIMITED), each
  with retry_after in the envelope, and neither touching another namespace.
(The claim rule itself is in the storage contract: QueueTests.test_claims_take_turns_...)
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

import pytest

from recall_core.cli.common import open_storage
from recall_core.config import load_config
from recall_core.models import Operation
from recall_core.server.auth import create_token
from recall_testkit.serverproc import Agent, ServerProcess

try:
    from recall_testkit.postgres import Schemas, pg_scratch, pg_url  # noqa: F401 - for the postgres param
except ImportError as exc:  # recall-postgres not installed
    _missing = str(exc)

    @pytest.fixture(scope="session")
    def pg_scratch():
        pytest.skip(f"recall-postgres is not installed ({_missing})")

BACKLOG = 3000
LONG_AGO = datetime(2001, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path):
    if request.param == "sqlite":
        yield str(tmp_path / "recall.db")
        return
    schemas = Schemas(request.getfixturevalue("pg_scratch"))
    yield asyncio.run(schemas.create())
    asyncio.run(schemas.drop_all())


async def tokens(db: str, *namespaces: str) -> list[str]:
    storage = await open_storage(load_config(None, db=db), create=True)
    try:
        return [await create_token(storage, ns) for ns in namespaces]
    finally:
        await storage.close()


async def backdated_backlog(db: str, namespace: str, n: int) -> None:
    """n stores as store_memory queues them, each said years before anything else."""
    storage = await open_storage(load_config(None, db=db), create=True)
    try:
        for i in range(n):
            await storage.enqueue(Operation(
                namespace=namespace, idempotency_key=f"backlog-{i}", kind="extract",
                created_at=LONG_AGO + timedelta(seconds=i),
                payload={"text": f"Build {i} of the nightly job took {i % 97} minutes.",
                         "topic": "builds", "session_id": None, "agent_id": None}))
    finally:
        await storage.close()


async def queued(db: str, namespace: str) -> int:
    storage = await open_storage(load_config(None, db=db), create=True)
    try:
        return await storage.count_jobs(namespace, "queued")
    finally:
        await storage.close()


@pytest.mark.slow
async def test_one_store_from_b_is_done_while_a_backdated_backlog_from_a_waits(db, tmp_path):
    (b_token,) = await tokens(db, "b")
    await backdated_backlog(db, "a", BACKLOG)
    srv = ServerProcess(db, tmp_path).start()
    try:
        async with Agent(srv.url, b_token) as b:
            started = time.monotonic()
            await b.ok("store_memory", text="I live in Lisbon.", topic="home",
                       created_at="2026-11-01T10:00:00Z")
            stats = await b.wait_idle(30)
            waited = time.monotonic() - started
        assert stats["total"] == 1, stats
        left = await queued(db, "a")
        # B's job did not wait for A's backlog: most of it is still queued.
        assert left > BACKLOG // 2, (left, waited)
    finally:
        srv.stop()


async def test_queue_and_rate_limits_per_namespace_answer_with_retry_after(db, tmp_path):
    a_token, b_token = await tokens(db, "a", "b")
    srv = ServerProcess(db, tmp_path, env={
        "RECALL_WORKER__CONCURRENCY": "0", "RECALL_TENANTS__MAX_QUEUED_JOBS": "3",
        "RECALL_TENANTS__REQUESTS_PER_SECOND": "0.5", "RECALL_TENANTS__BURST": "5"}).start()
    try:
        async with Agent(srv.url, a_token) as a, Agent(srv.url, b_token) as b:
            for i in range(3):
                await a.ok("store_memory", text=f"Note {i}.", topic="t")
            full = await a.call("store_memory", text="One too many.", topic="t")
            assert full["code"] == "QUEUE_FULL" and full["data"]["retry_after"] > 0, full
            assert "max_queued_jobs" in full["error"]
            await b.ok("store_memory", text="B's own note.", topic="t")  # B has room
            # a spends its burst of 5 calls (4 so far; the bucket refills 0.5 a second):
            # then it is refused, while b is not.
            for _ in range(8):
                limited = await a.call("get_memory_stats")
                if limited["status"] == "error":
                    break
            assert limited["code"] == "RATE_LIMITED", limited
            assert 0 < limited["data"]["retry_after"] <= 2.0, limited
            assert "per second" in limited["error"]
            assert (await b.ok("get_memory_stats"))["pending_extractions"] == 1
            await asyncio.sleep(limited["data"]["retry_after"] + 0.05)
            assert (await a.ok("get_memory_stats"))["pending_extractions"] == 3
    finally:
        srv.stop()
