"""The decay job's reads and writes."""

from __future__ import annotations

import pytest

from datetime import timedelta


from ...models import ToolCallRecord
from ...contracts import (DecayRow, Storage, TaskPage)
from ..helpers import complete_job, delete, supersede
from .base import A, B, T0, ContractBase, assert_utc, memory, operation


class DecayTests(ContractBase):
    @staticmethod
    async def decay_rows(storage: Storage, page: int = 1000) -> dict[str, DecayRow]:
        """Every row decay_candidates returns, walking pages of `page` like run_decay."""
        out: dict[str, DecayRow] = {}
        after: str | None = None
        while True:
            rows = await storage.decay_candidates(after, page)
            for r in rows:
                assert r.id not in out, f"decay_candidates returned {r.id} twice"
                out[r.id] = r
            if len(rows) < page:
                return out
            after = rows[-1].id

    async def test_decay_candidates_page_every_active_memory_of_every_namespace(
            self, storage: Storage) -> None:
        rows = [memory(ns, f"{ns} memory {i}", importance=i / 10, minutes=i)
                for ns in (A, B) for i in range(7)]
        gone = memory(A, "superseded", importance=0.9)
        await storage.insert_memories([*rows, gone])
        await supersede(storage, A, [gone.id], T0, [])
        t1 = T0 + timedelta(days=3)
        await storage.record_access(B, [rows[-1].id], t1)
        assert await storage.decay_candidates(None, 0) == []
        for page in (1, 3, 100):
            got = await self.decay_rows(storage, page)
            assert sorted(got) == sorted(m.id for m in rows)
            ids = [r.id for r in await storage.decay_candidates(None, 100)]
            assert ids == sorted(ids), "decay_candidates must be ordered by id"
        after = sorted(m.id for m in rows)[5]
        assert [r.id for r in await storage.decay_candidates(after, 100)] == \
            sorted(m.id for m in rows)[6:]
        for m in rows:
            r = got[m.id]
            assert (r.namespace, r.base_importance, r.importance) == (m.namespace, m.importance,
                                                                      m.importance)
            assert r.created_at == m.created_at
            assert_utc(r.created_at, r.last_accessed_at)
        assert got[rows[-1].id].last_accessed_at == t1 and got[rows[-1].id].access_count == 1
        assert got[rows[0].id].last_accessed_at is None and got[rows[0].id].access_count == 0

    async def test_apply_decay_keeps_the_base_importance(self, storage: Storage) -> None:
        a, b = memory(A, "a", importance=0.8), memory(B, "b", importance=0.8)
        await storage.insert_memories([a, b])
        before = await storage.namespace_version(A)
        await storage.apply_decay([(A, a.id, 0.4), (A, b.id, 0.1), (B, a.id, 0.1)])
        assert (await storage.get_memories(A, [a.id]))[0].importance == 0.4
        assert (await storage.get_memories(B, [b.id]))[0].importance == 0.8  # wrong namespace
        assert await storage.namespace_version(A) != before
        await storage.apply_decay([(A, a.id, 0.2)])  # the base stays what was written
        row = (await self.decay_rows(storage))[a.id]
        assert (row.base_importance, row.importance) == (0.8, 0.2)
        await storage.apply_decay([(A, a.id, 0.8)])
        row = (await self.decay_rows(storage))[a.id]
        assert (row.base_importance, row.importance) == (0.8, 0.8)
        # a superseded row is never touched
        await supersede(storage, A, [a.id], T0, [])
        await storage.apply_decay([(A, a.id, 0.1)])
        assert [m.importance for m in await self.all_memories(storage, A, active_only=False)] == [0.8]
        await storage.apply_decay([])

    async def test_restating_or_setting_importance_resets_the_base(self, storage: Storage) -> None:
        m = memory(A, "user likes tea", importance=0.6)
        await storage.insert_memories([m])
        await storage.apply_decay([(A, m.id, 0.3)])
        # a re-statement undoes decay: max(base 0.6, 0.5), and the clock restarts
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        assert await complete_job(storage, op, 1, [], refresh=[(m.id, 0.5)]) is True
        row = (await self.decay_rows(storage))[m.id]
        assert (row.base_importance, row.importance) == (0.6, 0.6)
        assert row.last_accessed_at is not None
        await storage.apply_decay([(A, m.id, 0.3)])
        op, _ = await storage.enqueue(operation(A, minutes=1))
        await storage.claim_job(60)
        assert await complete_job(storage, op, 1, [], refresh=[(m.id, 0.9)]) is True
        row = (await self.decay_rows(storage))[m.id]
        assert (row.base_importance, row.importance) == (0.9, 0.9)
        # update_importance sets a new undecayed value
        await storage.apply_decay([(A, m.id, 0.3)])
        await storage.update_importance([(A, m.id, 0.7)])
        row = (await self.decay_rows(storage))[m.id]
        assert (row.base_importance, row.importance) == (0.7, 0.7)

    async def test_namespace_version_changes_on_every_change(self, storage: Storage) -> None:
        seen = [await storage.namespace_version(A)]

        async def changed() -> None:
            version = await storage.namespace_version(A)
            assert version not in seen, f"namespace_version did not change ({seen} -> {version})"
            seen.append(version)

        m1, m2 = memory(A, "one"), memory(A, "two")
        await storage.insert_memories([m1, m2])
        await changed()
        await delete(storage, A, m1.id)
        await changed()
        await supersede(storage, A, [m2.id], T0, [memory(A, "three")])
        await changed()
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        m4 = memory(A, "four")
        await complete_job(storage, op, 1, [m4])
        await changed()
        await storage.update_importance([(A, m4.id, 0.25)])
        await changed()
        await storage.apply_decay([(A, m4.id, 0.125)])
        await changed()
        if storage.capabilities.vectors:
            await storage.set_embeddings(A, [(m4.id, self.vec(1))])
            await changed()
        await storage.delete_namespace(A)
        # Erased: no row names the namespace any more, so it is at 0 again, the version of a
        # namespace never written (an index cached at 0 is empty, which is right again).
        erased = await storage.namespace_version(A)
        assert erased == 0 or erased not in seen
        seen[:] = [v for v in seen if v != erased]  # the next write must still change it
        await storage.insert_memories([memory(A, "after the purge")])
        await changed()

    async def test_delete_namespace_erases_only_that_namespace(self, storage: Storage) -> None:
        for ns in (A, B):
            kept = [memory(ns, f"{ns} dark memory {i}", embedding=self.vec(1, i)) for i in range(3)]
            old = memory(ns, f"{ns} dark superseded", entity="e", attribute="a")
            await storage.insert_memories([*kept, old])
            await supersede(storage, ns, [old.id], T0, [])
            await storage.enqueue(operation(ns, "k"))
            await storage.create_token(ns, f"{ns}-t1")
            await storage.create_token(ns, f"{ns}-t2")
            await storage.create_token(ns, f"{ns}-t3")
            await storage.revoke_token(f"{ns}-t3")
            await storage.save_task(ns, "task", {"ns": ns})
            await storage.record_tool_call(ToolCallRecord(
                tool="store_memory", namespace=ns, inputs_hash="h", status="ok", duration_ms=1.0))
        # every memory row goes, superseded included; only live tokens count as revoked
        erased = await storage.delete_namespace(A)
        assert (erased.memories, erased.tokens_revoked) == (4, 2)
        # the receipt's table counts: every token row named A (revoked ones too)
        common = {"memories": 4, "operations": 1, "a2a_tasks": 1, "tool_call_records": 1,
                  "api_tokens": 3}
        assert {t: erased.tables.get(t) for t in common} == common, erased.tables
        # An erased namespace's token keeps answering 401 (no namespace), by hash only: its
        # hash cannot be registered again, for A or anyone (issue 28).
        for again in (A, B):
            with pytest.raises(Exception):
                await storage.create_token(again, f"{A}-t1")
            assert await storage.namespace_for_token(f"{A}-t1") is None
        assert await self.all_memories(storage, A, active_only=False) == []
        assert await storage.history(A, "e", "a") == []
        assert await storage.list_memories(A, 10, 0) == ([], 0)
        assert await storage.namespace_for_token(f"{A}-t1") is None
        assert await storage.namespace_for_token(f"{A}-t2") is None
        assert await storage.count_jobs(A, "queued") == 0
        assert await storage.get_task(A, "task") is None
        assert await storage.list_tasks(A) == TaskPage([], 0)
        assert {k: v for k, v in (await storage.stats(A)).items() if v} == {}
        if storage.capabilities.fulltext:
            assert await storage.search_fulltext(A, ["dark"], 10) == []
        if storage.capabilities.vectors:
            assert await storage.search_vectors(A, self.vec(1), 10) == []
        # B untouched
        assert len(await self.all_memories(storage, B, active_only=False)) == 4
        assert await storage.namespace_for_token(f"{B}-t1") == B
        assert await storage.count_jobs(B, "queued") == 1
        assert await storage.get_task(B, "task") == {"ns": B}
        if storage.capabilities.fulltext:
            assert len(await storage.search_fulltext(B, ["dark"], 10)) == 3
        # a new operation with the old key is accepted again
        assert (await storage.enqueue(operation(A, "k")))[1] is True
