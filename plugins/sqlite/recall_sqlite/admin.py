"""The admin capability (`recall_core.contracts.admin.AdminStorage`) on SQLite, mixed into
SQLiteStorage: admin tokens, namespace listing, filtered memory and job lists, job retry and
the audit of admin actions. Reads only; the writes are single statements."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from recall_core.contracts import (TOKEN_ID_LEN, AdminAction, CallResults, MemoryFilter, RetrievalHit,
                                       NamespaceSummary, TokenInfo)
from recall_core import Memory, Operation

from .codec import (MEMORY_COLUMNS, OPERATION_COLUMNS, from_db, memory_from_row, now_text,
                    operation_from_row, to_db)
from .connection import Database

# Every namespace with memories, jobs or a live token (one whose tokens are all revoked and
# that holds nothing else, e.g. after an erasure, is gone).
# Agents' private partitions ("ns/agent") are listed under their owner, not as namespaces.
_NAMES = ("SELECT namespace FROM memories WHERE instr(namespace, '/') = 0 "
          "UNION SELECT namespace FROM operations WHERE instr(namespace, '/') = 0 "
          "UNION SELECT namespace FROM api_tokens WHERE revoked_at IS NULL")

_SUMMARY = f"""
SELECT n.namespace,
  (SELECT coalesce(sum(a.n), 0) FROM active_counts a WHERE a.namespace = n.namespace),
  (SELECT count(*) FROM memories m WHERE m.namespace = n.namespace AND m.valid_until IS NOT NULL),
  (SELECT count(*) FROM api_tokens t WHERE t.namespace = n.namespace AND t.revoked_at IS NULL),
  (SELECT count(*) FROM operations o WHERE o.namespace = n.namespace
      AND o.status IN ('queued', 'running')),
  (SELECT count(*) FROM operations o WHERE o.namespace = n.namespace AND o.status = 'failed'),
  (SELECT max(t) FROM (
      SELECT max(created_at) AS t FROM memories WHERE namespace = n.namespace
      UNION ALL SELECT max(last_accessed_at) FROM memories WHERE namespace = n.namespace
      UNION ALL SELECT max(created_at) FROM operations WHERE namespace = n.namespace
      UNION ALL SELECT max(created_at) FROM api_tokens WHERE namespace = n.namespace))
FROM ({_NAMES}) AS n ORDER BY n.namespace LIMIT ? OFFSET ?"""


def memory_where(namespace: str, where: MemoryFilter) -> tuple[str, list[Any]]:
    sql = ["namespace = ?"]
    params: list[Any] = [namespace]
    if where.state == "active":
        sql.append("valid_until IS NULL")
    elif where.state == "superseded":
        sql.append("valid_until IS NOT NULL")
    for column in ("type", "topic", "session_id", "agent_id", "source_job_id"):
        value = getattr(where, column)
        if value is not None:
            sql.append(f"{column} = ?")
            params.append(value)
    if where.memory_id is not None:
        sql.append("id = ?")
        params.append(where.memory_id)
    if where.text:
        sql.append("instr(lower(text), lower(?)) > 0")
        params.append(where.text)
    return " AND ".join(sql), params


class AdminMethods:
    db: Database

    # -- admin tokens -----------------------------------------------------------------------
    async def create_admin_token(self, token_hash: str, name: str) -> None:
        await self.db.write(
            "INSERT INTO admin_tokens (token_hash, name, created_at) VALUES (?, ?, ?)",
            (token_hash, name, now_text()))

    async def admin_for_token(self, token_hash: str) -> str | None:
        row = await self.db.fetch_one(
            "SELECT name FROM admin_tokens WHERE token_hash = ? AND revoked_at IS NULL",
            (token_hash,))
        return row[0] if row else None

    async def revoke_admin_token(self, token_hash: str) -> bool:
        return await self.db.write(
            "UPDATE admin_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
            (now_text(), token_hash)) == 1

    # -- namespaces and tokens --------------------------------------------------------------
    async def list_namespaces(self, limit: int, offset: int) -> tuple[list[NamespaceSummary], int]:
        rows = await self.db.fetch(_SUMMARY, (max(0, limit), max(0, offset)))
        total = await self.db.fetch_one(f"SELECT count(*) FROM ({_NAMES})")
        return [NamespaceSummary(
            namespace=r[0], active_memories=r[1], superseded_memories=r[2], active_tokens=r[3],
            queued_jobs=r[4], failed_jobs=r[5], last_activity=from_db(r[6])) for r in rows], \
            int(total[0])

    async def list_tokens(self, namespace: str) -> list[TokenInfo]:
        rows = await self.db.fetch(
            "SELECT token_hash, created_at, revoked_at, agent, scopes FROM api_tokens "
            "WHERE namespace = ? "
            "ORDER BY created_at DESC, token_hash", (namespace,))
        return [TokenInfo(token_id=r[0][:TOKEN_ID_LEN], namespace=namespace,
                          created_at=from_db(r[1]), revoked_at=from_db(r[2]), agent=r[3],
                          scopes=r[4]) for r in rows]

    async def revoke_token_id(self, namespace: str, token_id: str) -> bool:
        if len(token_id) != TOKEN_ID_LEN:
            return False
        return await self.db.write(
            "UPDATE api_tokens SET revoked_at = ? WHERE namespace = ? AND substr(token_hash, 1, ?) = ? "
            "AND revoked_at IS NULL", (now_text(), namespace, TOKEN_ID_LEN, token_id)) >= 1

    # -- memories and jobs ------------------------------------------------------------------
    async def query_memories(self, namespace: str, where: MemoryFilter, limit: int,
                             offset: int) -> tuple[list[Memory], int]:
        cond, params = memory_where(namespace, where)
        rows = await self.db.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {cond} "
            "ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?",
            (*params, max(0, limit), max(0, offset)))
        total = await self.db.fetch_one(f"SELECT count(*) FROM memories WHERE {cond}", params)
        return [memory_from_row(r) for r in rows], int(total[0])

    async def list_jobs(self, namespace: str | None, statuses: Sequence[str], limit: int,
                        offset: int) -> tuple[list[Operation], int]:
        statuses = tuple(statuses)
        if not statuses:
            return [], 0
        marks = ", ".join("?" * len(statuses))
        cond = f"status IN ({marks}) AND (? IS NULL OR namespace = ?)"
        params = (*statuses, namespace, namespace)
        rows = await self.db.fetch(
            f"SELECT {OPERATION_COLUMNS} FROM operations WHERE {cond} "
            "ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
            (*params, max(0, limit), max(0, offset)))
        total = await self.db.fetch_one(f"SELECT count(*) FROM operations WHERE {cond}", params)
        return [operation_from_row(r) for r in rows], int(total[0])

    async def retry_job(self, namespace: str | None, job_id: str) -> bool:
        return await self.db.write(
            "UPDATE operations SET status = 'queued', attempts = 0, lease_until = NULL, "
            "finished_at = NULL WHERE id = ? AND status = 'failed' "
            "AND (? IS NULL OR namespace = ?)", (job_id, namespace, namespace)) == 1

    # -- audit --------------------------------------------------------------------------------
    async def record_admin_action(self, action: AdminAction) -> None:
        await self.db.write(
            "INSERT INTO admin_actions (at, actor, action, namespace, detail, result, error) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (to_db(action.at), action.actor, action.action, action.namespace,
             json.dumps(action.detail, ensure_ascii=False, default=str), action.result,
             action.error))

    async def list_admin_actions(self, limit: int, offset: int) -> tuple[list[AdminAction], int]:
        rows = await self.db.fetch(
            "SELECT id, at, actor, action, namespace, detail, result, error FROM admin_actions "
            "ORDER BY id DESC LIMIT ? OFFSET ?", (max(0, limit), max(0, offset)))
        total = await self.db.fetch_one("SELECT count(*) FROM admin_actions")
        return [AdminAction(id=r[0], at=from_db(r[1]), actor=r[2], action=r[3], namespace=r[4],
                            detail=json.loads(r[5]), result=r[6], error=r[7]) for r in rows], \
            int(total[0])

    # -- the retrieval audit ------------------------------------------------------------------
    async def calls_returning(self, namespace: str, memory_id: str, limit: int
                              ) -> list[RetrievalHit]:
        rows = await self.db.fetch(
            "SELECT r.call_id, c.tool, r.at, r.rank, r.score FROM retrieval_results r "
            "JOIN tool_call_records c ON c.call_id = r.call_id "
            "WHERE r.memory_id = ? AND r.namespace = ? ORDER BY r.at DESC, r.call_id LIMIT ?",
            (memory_id, namespace, max(0, limit)))
        return [RetrievalHit(call_id=r[0], tool=r[1], at=from_db(r[2]), rank=r[3], score=r[4])
                for r in rows]

    async def call_results(self, namespace: str, call_id: str) -> CallResults | None:
        call = await self.db.fetch_one(
            "SELECT tool, status, code, at, duration_ms, inputs_hash FROM tool_call_records "
            "WHERE call_id = ? AND namespace = ?", (call_id, namespace))
        if call is None:
            return None
        hits = await self.db.fetch(
            "SELECT memory_id, score FROM retrieval_results WHERE call_id = ? ORDER BY rank",
            (call_id,))
        return CallResults(call_id=call_id, tool=call[0], status=call[1], code=call[2],
                           at=from_db(call[3]), duration_ms=call[4], inputs_hash=call[5],
                           returned=[(h[0], h[1]) for h in hits])

    async def anonymise_admin_actions(self, namespace: str, replacement: str) -> int:
        async with self.db.transaction() as db:
            a = await db.execute(
                "UPDATE admin_actions SET namespace = ?, error = replace(error, ?, ?) "
                "WHERE namespace = ?", (replacement, namespace, replacement, namespace))
            b = await db.execute("UPDATE admin_actions SET actor = ? WHERE actor = ?",
                                 (f"namespace:{replacement}", f"namespace:{namespace}"))
            return a.rowcount + b.rowcount
