"""The optional reads search uses: memories valid at a time, memories created in time
ranges, session neighbours."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from ...contracts import (Storage)
from ..helpers import delete, supersede
from .base import A, B, T0, ContractBase, memory


class CapabilityTests(ContractBase):
    async def test_memories_at_reads_the_rows_valid_at_a_time(self, storage: Storage) -> None:
        # search_memories(as_of=...) ranks these rows (issue 14): history while it was current.
        self.need(storage, "history")
        vim = memory(A, "uses vim", entity="user", attribute="editor", value="vim",
                     embedding=self.vec(1), context="which editor?")
        note = memory(A, "deploys on Tuesdays", minutes=30)
        theirs = memory(B, "theirs")
        await storage.insert_memories([vim, note, theirs])
        code = memory(A, "uses VS Code", entity="user", attribute="editor", value="VS Code",
                      minutes=60)
        await supersede(storage, A, [vim.id], code.valid_from, [code])
        said_and_replaced = memory(A, "said and replaced at once", minutes=10,
                                   valid_until=T0 + timedelta(minutes=10))
        await storage.insert_memories([said_and_replaced])

        async def at(minutes: float) -> list[str]:
            return [m.id for m in await storage.memories_at(A, T0 + timedelta(minutes=minutes))]

        assert await at(-1) == []  # before anything was said
        assert await at(0) == [vim.id]  # valid_from is inclusive
        assert await at(45) == [vim.id, note.id]  # oldest valid_from first
        assert await at(60) == [note.id, code.id]  # valid_until is exclusive
        assert await at(10**6) == [note.id, code.id]  # still current
        assert await storage.memories_at("nobody", T0) == []
        (old,) = [m for m in await storage.memories_at(A, T0) if m.id == vim.id]
        assert old.valid_until == code.valid_from and old.superseded_by == code.id
        assert old.context == "which editor?" and old.value == "vim"
        if storage.capabilities.vectors:  # a history row's vector stays readable for ranking
            assert await storage.get_embeddings(A, [vim.id]) == {vim.id: pytest.approx(self.vec(1))}

    async def test_memories_created_lists_a_time_range_or_says_it_is_too_full(
            self, storage: Storage) -> None:
        # Search's time-window step (issue 14) ranks these rows when a query names a time.
        self.need(storage, "time_ranges")
        rows = [memory(A, f"line {i}", minutes=10 * i, session_id="s1",
                       context=f"before line {i}") for i in range(6)]
        await storage.insert_memories(rows[3:])  # inserted out of time order
        await storage.insert_memories(rows[:3])
        tied = memory(A, "said with line 2", minutes=20)
        theirs = memory(B, "theirs", minutes=20)
        await storage.insert_memories([tied, theirs])
        new = memory(A, "line 4 again", minutes=45, entity="user", attribute="x", value="2")
        old = memory(A, "line 4 before", minutes=41, entity="user", attribute="x", value="1")
        await storage.insert_memories([old])
        await supersede(storage, A, [old.id], new.valid_from, [new])

        def span(a: float, b: float) -> tuple[datetime, datetime]:
            return T0 + timedelta(minutes=a), T0 + timedelta(minutes=b)

        async def ids(*spans: tuple[datetime, datetime], limit: int = 100) -> list[str] | None:
            got = await storage.memories_created(A, list(spans), limit)
            return None if got is None else [m.id for m in got]

        # Start inclusive, end exclusive; oldest first, insertion order among equal times;
        # superseded rows and other namespaces left out.
        assert await ids(span(10, 30)) == [rows[1].id, rows[2].id, tied.id]
        assert await ids(span(0, 10), span(40, 60)) == [rows[0].id, rows[4].id, new.id,
                                                        rows[5].id]
        # Overlapping ranges: each memory once, in time order.
        assert await ids(span(20, 45), span(0, 25)) == [
            rows[0].id, rows[1].id, rows[2].id, tied.id, rows[3].id, rows[4].id]
        assert await ids(span(5, 9)) == [] and await ids() == []
        # More than `limit`: None, however the ranges split them.
        assert await ids(span(0, 60), limit=8) == [m.id for m in (
            rows[0], rows[1], rows[2], tied, rows[3], rows[4], new, rows[5])]
        assert await ids(span(0, 60), limit=7) is None
        assert await ids(span(0, 25), span(25, 60), limit=7) is None
        got = await storage.memories_created(A, [span(0, 5)], 10)
        assert got is not None and got[0].context == "before line 0"
        assert got[0].created_at == rows[0].created_at
        assert await storage.memories_created("nobody", [span(0, 60)], 10) == []
        # A forgotten memory is in no range.
        assert await delete(storage, A, rows[1].id)
        assert await ids(span(10, 30)) == [rows[2].id, tied.id]

    async def test_session_neighbours_are_the_active_memories_around_each(self, storage: Storage
                                                                         ) -> None:
        # Search's neighbour step (issue 14): order by created_at, then insertion order, as
        # latest_in_session; only active memories of the same namespace and session count.
        self.need(storage, "session_neighbours")
        late = memory(A, "said last, stored first", session_id="s1", minutes=5)
        await storage.insert_memories([late])
        # Three at one instant: insertion order decides among them.
        first, second, third = (memory(A, f"turn {i}", session_id="s1") for i in range(3))
        await storage.insert_memories([first, second])
        await storage.insert_memories([third])
        other = memory(A, "another session", session_id="s2", minutes=1)
        loose = memory(A, "no session", minutes=1)
        theirs = memory(B, "their s1", session_id="s1", minutes=1)
        old = memory(A, "replaced", session_id="s1", minutes=2, entity="user", attribute="x",
                     value="1")
        await storage.insert_memories([other, loose, theirs, old])
        new = memory(A, "replacement", session_id="s1", minutes=6, entity="user", attribute="x",
                     value="2")
        await supersede(storage, A, [old.id], new.valid_from, [new])

        got = await storage.session_neighbours(
            A, [first.id, second.id, third.id, late.id, new.id, other.id, loose.id, theirs.id,
                old.id, "unknown", second.id])
        assert got == {
            first.id: (None, second.id),
            second.id: (first.id, third.id),
            third.id: (second.id, late.id),  # the superseded row between them is skipped
            late.id: (third.id, new.id),
            new.id: (late.id, None),
            other.id: (None, None),          # alone in its session
        }
        assert await storage.session_neighbours(A, []) == {}
        assert await storage.session_neighbours(B, [first.id]) == {}
        # A forgotten memory is nobody's neighbour.
        assert await delete(storage, A, second.id)
        got = await storage.session_neighbours(A, [first.id, third.id])
        assert got == {first.id: (None, third.id), third.id: (first.id, late.id)}

    async def test_session_neighbours_follow_the_core_rule(self, storage: Storage) -> None:
        # The order is core's (search.steps.pool_neighbours over the active rows, oldest first as
        # iter_memories reads them): random sessions, tied and untied times, batches,
        # deletions and supersessions, several seeds.
        self.need(storage, "session_neighbours")
        import random

        from ...search.steps import pool_neighbours

        for seed in range(3):
            rng = random.Random(seed)
            ns = f"{A}-{seed}"
            rows = [memory(ns, f"line {i}", minutes=rng.choice([0, 1, 1, 2, 5]),
                           session_id=rng.choice(["s1", "s2", "s3", None]))
                    for i in range(40)]
            for start in range(0, len(rows), 7):
                await storage.insert_memories(rows[start:start + 7])
            for gone in rng.sample(rows, 6):
                await delete(storage, ns, gone.id)
            replaced = [m for m in rng.sample(rows, 6) if await storage.get_memories(ns, [m.id])]
            if replaced:
                await supersede(storage, ns, [m.id for m in replaced], T0 + timedelta(minutes=9))
            active = [m async for m in storage.iter_memories(ns)]
            ids = [m.id for m in rows]
            assert await storage.session_neighbours(ns, ids) == \
                pool_neighbours(active, ids), f"seed {seed}"
