"""Tokens and the durable queue (`operations`): enqueue with idempotency, claims with leases
and attempts, retries, failures and counts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from recall_core import Operation, exhausted_message, utcnow
from recall_core.contracts import OutboxEvent, TokenGrant, extraction_failed

from .codec import OPERATION_COLUMNS, now_text, operation_from_row, operation_params, to_db
from .webhooks import emit


class QueueMethods:
    async def create_token(self, namespace: str, token_hash: str, agent: str | None = None,
                           scopes: str | None = None) -> None:
        if "/" in namespace:  # a partition ("ns/agent") is never a token's namespace
            raise ValueError(f"namespace {namespace!r} contains '/', which only partitions do")
        await self.db.write(
            "INSERT INTO api_tokens (token_hash, namespace, created_at, agent, scopes) "
            "VALUES (?, ?, ?, ?, ?)", (token_hash, namespace, now_text(), agent, scopes))

    async def grant_for_token(self, token_hash: str) -> TokenGrant | None:
        row = await self.db.fetch_one(
            "SELECT namespace, agent, scopes FROM api_tokens "
            "WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,))
        return TokenGrant(row[0], row[1], row[2]) if row else None

    async def namespace_for_token(self, token_hash: str) -> str | None:
        row = await self.db.fetch_one(
            "SELECT namespace FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL",
            (token_hash,))
        return row[0] if row else None

    async def revoke_token(self, token_hash: str) -> bool:
        return await self.db.write(
            "UPDATE api_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
            (now_text(), token_hash)) == 1

    async def enqueue(self, op: Operation) -> tuple[Operation, bool]:
        params = operation_params(op)
        # One autocommit INSERT is atomic; the unique (namespace, idempotency_key) index
        # decides the race, in this process or another.
        created = await self.db.write(
            f"INSERT INTO operations ({OPERATION_COLUMNS}, enqueued_seq) "
            f"VALUES ({', '.join('?' * 11)}, "
            "(SELECT coalesce(max(enqueued_seq), 0) + 1 FROM operations)) "
            "ON CONFLICT (namespace, idempotency_key) DO NOTHING", params) == 1
        if created:
            return operation_from_row(params), True
        row = await self.db.fetch_one(
            f"SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = ? AND idempotency_key = ?",
            (op.namespace, op.idempotency_key))
        if row is None:  # only if the winner was deleted (delete_namespace) in between
            return await self.enqueue(op)
        return operation_from_row(row), False

    async def get_operation(self, namespace: str, op_id: str) -> Operation | None:
        row = await self.db.fetch_one(
            f"SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = ? AND id = ?",
            (namespace, op_id))
        return operation_from_row(row) if row else None

    # Is anything claimable? (Idle polls stay on the reader and never take the write lock.)
    _ANY = ("SELECT 1 FROM operations WHERE status = 'queued' "
            " AND (lease_until IS NULL OR lease_until <= ?) "
            "UNION ALL SELECT 1 FROM operations WHERE status = 'running' AND lease_until < ? "
            "LIMIT 1")
    # A running job whose lease expired goes first: it already had its turn.
    _EXPIRED = ("SELECT id FROM operations WHERE status = 'running' AND lease_until < ? "
                "ORDER BY enqueued_seq LIMIT 1")
    # Fair turns (issue 28): the namespaces with queued jobs (a skip scan of operations_fair,
    # one seek per namespace, however long a backlog), the one whose last claim is oldest
    # (never claimed first), then its oldest enqueued ready job.
    _FAIR = ("WITH RECURSIVE ns(n) AS ("
             " SELECT (SELECT min(namespace) FROM operations WHERE status = 'queued')"
             " UNION ALL"
             " SELECT (SELECT min(namespace) FROM operations"
             "         WHERE status = 'queued' AND namespace > n) FROM ns WHERE n IS NOT NULL)"
             " SELECT head FROM (SELECT"
             "  (SELECT id FROM operations WHERE status = 'queued' AND namespace = n"
             "    AND (lease_until IS NULL OR lease_until <= ?) ORDER BY enqueued_seq LIMIT 1)"
             "   AS head,"
             "  (SELECT max(claimed_at) FROM operations WHERE namespace = n"
             "    AND claimed_at IS NOT NULL) AS served"
             "  FROM ns WHERE n IS NOT NULL)"
             " WHERE head IS NOT NULL"
             " ORDER BY coalesce(served, ''),"
             "  (SELECT enqueued_seq FROM operations WHERE id = head) LIMIT 1")

    async def claim_job(self, lease_seconds: float, max_attempts: int | None = None
                        ) -> Operation | None:
        now = utcnow()
        if await self.db.fetch_one(self._ANY, (to_db(now), to_db(now))) is None:
            return None
        async with self.db.transaction() as db:
            now = utcnow()  # again: waiting for the write lock may have taken a while
            if max_attempts is not None:
                for op_id, attempts, ns, key in await db.execute_fetchall(
                        "SELECT id, attempts, namespace, idempotency_key FROM operations "
                        "WHERE status = 'running' AND lease_until < ? AND attempts >= ?",
                        (to_db(now), max_attempts)):
                    await db.execute(
                        "UPDATE operations SET status = 'failed', error = ?, finished_at = ?, "
                        "lease_until = NULL WHERE id = ?",
                        (exhausted_message(attempts), to_db(now), op_id))
                    await emit(db, extraction_failed(op_id, ns, key, attempts,
                                                     exhausted_message(attempts), "EXHAUSTED"))
            rows = (await db.execute_fetchall(self._EXPIRED, (to_db(now),))
                    or await db.execute_fetchall(self._FAIR, (to_db(now),)))
            if not rows:
                return None
            op_id = rows[0][0]
            await db.execute(
                "UPDATE operations SET status = 'running', attempts = attempts + 1, "
                "lease_until = ?, claimed_at = ? WHERE id = ?",
                (to_db(now + timedelta(seconds=lease_seconds)), to_db(now), op_id))
            row = (await db.execute_fetchall(
                f"SELECT {OPERATION_COLUMNS} FROM operations WHERE id = ?", (op_id,)))[0]
        return operation_from_row(row)

    async def payloads_to_scrub(self, finished_before: datetime, limit: int) -> list[Operation]:
        rows = await self.db.fetch(
            f"SELECT {OPERATION_COLUMNS} FROM operations WHERE status IN ('done', 'failed') "
            "AND finished_at < ? AND json_extract(payload, '$.scrubbed') IS NULL "
            "ORDER BY finished_at LIMIT ?", (to_db(finished_before), max(0, limit)))
        return [operation_from_row(r) for r in rows]

    async def expired_leases(self) -> int:
        row = await self.db.fetch_one(
            "SELECT count(*) FROM operations WHERE status = 'running' AND lease_until < ?",
            (now_text(),))
        return int(row[0])

    async def renew_lease(self, op_id: str, attempts: int, lease_seconds: float) -> bool:
        until = to_db(utcnow() + timedelta(seconds=lease_seconds))
        return await self.db.write(
            "UPDATE operations SET lease_until = ? WHERE id = ? AND status = 'running' "
            "AND attempts = ?", (until, op_id, attempts)) == 1

    async def fail_job(self, op_id: str, attempts: int, error: str, retry: bool,
                       retry_at: datetime | None = None, event: OutboxEvent | None = None
                       ) -> bool:
        # Guarded like complete_job: a stale claim must not touch a job someone else now runs.
        # A queued job's lease_until is its "not before" time.
        async with self.db.transaction() as db:
            cur = await db.execute(
                "UPDATE operations SET status = ?, error = ?, lease_until = ?, finished_at = ? "
                "WHERE id = ? AND status = 'running' AND attempts = ?",
                ("queued" if retry else "failed", error, to_db(retry_at) if retry else None,
                 None if retry else now_text(), op_id, attempts))
            if cur.rowcount and event is not None:  # the outbox, in the same transaction
                await emit(db, event)
        return cur.rowcount > 0

    async def release_job(self, op_id: str, attempts: int, retry_at: datetime | None = None
                          ) -> bool:
        changed = await self.db.write(
            "UPDATE operations SET status = 'queued', attempts = attempts - 1, lease_until = ? "
            "WHERE id = ? AND status = 'running' AND attempts = ?",
            (to_db(retry_at) if retry_at is not None else None, op_id, attempts))
        return changed > 0

    async def recent_failures(self, namespace: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT id, namespace, kind, attempts, error, finished_at FROM operations "
            "WHERE status = 'failed' AND (? IS NULL OR namespace = ?) "
            "ORDER BY finished_at DESC, id LIMIT ?", (namespace, namespace, max(0, limit)))
        return [{"id": r[0], "namespace": r[1], "kind": r[2], "attempts": r[3], "error": r[4],
                 "finished_at": r[5]} for r in rows]

    async def requeue_running(self) -> int:
        return await self.db.write(
            "UPDATE operations SET status = 'queued', lease_until = NULL WHERE status = 'running'")

    async def count_jobs(self, namespace: str | None, status: str | Sequence[str]) -> int:
        statuses = (status,) if isinstance(status, str) else tuple(status)
        if not statuses:
            return 0
        marks = ", ".join("?" * len(statuses))
        if namespace is None:
            row = await self.db.fetch_one(
                f"SELECT count(*) FROM operations WHERE status IN ({marks})", statuses)
        else:
            row = await self.db.fetch_one(
                f"SELECT count(*) FROM operations WHERE namespace = ? AND status IN ({marks})",
                (namespace, *statuses))
        return int(row[0])
