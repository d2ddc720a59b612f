"""The write transaction's primitives (one current row per fact key, ends, refresh, scrub)
and the retention reads."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ...errors import StorageConflict
from ...models import utcnow
from ...contracts import (Storage, TaskPage)
from ..helpers import current_of
from .base import A, B, T0, ContractBase, memory, operation


class WriteTests(ContractBase):
    async def test_find_active_by_triple(self, storage: Storage) -> None:
        hit = memory(A, "user's city is Porto", entity="user", attribute="city", value="Porto")
        gone = memory(A, "user's city was Lisbon", entity="user", attribute="city", value="Lisbon",
                      valid_until=T0)
        await storage.insert_memories([
            hit, gone,
            memory(A, "user's job", entity="user", attribute="job", value="chef"),
            memory(A, "cat's city", entity="cat", attribute="city", value="Porto"),
            memory(B, "user's city in B", entity="user", attribute="city", value="Oslo"),
        ])
        assert [m.id for m in await current_of(storage, A, "user", "city")] == [hit.id]
        assert await current_of(storage, A, "user", "nothing") == []

    async def test_one_current_row_per_fact_key_is_enforced(self, storage: Storage) -> None:
        # The database itself refuses a second current value (issue 13): a bug in a caller
        # must fail loudly, roll back, and leave the first row alone.
        first = memory(A, "uses vim", entity="user", attribute="editor", value="vim")
        await storage.insert_memories([first])
        second = memory(A, "uses emacs", entity="user", attribute="editor", value="emacs")
        other = memory(A, "unrelated", minutes=1)
        with pytest.raises(StorageConflict) as err:
            async with storage.write(A, [("user", "editor")]) as tx:
                await tx.insert([other])
                await tx.insert([second])
        assert err.value.kind == "second_current"
        assert [m.id for m in await current_of(storage, A, "user", "editor")] == [first.id]
        assert await storage.get_memories(A, [other.id]) == []  # rolled back whole
        with pytest.raises(StorageConflict):
            await storage.insert_memories([second])
        # Other namespaces and other keys are independent; history rows are not current.
        await storage.insert_memories([
            memory(B, "uses emacs", entity="user", attribute="editor", value="emacs"),
            memory(A, "used ed", entity="user", attribute="editor", value="ed", valid_until=T0)])

    async def test_duplicate_id_is_a_storage_conflict(self, storage: Storage) -> None:
        m = memory(A, "x")
        await storage.insert_memories([m])
        with pytest.raises(StorageConflict) as err:
            await storage.insert_memories([memory(B, "y", id=m.id)])
        assert err.value.kind == "duplicate_id"

    async def test_write_primitives(self, storage: Storage) -> None:
        old = memory(A, "lives in Lisbon", entity="user", attribute="city", value="Lisbon",
                     importance=0.4)
        theirs = memory(B, "lives in Oslo", entity="user", attribute="city", value="Oslo")
        await storage.insert_memories([old, theirs])
        new = memory(A, "lives in Porto", entity="user", attribute="city", value="Porto",
                     minutes=5)
        at = T0 + timedelta(minutes=5)
        v0 = await storage.namespace_version(A)
        async with storage.write(A, [("user", "city")]) as tx:
            assert [m.id for m in await tx.timeline([("user", "city")])] == [old.id]
            assert [m.id for m in await tx.current([old.id, theirs.id])] == [old.id]
            await tx.end([(old.id, at, new.id), (theirs.id, at, None)])  # B untouched
            await tx.insert([new])
            await tx.refresh([(new.id, 0.9), (old.id, 0.9)], at)  # old: no longer current
        assert await storage.namespace_version(A) != v0
        hist = await storage.history(A, "user", "city")
        assert [(m.id, m.valid_until, m.superseded_by) for m in hist] == [
            (old.id, at, new.id), (new.id, None, None)]
        assert hist[0].importance == 0.4 and hist[1].importance == 0.9
        assert (await storage.get_memories(B, [theirs.id]))[0].valid_until is None
        async with storage.write(A) as tx:
            assert [m.id for m in await tx.predecessors([new.id])] == [old.id]
            assert await tx.delete([old.id, theirs.id]) == 1  # never another namespace's row
        assert [m.id for m in await storage.history(A, "user", "city")] == [new.id]

    async def test_write_rolls_back_on_error(self, storage: Storage) -> None:
        m = memory(A, "keep me")
        await storage.insert_memories([m])
        with pytest.raises(RuntimeError):
            async with storage.write(A) as tx:
                await tx.delete([m.id])
                await tx.insert([memory(A, "never")])
                raise RuntimeError("boom")
        page, total = await storage.list_memories(A, 10, 0)
        assert [x.id for x in page] == [m.id] and total == 1

    async def test_finish_job_records_the_result_once(self, storage: Storage) -> None:
        await storage.enqueue(operation(A, "k"))
        job = await storage.claim_job(60)
        async with storage.write(A) as tx:
            assert await tx.finish_job(job.id, job.attempts, {"memory_ids": ["m1"]})
        done = await storage.get_operation(A, job.id)
        assert done.status == "done" and done.payload["result"] == {"memory_ids": ["m1"]}
        async with storage.write(A) as tx:
            assert not await tx.finish_job(job.id, job.attempts)  # not running any more
            assert await tx.finish_job(job.id, None)  # a record: it only has to exist
        async with storage.write(B) as tx:  # another namespace cannot finish it
            assert not await tx.finish_job(job.id, None)

    async def test_scrub_primitives(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A, "k2", payload={"text": "secret", "topic": ""}))
        m = memory(A, "after", session_id="s1", context="secret said before",
                   embedding=[1.0, 0.0] if storage.capabilities.vectors else None)
        n = memory(A, "other", session_id="s2", context="secret elsewhere")
        await storage.insert_memories([m, n])
        await storage.save_task(A, op.id, {"history": "secret"})
        async with storage.write(A) as tx:
            assert [o.id for o in await tx.operations([op.id])] == [op.id]
            await tx.set_payload(op.id, {"scrubbed": True})
            await tx.scrub_context(["s1"], ["secret"])
            await tx.delete_tasks([op.id])
        assert (await storage.get_operation(A, op.id)).payload == {"scrubbed": True}
        assert await storage.get_task(A, op.id) is None
        assert [h.id for h in await storage.search_fulltext(A, ["secret"], 5)] == [n.id]
        # its vector mixed in the forgotten neighbour's: gone, to be re-embedded from its text
        assert await storage.get_embeddings(A, [m.id]) == {}

    async def test_pinned_memories_are_not_decay_candidates(self, storage: Storage) -> None:
        a, b = memory(A, "pin me"), memory(A, "decay me")
        await storage.insert_memories([a, b])
        async with storage.write(A) as tx:
            assert await tx.set_pinned([a.id], True) == 1
        assert {r.id for r in await storage.decay_candidates(None, 100)} >= {b.id}
        assert a.id not in {r.id for r in await storage.decay_candidates(None, 100)}
        (got,) = await storage.get_memories(A, [a.id])
        assert got.pinned is True and got.public()["pinned"] is True
        async with storage.write(B) as tx:  # another namespace cannot unpin it
            assert await tx.set_pinned([a.id], False) == 0

    async def test_payloads_to_scrub_lists_finished_unscrubbed_operations(self, storage: Storage) -> None:
        await storage.enqueue(operation(A, "p1", payload={"text": "old"}))
        job = await storage.claim_job(60)
        async with storage.write(A) as tx:
            assert await tx.finish_job(job.id, job.attempts)
        later = utcnow() + timedelta(days=1)
        assert [o.id for o in await storage.payloads_to_scrub(later, 10)] == [job.id]
        assert await storage.payloads_to_scrub(utcnow() - timedelta(days=1), 10) == []
        async with storage.write(A) as tx:
            await tx.set_payload(job.id, {"scrubbed": True})
        assert await storage.payloads_to_scrub(later, 10) == []

    async def test_expire_tasks_deletes_tasks_not_updated_since(self, storage: Storage) -> None:
        await storage.save_task(A, "old", {"n": 1})
        await storage.save_task(B, "old-b", {"n": 2})
        assert await storage.expire_tasks(utcnow() - timedelta(days=1)) == 0
        assert await storage.expire_tasks(utcnow() + timedelta(seconds=1)) == 2
        assert await storage.get_task(A, "old") is None
        assert await storage.list_tasks(B) == TaskPage([], 0)
