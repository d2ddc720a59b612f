"""The admin capability (`recall_core.contracts.admin.AdminStorage`) on PostgreSQL, mixed into
PostgresStorage: admin tokens, namespace listing, filtered memory and job lists, job retry and
the audit of admin actions. Single statements; nothing here takes the memory locks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from recall_core.contracts import (TOKEN_ID_LEN, AdminAction, CallResults, MemoryFilter, RetrievalHit,
                                       NamespaceSummary, TokenInfo)
from recall_core import Memory, Operation

from .rows import MEMORY_COLUMNS, OPERATION_COLUMNS, aware, memory_from_row, operation_from_row, utc

# Every namespace with memories, jobs or a live token (one whose tokens are all revoked and
# that holds nothing else, e.g. after an erasure, is gone).
# Agents' private partitions ("ns/agent") are listed under their owner, not as namespaces.
_NAMES = ("SELECT namespace FROM memories WHERE strpos(namespace, '/') = 0 "
          "UNION SELECT namespace FROM operations WHERE strpos(namespace, '/') = 0 "
          "UNION SELECT namespace FROM api_tokens WHERE revoked_at IS NULL")

_SUMMARY = f"""
SELECT n.namespace,
  (SELECT count(*) FROM memories m WHERE m.namespace = n.namespace AND m.valid_until IS NULL) AS active,
  (SELECT count(*) FROM memories m WHERE m.namespace = n.namespace AND m.valid_until IS NOT NULL) AS superseded,
  (SELECT count(*) FROM api_tokens t WHERE t.namespace = n.namespace AND t.revoked_at IS NULL) AS tokens,
  (SELECT count(*) FROM operations o WHERE o.namespace = n.namespace
      AND o.status IN ('queued', 'running')) AS queued,
  (SELECT count(*) FROM operations o WHERE o.namespace = n.namespace AND o.status = 'failed') AS failed,
  greatest(
      (SELECT max(greatest(created_at, last_accessed_at)) FROM memories WHERE namespace = n.namespace),
      (SELECT max(created_at) FROM operations WHERE namespace = n.namespace),
      (SELECT max(created_at) FROM api_tokens WHERE namespace = n.namespace)) AS last_activity
FROM ({_NAMES}) AS n ORDER BY n.namespace LIMIT $1 OFFSET $2"""


def memory_where(namespace: str, where: MemoryFilter) -> tuple[str, list[Any]]:
    params: list[Any] = [namespace]
    sql = ["namespace = $1"]

    def add(cond: str, value: Any) -> None:
        params.append(value)
        sql.append(cond.replace("?", f"${len(params)}"))

    if where.state == "active":
        sql.append("valid_until IS NULL")
    elif where.state == "superseded":
        sql.append("valid_until IS NOT NULL")
    for column in ("type", "topic", "session_id", "agent_id", "source_job_id"):
        value = getattr(where, column)
        if value is not None:
            add(f"{column} = ?", value)
    if where.memory_id is not None:
        add("id = ?", where.memory_id)
    if where.text:
        add("strpos(lower(text), lower(?)) > 0", where.text)
    return " AND ".join(sql), params


class AdminMethods:
    pool: asyncpg.Pool

    # -- admin tokens -----------------------------------------------------------------------
    async def create_admin_token(self, token_hash: str, name: str) -> None:
        await self.pool.execute("INSERT INTO admin_tokens (token_hash, name) VALUES ($1, $2)",
                                token_hash, name)

    async def admin_for_token(self, token_hash: str) -> str | None:
        return await self.pool.fetchval(
            "SELECT name FROM admin_tokens WHERE token_hash = $1 AND revoked_at IS NULL",
            token_hash)

    async def revoke_admin_token(self, token_hash: str) -> bool:
        res = await self.pool.execute(
            "UPDATE admin_tokens SET revoked_at = clock_timestamp() "
            "WHERE token_hash = $1 AND revoked_at IS NULL", token_hash)
        return res != "UPDATE 0"

    # -- namespaces and tokens --------------------------------------------------------------
    async def list_namespaces(self, limit: int, offset: int) -> tuple[list[NamespaceSummary], int]:
        rows = await self.pool.fetch(_SUMMARY, max(0, limit), max(0, offset))
        total = await self.pool.fetchval(f"SELECT count(*) FROM ({_NAMES}) AS n")
        return [NamespaceSummary(
            namespace=r["namespace"], active_memories=r["active"],
            superseded_memories=r["superseded"], active_tokens=r["tokens"],
            queued_jobs=r["queued"], failed_jobs=r["failed"],
            last_activity=utc(r["last_activity"])) for r in rows], int(total)

    async def list_tokens(self, namespace: str) -> list[TokenInfo]:
        rows = await self.pool.fetch(
            "SELECT token_hash, created_at, revoked_at, agent, scopes FROM api_tokens "
            "WHERE namespace = $1 "
            "ORDER BY created_at DESC, token_hash", namespace)
        return [TokenInfo(token_id=r["token_hash"][:TOKEN_ID_LEN], namespace=namespace,
                          created_at=utc(r["created_at"]), revoked_at=utc(r["revoked_at"]),
                          agent=r["agent"], scopes=r["scopes"])
                for r in rows]

    async def revoke_token_id(self, namespace: str, token_id: str) -> bool:
        if len(token_id) != TOKEN_ID_LEN:
            return False
        res = await self.pool.execute(
            "UPDATE api_tokens SET revoked_at = clock_timestamp() WHERE namespace = $1 "
            "AND left(token_hash, $2) = $3 AND revoked_at IS NULL",
            namespace, TOKEN_ID_LEN, token_id)
        return res != "UPDATE 0"

    # -- memories and jobs ------------------------------------------------------------------
    async def query_memories(self, namespace: str, where: MemoryFilter, limit: int,
                             offset: int) -> tuple[list[Memory], int]:
        cond, params = memory_where(namespace, where)
        n = len(params)
        rows = await self.pool.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {cond} "
            f"ORDER BY created_at DESC, seq DESC LIMIT ${n + 1} OFFSET ${n + 2}",
            *params, max(0, limit), max(0, offset))
        total = await self.pool.fetchval(f"SELECT count(*) FROM memories WHERE {cond}", *params)
        return [memory_from_row(r) for r in rows], int(total)

    async def list_jobs(self, namespace: str | None, statuses: Sequence[str], limit: int,
                        offset: int) -> tuple[list[Operation], int]:
        statuses = list(statuses)
        if not statuses:
            return [], 0
        cond = "status = ANY($1::text[]) AND ($2::text IS NULL OR namespace = $2)"
        rows = await self.pool.fetch(
            f"SELECT {OPERATION_COLUMNS} FROM operations WHERE {cond} "
            "ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4",
            statuses, namespace, max(0, limit), max(0, offset))
        total = await self.pool.fetchval(f"SELECT count(*) FROM operations WHERE {cond}",
                                         statuses, namespace)
        return [operation_from_row(r) for r in rows], int(total)

    async def retry_job(self, namespace: str | None, job_id: str) -> bool:
        res = await self.pool.execute(
            "UPDATE operations SET status = 'queued', attempts = 0, lease_until = NULL, "
            "finished_at = NULL WHERE id = $1 AND status = 'failed' "
            "AND ($2::text IS NULL OR namespace = $2)", job_id, namespace)
        return res != "UPDATE 0"

    # -- audit --------------------------------------------------------------------------------
    async def record_admin_action(self, action: AdminAction) -> None:
        await self.pool.execute(
            "INSERT INTO admin_actions (at, actor, action, namespace, detail, result, error) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7)",
            aware(action.at), action.actor, action.action, action.namespace,
            json.loads(json.dumps(action.detail, default=str)), action.result, action.error)

    async def list_admin_actions(self, limit: int, offset: int) -> tuple[list[AdminAction], int]:
        rows = await self.pool.fetch(
            "SELECT id, at, actor, action, namespace, detail, result, error FROM admin_actions "
            "ORDER BY id DESC LIMIT $1 OFFSET $2", max(0, limit), max(0, offset))
        total = await self.pool.fetchval("SELECT count(*) FROM admin_actions")
        return [AdminAction(id=r["id"], at=utc(r["at"]), actor=r["actor"], action=r["action"],
                            namespace=r["namespace"], detail=r["detail"], result=r["result"],
                            error=r["error"]) for r in rows], int(total)

    # -- the retrieval audit ------------------------------------------------------------------
    async def calls_returning(self, namespace: str, memory_id: str, limit: int
                              ) -> list[RetrievalHit]:
        rows = await self.pool.fetch(
            "SELECT r.call_id, c.tool, r.at, r.rank, r.score FROM retrieval_results r "
            "JOIN tool_call_records c ON c.call_id = r.call_id "
            "WHERE r.memory_id = $1 AND r.namespace = $2 ORDER BY r.at DESC, r.call_id LIMIT $3",
            memory_id, namespace, max(0, limit))
        return [RetrievalHit(call_id=r["call_id"], tool=r["tool"], at=utc(r["at"]),
                             rank=r["rank"], score=r["score"]) for r in rows]

    async def call_results(self, namespace: str, call_id: str) -> CallResults | None:
        call = await self.pool.fetchrow(
            "SELECT tool, status, code, at, duration_ms, inputs_hash FROM tool_call_records "
            "WHERE call_id = $1 AND namespace = $2", call_id, namespace)
        if call is None:
            return None
        hits = await self.pool.fetch(
            "SELECT memory_id, score FROM retrieval_results WHERE call_id = $1 ORDER BY rank",
            call_id)
        return CallResults(call_id=call_id, tool=call["tool"], status=call["status"],
                           code=call["code"], at=utc(call["at"]),
                           duration_ms=call["duration_ms"], inputs_hash=call["inputs_hash"],
                           returned=[(h["memory_id"], h["score"]) for h in hits])

    async def anonymise_admin_actions(self, namespace: str, replacement: str) -> int:
        async with self.pool.acquire() as con, con.transaction():
            a = await con.execute(
                "UPDATE admin_actions SET namespace = $1, error = replace(error, $2, $1) "
                "WHERE namespace = $2", replacement, namespace)
            b = await con.execute("UPDATE admin_actions SET actor = $1 WHERE actor = $2",
                                  f"namespace:{replacement}", f"namespace:{namespace}")
        return int(a.split()[-1]) + int(b.split()[-1])
