"""The shared job queue: idempotency, SKIP LOCKED claims, leases, stale claims, liveness."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap

from recall_core.models import Memory

from recall_testkit.pg_rows import T0, mem, op
from recall_core.testing.helpers import complete_job


async def test_concurrent_enqueue_same_key_creates_one_operation(db_url, make_storage):
    # Two storages = two processes with their own pools, 50 callers racing on one key.
    a = await make_storage(db_url, pool_max=10)
    b = await make_storage(db_url, pool_max=10)
    results = await asyncio.gather(*[
        (a if i % 2 else b).enqueue(op("ns", "same-key")) for i in range(50)])
    created = [r for r in results if r[1]]
    assert len(created) == 1
    assert len({stored.id for stored, _ in results}) == 1
    assert await a.count_jobs("ns", "queued") == 1
    # The same key in another namespace is another operation.
    other, was_created = await a.enqueue(op("other", "same-key"))
    assert was_created and other.id != created[0][0].id


async def test_enqueue_returns_stored_operation_unchanged(storage):
    o = op("ns", "k1")
    stored, created = await storage.enqueue(o)
    assert created and stored == o
    again, created = await storage.enqueue(op("ns", "k1"))
    assert not created and again == o
    assert await storage.get_operation("ns", o.id) == o
    assert await storage.get_operation("other", o.id) is None


async def test_two_claimers_never_get_the_same_job(db_url, make_storage):
    a = await make_storage(db_url, pool_max=8)
    b = await make_storage(db_url, pool_max=8)
    ids = set()
    for i in range(60):
        stored, _ = await a.enqueue(op("ns", f"k{i}", minutes=i))
        ids.add(stored.id)

    async def drain(s):
        got = []
        while (job := await s.claim_job(60)) is not None:
            got.append(job.id)
        return got

    results = await asyncio.gather(*[drain(s) for s in (a, b, a, b, a, b)])
    claimed = [j for r in results for j in r]
    assert len(claimed) == len(set(claimed)) == 60
    assert set(claimed) == ids
    assert await a.count_jobs(None, "running") == 60
    assert await a.claim_job(60) is None


async def test_claim_takes_first_enqueued_and_sets_lease(storage):
    # Enqueue order, not created_at (the caller's said-at time): see the storage contract.
    first, _ = await storage.enqueue(op("ns", "late", minutes=5))
    await storage.enqueue(op("ns", "early", minutes=1))
    job = await storage.claim_job(30)
    assert job.id == first.id
    assert job.status == "running" and job.attempts == 1
    assert job.lease_until is not None and job.lease_until.tzinfo is not None


async def test_expired_lease_is_claimed_again_and_stale_claim_writes_nothing(storage):
    stored, _ = await storage.enqueue(op("ns", "k"))
    first = await storage.claim_job(0.3)
    assert first.attempts == 1
    assert await storage.claim_job(0.3) is None  # lease still held
    await asyncio.sleep(0.4)
    second = await storage.claim_job(30)
    assert second.id == stored.id and second.attempts == 2

    keep = mem("ns", "old fact")
    await storage.insert_memories([keep])
    # The first claimer wakes up late: nothing it computed may land.
    ok = await complete_job(storage, first, first.attempts, [mem("ns", "from stale claim")],
                                    supersede=[(keep.id, T0)], refresh=[(keep.id, 1.0)])
    assert ok is False
    rows, total = await storage.list_memories("ns", 10, 0)
    assert total == 1 and rows[0].id == keep.id and rows[0].importance == 0.5
    assert rows[0].valid_until is None
    assert (await storage.get_operation("ns", stored.id)).status == "running"
    # The current claim completes, exactly once.
    assert await complete_job(storage, second, second.attempts, [mem("ns", "fresh")],
                                      supersede=[(keep.id, T0)]) is True
    assert await complete_job(storage, second, second.attempts, [mem("ns", "again")]) is False
    done = await storage.get_operation("ns", stored.id)
    assert done.status == "done" and done.finished_at is not None and done.error is None
    rows, total = await storage.list_memories("ns", 10, 0)
    assert [m.text for m in rows] == ["fresh"]


async def test_complete_job_is_one_transaction(storage):
    stored, _ = await storage.enqueue(op("ns", "k"))
    job = await storage.claim_job(30)
    dup = mem("ns", "x")
    await storage.insert_memories([dup])
    try:
        # Second memory collides on the primary key: the whole completion must roll back.
        await complete_job(storage, job, job.attempts,
                                   [mem("ns", "new one"), Memory(id=dup.id, namespace="ns", text="y")])
    except Exception:
        pass
    else:
        raise AssertionError("duplicate id was accepted")
    rows, total = await storage.list_memories("ns", 10, 0)
    assert total == 1
    assert (await storage.get_operation("ns", stored.id)).status == "running"


async def test_refresh_keeps_the_higher_importance(storage):
    a, b = mem("ns", "a", importance=0.4), mem("ns", "b", importance=0.9)
    await storage.insert_memories([a, b])
    await storage.enqueue(op("ns", "k"))
    job = await storage.claim_job(30)
    assert await complete_job(storage, job, job.attempts, [], refresh=[(a.id, 0.7), (b.id, 0.2)])
    got = {m.id: m for m in await storage.get_memories("ns", [a.id, b.id])}
    assert got[a.id].importance == 0.7 and got[b.id].importance == 0.9
    assert got[a.id].last_accessed_at is not None


async def test_fail_job_retry_and_give_up(storage):
    stored, _ = await storage.enqueue(op("ns", "k"))
    job = await storage.claim_job(30)
    await storage.fail_job(job.id, job.attempts, "model busy", retry=True)
    back = await storage.get_operation("ns", stored.id)
    assert back.status == "queued" and back.error == "model busy" and back.lease_until is None
    job = await storage.claim_job(30)
    assert job.attempts == 2
    await storage.fail_job(job.id, 1, "stale claimer", retry=True)  # ignored: not its claim
    assert (await storage.get_operation("ns", stored.id)).status == "running"
    await storage.fail_job(job.id, job.attempts, "bad key", retry=False)
    final = await storage.get_operation("ns", stored.id)
    assert final.status == "failed" and final.error == "bad key" and final.finished_at is not None
    assert await storage.claim_job(30) is None
    assert await storage.count_jobs("ns", "failed") == 1


async def test_requeue_running_leaves_live_siblings_alone(db_url, make_storage):
    a = await make_storage(db_url)
    b = await make_storage(db_url)
    await a.enqueue(op("ns", "k1", minutes=1))
    await a.enqueue(op("ns", "k2", minutes=2))
    mine = await a.claim_job(600)
    theirs = await b.claim_job(600)
    assert {mine.idempotency_key, theirs.idempotency_key} == {"k1", "k2"}
    # `a` restarting its worker re-queues its own running job, not the live sibling's.
    assert await a.requeue_running() == 1
    assert (await a.get_operation("ns", mine.id)).status == "queued"
    assert (await a.get_operation("ns", theirs.id)).status == "running"
    # Once b is gone (its connections closed), a start-up re-queues b's job at once.
    await b.close()
    assert await a.requeue_running() == 1
    assert (await a.get_operation("ns", theirs.id)).status == "queued"


KILLED_WORKER = textwrap.dedent("""
    import asyncio, os, sys, time
    from recall_postgres import PostgresStorage

    async def main():
        s = PostgresStorage(sys.argv[1])
        await s.open()
        job = await s.claim_job(600)
        print(job.id, flush=True)
        await asyncio.sleep(60)  # "working" until SIGKILL

    asyncio.run(main())
""")


async def claimed_then_killed(db_url, survivor):
    """Enqueue a job, let another process claim it (600 s lease) and SIGKILL that process."""
    stored, _ = await survivor.enqueue(op("ns", "k"))
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WORKER, db_url],
                            stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)
        assert line.strip() == stored.id
        assert await survivor.claim_job(600) is None  # its owner is alive: left alone
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return stored


async def test_job_of_a_killed_process_is_not_lost(db_url, make_storage):
    survivor = await make_storage(db_url)
    stored = await claimed_then_killed(db_url, survivor)
    # The server notices the dead backend; its advisory lock goes with it.
    for _ in range(50):
        if await survivor.requeue_running() == 1:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the killed process's job was not re-queued")
    job = await survivor.claim_job(30)
    assert job.id == stored.id and job.attempts == 2
    assert await complete_job(survivor, job, job.attempts, [mem("ns", "done once")])


async def test_a_running_sibling_takes_over_a_killed_process_job_at_once(db_url, make_storage):
    # No restart and a lease of 10 minutes: the next claim of a live process takes the job
    # once the killed process's owner lock is gone with its connection.
    survivor = await make_storage(db_url)
    stored = await claimed_then_killed(db_url, survivor)
    job = None
    for _ in range(50):
        job = await survivor.claim_job(600)
        if job is not None:
            break
        await asyncio.sleep(0.1)
    assert job is not None and job.id == stored.id and job.attempts == 2
    assert await complete_job(survivor, job, job.attempts, [mem("ns", "done once")])
    assert await survivor.claim_job(600) is None
