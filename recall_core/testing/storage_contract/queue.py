"""The durable job queue: claims, leases, attempts, retries, failures, counts."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any


from ...models import utcnow
from ...contracts import (Storage)
from ..helpers import complete_job, current_of
from .base import A, B, T0, ContractBase, assert_utc, memory, operation, same_memory


class QueueTests(ContractBase):
    async def test_claim_job_takes_enqueue_order_and_leases_it(self, storage: Storage) -> None:
        # created_at is when the text was said (a caller's value): it never sets the order.
        assert await storage.claim_job(60) is None
        ops = [operation(A, "first", minutes=2), operation(A, "second", minutes=-10**6),
               operation(A, "third", minutes=1)]
        for op in ops:
            await storage.enqueue(op)
        before = utcnow()
        claimed = [await storage.claim_job(60) for _ in range(3)]
        assert [c.idempotency_key for c in claimed] == ["first", "second", "third"]  # type: ignore[union-attr]
        for c in claimed:
            assert c is not None and c.status == "running" and c.attempts == 1
            assert c.lease_until is not None and c.lease_until > before + timedelta(seconds=30)
            assert_utc(c.lease_until, c.created_at)
        assert await storage.claim_job(60) is None  # unexpired leases are not re-claimable
        assert await storage.count_jobs(None, "running") == 3

    async def test_claims_take_turns_across_namespaces(self, storage: Storage) -> None:
        """A backlog from one namespace, backdated or not, never makes another wait behind
        it: the namespace served least recently goes next (issue 28)."""
        backlog = 300
        for i in range(backlog):  # said years ago, as a backdating tenant would claim
            await storage.enqueue(operation(A, f"a{i}", minutes=-10**6 + i))
        first = await storage.claim_job(60)
        assert first is not None and first.idempotency_key == "a0"
        for i in range(3):
            await storage.enqueue(operation(B, f"b{i}", minutes=10 + i))
        got = [(await storage.claim_job(60)) for _ in range(6)]
        keys = [op.idempotency_key for op in got if op is not None]
        assert keys == ["b0", "a1", "b1", "a2", "b2", "a3"]
        # With B's queue empty, A's backlog goes on in its own order.
        assert (await storage.claim_job(60)).idempotency_key == "a4"  # type: ignore[union-attr]

    async def test_expired_lease_is_claimed_again(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        again = await self.claim_expired(storage, op.id, attempts=1)
        assert again.status == "running"
        assert await storage.claim_job(60) is None

    async def test_concurrent_claims_take_each_job_once(self, storage: Storage, reopen: Any) -> None:
        other = await reopen()
        ids = {(await storage.enqueue(operation(A, minutes=i)))[0].id for i in range(10)}
        got = await asyncio.gather(*((storage if i % 2 else other).claim_job(60) for i in range(20)))
        claimed = [op.id for op in got if op is not None]
        assert sorted(claimed) == sorted(ids)

    async def test_complete_job_writes_everything_and_marks_done(self, storage: Storage) -> None:
        old = memory(A, "user's editor is vim", entity="user", attribute="editor", value="vim")
        kept = memory(A, "user likes tea", importance=0.25, minutes=1)
        await storage.insert_memories([old, kept])
        op, _ = await storage.enqueue(operation(A))
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.id == op.id
        new = memory(A, "user's editor is helix", entity="user", attribute="editor", value="helix",
                     source_job_id=op.id, minutes=2)
        at = T0 + timedelta(hours=1)
        assert await complete_job(storage, op, 1, [new], supersede=[(old.id, at)],
                                          refresh=[(kept.id, 0.75)]) is True
        done = await storage.get_operation(A, op.id)
        assert done is not None and done.status == "done" and done.error is None
        assert done.finished_at is not None
        assert_utc(done.finished_at)
        assert [m.id for m in await current_of(storage, A, "user", "editor")] == [new.id]
        history = await storage.history(A, "user", "editor")
        assert [m.id for m in history] == [old.id, new.id]
        assert history[0].valid_until == at and history[1].valid_until is None
        refreshed = (await storage.get_memories(A, [kept.id]))[0]
        assert refreshed.importance == 0.75 and refreshed.last_accessed_at is not None
        # refresh never lowers importance
        op2, _ = await storage.enqueue(operation(A, minutes=5))
        await storage.claim_job(60)
        assert await complete_job(storage, op2, 1, [], refresh=[(kept.id, 0.25)]) is True
        assert (await storage.get_memories(A, [kept.id]))[0].importance == 0.75
        assert await storage.count_jobs(A, "done") == 2

    async def test_complete_job_with_stale_claim_writes_nothing(self, storage: Storage) -> None:
        old = memory(A, "user's editor is vim")
        await storage.insert_memories([old])
        op, _ = await storage.enqueue(operation(A))
        await self.claim_expired(storage, op.id, attempts=1)
        late = memory(A, "written by the stale claim", minutes=1)
        assert await complete_job(storage, op, 1, [late], supersede=[(old.id, T0)]) is False
        assert await storage.get_memories(A, [late.id]) == []
        assert [m.id for m in await storage.get_memories(A, [old.id])] == [old.id]
        still = await storage.get_operation(A, op.id)
        assert still is not None and still.status == "running" and still.attempts == 2
        fresh = memory(A, "written by the live claim", minutes=1)
        assert await complete_job(storage, op, 2, [fresh]) is True
        # already done: a repeat of the same claim writes nothing either
        assert await complete_job(storage, op, 2, [memory(A, "twice", minutes=2)]) is False
        assert [m.text for m in await self.all_memories(storage, A)] == [
            "user's editor is vim", "written by the live claim"]

    async def test_complete_job_needs_a_running_job(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        assert await complete_job(storage, op, 0, [memory(A, "x")]) is False
        assert await complete_job(storage, (A, "no-such-job"), 1, [memory(A, "x")]) is False
        assert await self.all_memories(storage, A) == []
        assert (await storage.get_operation(A, op.id)).status == "queued"  # type: ignore[union-attr]

    async def test_complete_job_is_all_or_nothing(self, storage: Storage) -> None:
        existing = memory(A, "already stored")
        old = memory(A, "to be superseded", minutes=1)
        await storage.insert_memories([existing, old])
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        fine = memory(A, "would be new", minutes=2)
        clash = memory(A, "reuses an existing id", id=existing.id, minutes=3)
        try:
            ok = await complete_job(storage, op, 1, [fine, clash], supersede=[(old.id, T0)])
        except Exception:  # noqa: BLE001 - raising is one acceptable way to refuse
            ok = False
        assert ok is False
        assert await storage.get_memories(A, [fine.id]) == []
        assert [m.id for m in await storage.get_memories(A, [old.id])] == [old.id]
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "running" and job.attempts == 1
        assert await complete_job(storage, op, 1, [fine], supersede=[(old.id, T0)]) is True

    async def test_complete_job_cannot_touch_another_namespace(self, storage: Storage) -> None:
        theirs = memory(B, "belongs to B", importance=0.25)
        await storage.insert_memories([theirs])
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        assert await complete_job(storage, op, 1, [], supersede=[(theirs.id, T0)],
                                          refresh=[(theirs.id, 1.0)]) is True
        same_memory((await storage.get_memories(B, [theirs.id]))[0], theirs)

    async def test_fail_job_with_retry_requeues(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        await storage.fail_job(op.id, 1, "model overloaded", retry=True)
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "queued" and job.error == "model overloaded"
        again = await storage.claim_job(60)
        assert again is not None and again.id == op.id and again.attempts == 2

    async def test_fail_job_retry_at_holds_the_job_back(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        later, _ = await storage.enqueue(operation(A, key="later", minutes=1))
        await storage.claim_job(60)
        held = datetime.now(timezone.utc) + timedelta(seconds=1.5)
        assert await storage.fail_job(op.id, 1, "rate limited", retry=True, retry_at=held) is True
        assert await storage.count_jobs(A, "queued") == 2  # still pending, exactly
        nxt = await storage.claim_job(60)
        assert nxt is not None and nxt.id == later.id  # the held job is skipped, not lost
        assert await storage.claim_job(60) is None
        await asyncio.sleep(1.7)
        again = await storage.claim_job(60)
        assert again is not None and again.id == op.id and again.attempts == 2

    async def test_fail_job_without_retry_is_final(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        await storage.fail_job(op.id, 1, "bad API key", retry=False)
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "failed" and job.error == "bad API key"
        assert await storage.claim_job(60) is None
        assert await storage.count_jobs(A, "failed") == 1

    async def test_fail_job_with_stale_claim_is_ignored(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await self.claim_expired(storage, op.id, attempts=1)
        assert await storage.fail_job(op.id, 1, "late failure", retry=False) is False
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "running" and job.attempts == 2
        assert job.error is None

    async def test_requeue_running(self, storage: Storage) -> None:
        for i in range(3):
            await storage.enqueue(operation(A, minutes=i))
        first = await storage.claim_job(60)
        await storage.claim_job(60)
        assert await storage.requeue_running() == 2
        assert await storage.count_jobs(A, "queued") == 3
        assert await storage.count_jobs(A, "running") == 0
        assert first is not None
        # the claim from before the restart can no longer complete
        assert await complete_job(storage, first, 1, [memory(A, "x")]) is False
        again = await storage.claim_job(60)
        assert again is not None and again.id == first.id and again.attempts == 2
        assert await storage.requeue_running() == 1

    async def test_count_jobs_by_namespace_and_status(self, storage: Storage) -> None:
        await storage.enqueue(operation(A, minutes=0))
        await storage.enqueue(operation(A, minutes=1))
        await storage.enqueue(operation(B, minutes=2))
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.namespace == A
        assert await storage.count_jobs(A, "queued") == 1
        assert await storage.count_jobs(A, "running") == 1
        assert await storage.count_jobs(B, "queued") == 1
        assert await storage.count_jobs(None, "queued") == 2
        assert await storage.count_jobs(None, "done") == 0
        # several statuses in one read
        assert await storage.count_jobs(A, ("queued", "running")) == 2
        assert await storage.count_jobs(None, ["queued", "running"]) == 3
        assert await storage.count_jobs(A, ("done", "failed")) == 0
