"""Memory rows: insert, read, list, iterate, delete, history, access, stats, importance."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from ...models import Memory
from ...contracts import (Storage)
from ..helpers import current_of, delete, supersede
from .base import A, B, T0, ContractBase, assert_utc, memory, same_memory


class MemoryTests(ContractBase):
    async def test_insert_and_get_round_trip_every_field(self, storage: Storage) -> None:
        plus2 = timezone(timedelta(hours=2))
        m = Memory(namespace=A, text="Ünïcödé text 🚀 with 'quotes' and \"doubles\"", topic="prefs",
                   type="preference", entity="user", attribute="editor", value="helix",
                   importance=0.75, valid_from=datetime(2026, 3, 1, 12, 0, 0, 1, tzinfo=plus2),
                   created_at=datetime(2026, 3, 1, 10, 0, 0, 999999, tzinfo=timezone.utc),
                   last_accessed_at=datetime(2026, 3, 2, tzinfo=timezone.utc), access_count=3,
                   session_id="s1", agent_id="agent-7", source_job_id="job-1")
        await storage.insert_memories([m])
        (got,) = await storage.get_memories(A, [m.id])
        same_memory(got, m)
        assert_utc(got.valid_from, got.created_at, got.last_accessed_at)
        assert got.valid_from.utcoffset() == timedelta(0)

    async def test_get_memories_is_namespace_scoped(self, storage: Storage) -> None:
        a, b = memory(A, "in A"), memory(B, "in B")
        await storage.insert_memories([a, b])
        assert [m.id for m in await storage.get_memories(A, [a.id, b.id, "missing"])] == [a.id]
        assert await storage.get_memories(B, [a.id]) == []
        assert await storage.get_memories(A, []) == []

    async def test_insert_memories_is_all_or_nothing(self, storage: Storage) -> None:
        first, second = memory(A, "one"), memory(A, "two")
        await storage.insert_memories([memory(A, "existing", id="fixed-id")])
        with pytest.raises(Exception):  # noqa: B017 - any error type, as long as nothing lands
            await storage.insert_memories([first, second, memory(A, "dup", id="fixed-id")])
        assert await storage.get_memories(A, [first.id, second.id]) == []
        assert [m.text for m in await self.all_memories(storage, A)] == ["existing"]

    async def test_many_memories_bulk_paging_and_iteration(self, storage: Storage) -> None:
        rows = [memory(A, f"memory number {i}", minutes=i) for i in range(1200)]
        await storage.insert_memories(rows)
        assert len(await storage.get_memories(A, [m.id for m in rows])) == 1200
        seen = [m.id for m in await self.all_memories(storage, A)]
        assert seen == [m.id for m in rows]
        page, total = await storage.list_memories(A, 50, 1100)
        assert total == 1200 and [m.id for m in page] == [m.id for m in rows[99::-1][:50]]

    async def test_list_memories_newest_first_with_total_and_paging(self, storage: Storage) -> None:
        rows = [memory(A, f"a{i}", minutes=i) for i in range(5)]
        gone = memory(A, "superseded", minutes=10)
        await storage.insert_memories([*rows, gone, memory(B, "b0", minutes=20)])
        await supersede(storage, A, [gone.id], T0, [])
        ids = [m.id for m in rows]
        page, total = await storage.list_memories(A, 2, 0)
        assert [m.id for m in page] == [ids[4], ids[3]] and total == 5
        page, _ = await storage.list_memories(A, 2, 2)
        assert [m.id for m in page] == [ids[2], ids[1]]
        page, _ = await storage.list_memories(A, 2, 4)
        assert [m.id for m in page] == [ids[0]]
        page, total = await storage.list_memories(A, 2, 10)
        assert page == [] and total == 5
        page, total = await storage.list_memories(B, 10, 0)
        assert [m.text for m in page] == ["b0"] and total == 1

    async def test_iter_memories_oldest_first_active_or_all(self, storage: Storage) -> None:
        m0, m1, m2 = (memory(A, f"m{i}", minutes=i) for i in range(3))
        await storage.insert_memories([m2, m0, m1, memory(B, "other")])
        await supersede(storage, A, [m1.id], T0 + timedelta(hours=1), [])
        assert [m.id for m in await self.all_memories(storage, A)] == [m0.id, m2.id]
        everything = await self.all_memories(storage, A, active_only=False)
        assert [m.id for m in everything] == [m0.id, m1.id, m2.id]
        assert everything[1].valid_until == T0 + timedelta(hours=1)

    async def test_delete_memory(self, storage: Storage) -> None:
        a, old = memory(A, "keep me"), memory(A, "old")
        await storage.insert_memories([a, old])
        await supersede(storage, A, [old.id], T0, [])
        assert await delete(storage, B, a.id) is False
        assert len(await storage.get_memories(A, [a.id])) == 1
        assert await delete(storage, A, a.id) is True
        assert await storage.get_memories(A, [a.id]) == []
        assert await delete(storage, A, a.id) is False
        assert await delete(storage, A, old.id) is False  # superseded: not deletable
        assert await delete(storage, A, "missing") is False

    async def test_supersede_memories(self, storage: Storage) -> None:
        m1 = memory(A, "likes green tea", entity="user", attribute="drink", value="green tea")
        m2 = memory(A, "likes black tea", entity="user", attribute="drink", value="black tea",
                    minutes=1)
        m2.entity = m2.attribute = m2.value = None  # one current row per fact key
        theirs = memory(B, "belongs to B")
        await storage.insert_memories([m1, m2, theirs])
        merged = memory(A, "likes tea", entity="user", attribute="drink", value="tea", minutes=2)
        at = T0 + timedelta(days=1)
        await supersede(storage, A, [m1.id, m2.id, theirs.id], at, [merged])
        assert await storage.get_memories(A, [m1.id, m2.id]) == []
        page, total = await storage.list_memories(A, 10, 0)
        assert [m.id for m in page] == [merged.id] and total == 1
        assert [m.id for m in await current_of(storage, A, "user", "drink")] == [merged.id]
        assert sum((await storage.stats(A)).values()) == 1
        history = await storage.history(A, "user", "drink")
        assert [(m.id, m.valid_until) for m in history] == [(m1.id, at), (merged.id, None)]
        assert history[0].superseded_by == merged.id
        assert_utc(*(m.valid_until for m in history))
        assert [m.id for m in await storage.get_memories(B, [theirs.id])] == [theirs.id]

    async def test_history_is_oldest_first_and_scoped(self, storage: Storage) -> None:
        v = [memory(A, f"version {i}", entity="e", attribute="a", value=str(i), minutes=i,
                    valid_until=T0 + timedelta(minutes=i + 1) if i < 2 else None)
             for i in range(3)]
        await storage.insert_memories([v[2], v[0], v[1], memory(B, "b", entity="e", attribute="a")])
        assert [m.id for m in await storage.history(A, "e", "a")] == [m.id for m in v]
        assert len(await storage.history(B, "e", "a")) == 1

    async def test_record_access(self, storage: Storage) -> None:
        a, b = memory(A, "a"), memory(B, "b")
        await storage.insert_memories([a, b])
        t1, t2 = T0 + timedelta(hours=1), T0 + timedelta(hours=2)
        await storage.record_access(A, [a.id], t1)
        await storage.record_access(A, [a.id], t2)
        await storage.record_access(B, [a.id], t2 + timedelta(hours=1))  # wrong namespace
        await storage.record_access(A, [b.id], t2)  # wrong namespace
        got = (await storage.get_memories(A, [a.id]))[0]
        assert got.access_count == 2 and got.last_accessed_at == t2
        assert_utc(got.last_accessed_at)
        same_memory((await storage.get_memories(B, [b.id]))[0], b)

    async def test_stats_counts_active_by_type(self, storage: Storage) -> None:
        gone = memory(A, "old fact", type="fact")
        await storage.insert_memories([
            memory(A, "p1", type="preference"), memory(A, "p2", type="preference"),
            memory(A, "f1", type="fact"), memory(A, "d1", type="decision"), gone,
            memory(B, "b1", type="procedure"),
        ])
        await supersede(storage, A, [gone.id], T0, [])
        nonzero = {k: v for k, v in (await storage.stats(A)).items() if v}
        assert nonzero == {"preference": 2, "fact": 1, "decision": 1}
        assert {k: v for k, v in (await storage.stats("empty")).items() if v} == {}

    async def test_update_importance(self, storage: Storage) -> None:
        a, b = memory(A, "a", importance=0.5), memory(B, "b", importance=0.5)
        await storage.insert_memories([a, b])
        await storage.update_importance([(A, a.id, 0.25), (A, b.id, 1.0), (B, a.id, 1.0)])
        assert (await storage.get_memories(A, [a.id]))[0].importance == 0.25
        assert (await storage.get_memories(B, [b.id]))[0].importance == 0.5

    async def test_current_facts_newest_first_in_namespace_only(self, storage: Storage) -> None:
        def fact(ns: str, value: str, minutes: float, **kw: Any) -> Memory:
            return memory(ns, f"I use {value}.", minutes=minutes, entity="user",
                          attribute=kw.pop("attribute", "editor"), value=value, **kw)
        old, cur = fact(A, "vim", 1), fact(A, "helix", 2)
        shell, other = fact(A, "zsh", 3, attribute="shell"), fact(B, "emacs", 9)
        await storage.insert_memories([old, shell, other, memory(A, "no fact", minutes=5)])
        await supersede(storage, A, [old.id], T0 + timedelta(minutes=2), [cur])
        got = await storage.current_facts(A, 10)
        assert [(m.attribute, m.value) for m in got] == [("shell", "zsh"), ("editor", "helix")]
        assert [m.value for m in await storage.current_facts(A, 1)] == ["zsh"]
        assert [m.value for m in await storage.current_facts(B, 10)] == ["emacs"]
        assert await storage.current_facts("empty", 10) == []
