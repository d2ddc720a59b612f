"""Audit rows and A2A tasks."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone


from ...models import ToolCallRecord
from ...contracts import (Storage, TaskKeys, TaskPage,
                         TaskQuery, TaskRow)
from .base import A, B, ContractBase


class RecordTests(ContractBase):
    async def test_record_tool_call(self, storage: Storage) -> None:
        await storage.record_tool_call(ToolCallRecord(
            tool="search_memories", namespace=A, inputs_hash="abc", status="ok", duration_ms=2.5))
        await storage.record_tool_call(ToolCallRecord(
            tool="store_memory", namespace=None, inputs_hash="def", status="error",
            code="INVALID_PARAM", duration_ms=0.1,
            at=datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=-5)))))

    async def test_tasks_save_get_list_delete_isolated(self, storage: Storage) -> None:
        data_a = {"id": "t1", "state": "working", "history": [{"text": "héllo 👋"}], "n": None}
        await storage.save_task(A, "t1", data_a)
        await storage.save_task(B, "t1", {"id": "t1", "owner": "B"})  # same id, other tenant
        await storage.save_task(A, "t2", {"id": "t2"})
        assert await storage.get_task(A, "t1") == data_a
        assert await storage.get_task(B, "t1") == {"id": "t1", "owner": "B"}
        assert await storage.get_task(B, "t2") is None
        assert sorted(r.data["id"] for r in (await storage.list_tasks(A)).rows) == ["t1", "t2"]
        assert [r.data for r in (await storage.list_tasks(B)).rows] == [{"id": "t1", "owner": "B"}]
        await storage.save_task(A, "t1", {"id": "t1", "state": "completed"})
        assert await storage.get_task(A, "t1") == {"id": "t1", "state": "completed"}
        await storage.delete_task(B, "t2")  # not B's: nothing happens
        assert await storage.get_task(A, "t2") == {"id": "t2"}
        await storage.delete_task(A, "t1")
        assert await storage.get_task(A, "t1") is None
        assert await storage.get_task(B, "t1") == {"id": "t1", "owner": "B"}
        await storage.delete_task(A, "never-existed")

    async def test_task_pages_are_ordered_filtered_and_positioned_in_storage(
            self, storage: Storage) -> None:
        # ListTasks' rule (a2a-sdk's order): status time descending, tasks without one last,
        # then id descending by code point; a page starts strictly after the (time, id) of the
        # previous page's last row. Ids where a locale collation and code points disagree.
        ids = ["ab", "a-b", "a b", "B", "a", "é", "Z", "a_b", "b", "A-", "t10", "t9"]
        times = [5, 5, 5, None, 7, None, 5, -3, 2**62, None, 0, 7]
        ctx = ["c1", "c2"]
        for i, (task_id, ns) in enumerate(zip(ids, times)):
            await storage.save_task(A, task_id, {"id": task_id}, TaskKeys(
                context_id=ctx[i % 2], state="TASK_STATE_COMPLETED" if i % 3 else "TASK_STATE_WORKING",
                status_ns=ns))
        await storage.save_task(B, "b-only", {"id": "b-only"}, TaskKeys("c1", "TASK_STATE_WORKING", 9))

        def rule(keep: Callable[[int], bool] = lambda i: True) -> list[str]:
            rows = [(ns is not None, ns or 0, task_id)
                    for i, (task_id, ns) in enumerate(zip(ids, times)) if keep(i)]
            return [r[2] for r in sorted(rows, reverse=True)]

        async def walk(query: TaskQuery) -> tuple[list[str], set[int]]:
            seen, totals, after = [], set(), None
            while True:
                page = await storage.list_tasks(A, query._replace(after=after))
                assert len(page.rows) <= query.limit
                seen += [r.task_id for r in page.rows]
                assert [r.data["id"] for r in page.rows] == [r.task_id for r in page.rows]
                totals.add(page.total)
                if len(page.rows) < query.limit:
                    return seen, totals
                after = (page.rows[-1].status_ns, page.rows[-1].task_id)

        full = await storage.list_tasks(A, TaskQuery(limit=100))
        assert [r.task_id for r in full.rows] == rule() and full.total == len(ids)
        assert [r.status_ns for r in full.rows] == [times[ids.index(r.task_id)] for r in full.rows]
        for size in (1, 2, 5):
            assert await walk(TaskQuery(limit=size)) == (rule(), {len(ids)})
        assert await walk(TaskQuery(context_id="c2", limit=2)) == (
            rule(lambda i: i % 2 == 1), {len(rule(lambda i: i % 2 == 1))})
        assert await walk(TaskQuery(state="TASK_STATE_WORKING", limit=3)) == (
            rule(lambda i: i % 3 == 0), {len(rule(lambda i: i % 3 == 0))})
        recent = lambda i: times[i] is not None and times[i] >= 5  # noqa: E731
        assert await walk(TaskQuery(status_ns_from=5, limit=2)) == (rule(recent), {len(rule(recent))})
        assert await storage.list_tasks(A, TaskQuery(context_id="nope")) == TaskPage([], 0)
        # a position that names no stored task (it was deleted) still places the page
        page = await storage.list_tasks(A, TaskQuery(after=(5, "a c"), limit=100))
        assert [r.task_id for r in page.rows] == rule()[rule().index("a b"):] and page.total == len(ids)
        page = await storage.list_tasks(A, TaskQuery(after=(None, "C"), limit=100))
        assert [r.task_id for r in page.rows] == ["B", "A-"]
        # saving again replaces the keys
        await storage.save_task(A, "t9", {"id": "t9", "v": 2}, TaskKeys("c9", "TASK_STATE_FAILED", 1))
        (row,) = (await storage.list_tasks(A, TaskQuery(context_id="c9"))).rows
        assert row == TaskRow("t9", 1, {"id": "t9", "v": 2})
        assert (await storage.list_tasks(A, TaskQuery(state="TASK_STATE_FAILED"))).total == 1
