"""Audit rows and A2A tasks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from recall_core import ToolCallRecord
from recall_core.contracts import TaskKeys, TaskPage, TaskQuery, TaskRow

from .codec import now_text, to_db


class RecordMethods:
    async def record_tool_call(self, record: ToolCallRecord) -> None:
        await self.record_tool_calls([record])

    async def record_tool_calls(self, records: Sequence[ToolCallRecord]) -> None:
        """Several rows in one transaction (the audit middleware's batches)."""
        if not records:
            return
        async with self.db.transaction() as db:
            await db.executemany(
                "INSERT INTO tool_call_records (tool, namespace, inputs_hash, status, code, "
                "duration_ms, at, call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.tool, r.namespace, r.inputs_hash, r.status, r.code, float(r.duration_ms),
                  to_db(r.at), r.call_id) for r in records])
            await db.executemany(
                "INSERT INTO retrieval_results (call_id, namespace, memory_id, rank, score, at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(r.call_id, r.namespace, hit.id, rank, float(hit.score), to_db(r.at))
                 for r in records if r.namespace is not None
                 for rank, hit in enumerate(r.returned, 1)])

    async def save_task(self, namespace: str, task_id: str, data: dict[str, Any],
                        keys: TaskKeys = TaskKeys()) -> None:
        now = now_text()
        await self.db.write(
            "INSERT INTO a2a_tasks (namespace, task_id, data, created_at, updated_at, "
            "context_id, state, status_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (namespace, task_id) DO UPDATE SET data = excluded.data, "
            "updated_at = excluded.updated_at, context_id = excluded.context_id, "
            "state = excluded.state, status_ns = excluded.status_ns",
            (namespace, task_id, json.dumps(data, ensure_ascii=False), now, now,
             keys.context_id, keys.state, keys.status_ns))

    async def get_task(self, namespace: str, task_id: str) -> dict[str, Any] | None:
        row = await self.db.fetch_one(
            "SELECT data FROM a2a_tasks WHERE namespace = ? AND task_id = ?", (namespace, task_id))
        return json.loads(row[0]) if row else None

    async def list_tasks(self, namespace: str, query: TaskQuery = TaskQuery()) -> TaskPage:
        where, params = ["namespace = ?"], [namespace]
        if query.context_id is not None:
            where.append("context_id = ?")
            params.append(query.context_id)
        if query.state is not None:
            where.append("state = ?")
            params.append(query.state)
        if query.status_ns_from is not None:
            where.append("status_ns >= ?")
            params.append(query.status_ns_from)
        filters = " AND ".join(where)
        (total,) = await self.db.fetch_one(f"SELECT count(*) FROM a2a_tasks WHERE {filters}",
                                           params)
        position, at = "", []
        if query.after is not None:
            ns, task_id = query.after
            # SQLite sorts NULL below every number: DESC puts tasks without a time last.
            if ns is None:
                position = " AND status_ns IS NULL AND task_id < ?"
                at = [task_id]
            else:
                position = (" AND (status_ns < ? OR (status_ns = ? AND task_id < ?) "
                            "OR status_ns IS NULL)")
                at = [ns, ns, task_id]
        rows = await self.db.fetch(
            f"SELECT task_id, status_ns, data FROM a2a_tasks WHERE {filters}{position} "
            f"ORDER BY status_ns DESC, task_id DESC LIMIT ?", [*params, *at, query.limit])
        return TaskPage([TaskRow(r[0], r[1], json.loads(r[2])) for r in rows], total)

    async def expire_tasks(self, updated_before: datetime) -> int:
        return await self.db.write("DELETE FROM a2a_tasks WHERE updated_at < ?",
                                   (to_db(updated_before),))

    async def delete_task(self, namespace: str, task_id: str) -> None:
        await self.db.write(
            "DELETE FROM a2a_tasks WHERE namespace = ? AND task_id = ?", (namespace, task_id))
