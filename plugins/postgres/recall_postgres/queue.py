"""The durable job queue on the `operations` table, shared by every process on one database.

- enqueue: INSERT ... ON CONFLICT (namespace, idempotency_key) DO NOTHING; a loser of the
  race reads the winner's row, so concurrent callers with one key all get the same job.
- claim: SELECT ... FOR UPDATE SKIP LOCKED inside an UPDATE, so two claimers never take the
  same job; a claim is a lease (lease_until, on the database clock so processes agree).
  A running job whose lease expired, or whose owner process is gone (see liveness), is
  claimable again: a killed process loses nothing, and a live sibling takes its jobs over
  at its next claim instead of waiting out the lease.
- complete/fail only apply to the claim that is still current (status running, same attempts),
  so a worker that lost its lease can never write twice (complete lives in storage.py
  because it writes memories in the same transaction).
- liveness: each storage instance holds a session advisory lock (LOCK_CLASS, owner) on a
  dedicated connection and stamps its claims with `claimed_by = owner`. A claim takes over
  running jobs whose owner's lock vanished with its connection; `requeue_running` at start-up
  re-queues those and this instance's own, and leaves live siblings' jobs alone. (A live
  process whose lock connection dropped would see its job taken over; its own completion is
  then refused as stale, so nothing is written twice.)
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import asyncpg

from recall_core import Operation, exhausted_message

from .rows import OPERATION_COLUMNS, aware, operation_from_row

LOCK_CLASS = 0x52434C4C  # "RCLL": first key of the per-process owner advisory lock

_OWNER_ALIVE = """
    EXISTS (SELECT 1 FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
              AND l.classid = {cls}::oid AND l.objid = operations.claimed_by::oid
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
""".format(cls=LOCK_CLASS)


async def hold_owner_lock(con: asyncpg.Connection) -> int:
    """Take a random free owner key on `con` (kept open for the storage's lifetime)."""
    for _ in range(20):
        owner = random.randint(1, 2**31 - 1)
        if await con.fetchval("SELECT pg_try_advisory_lock($1, $2)", LOCK_CLASS, owner):
            return owner
    raise RuntimeError("could not take a free job-owner advisory lock after 20 tries")


async def enqueue(pool: asyncpg.Pool, op: Operation) -> tuple[Operation, bool]:
    row = await pool.fetchrow(
        f"""INSERT INTO operations (id, namespace, idempotency_key, kind, status, attempts,
                                    payload, error, lease_until, created_at, finished_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            ON CONFLICT (namespace, idempotency_key) DO NOTHING
            RETURNING {OPERATION_COLUMNS}""",
        op.id, op.namespace, op.idempotency_key, op.kind, op.status, op.attempts, op.payload,
        op.error, aware(op.lease_until), aware(op.created_at), aware(op.finished_at))
    if row is not None:
        return operation_from_row(row), True
    # ON CONFLICT waited for the winner to commit; this new statement's snapshot sees it.
    row = await pool.fetchrow(
        f"SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = $1 AND idempotency_key = $2",
        op.namespace, op.idempotency_key)
    if row is None:  # the winner rolled back between our two statements: try again
        return await enqueue(pool, op)
    return operation_from_row(row), False


async def get_operation(pool: asyncpg.Pool, namespace: str, op_id: str) -> Operation | None:
    row = await pool.fetchrow(
        f"SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = $1 AND id = $2",
        namespace, op_id)
    return operation_from_row(row) if row is not None else None


async def claim_job(pool: asyncpg.Pool, owner: int, lease_seconds: float,
                    max_attempts: int | None = None) -> Operation | None:
    if max_attempts is not None:
        # Jobs whose lease expired on their last allowed attempt end failed, not re-run.
        for r in await pool.fetch(
                f"""SELECT id, attempts FROM operations
                     WHERE status = 'running' AND attempts >= $1
                       AND (lease_until < clock_timestamp()
                            OR (claimed_by IS NOT NULL AND NOT {_OWNER_ALIVE}))""", max_attempts):
            await pool.execute(
                """UPDATE operations SET status = 'failed', error = $3, lease_until = NULL,
                          claimed_by = NULL, finished_at = clock_timestamp()
                    WHERE id = $1 AND attempts = $2 AND status = 'running'""",
                r["id"], r["attempts"], exhausted_message(r["attempts"]))
    row = await pool.fetchrow(
        f"""WITH next AS (
                SELECT id FROM operations
                WHERE (status = 'queued'
                       AND (lease_until IS NULL OR lease_until <= clock_timestamp()))
                   OR (status = 'running' AND (lease_until < clock_timestamp()
                                               OR (claimed_by IS NOT NULL AND NOT {_OWNER_ALIVE})))
                ORDER BY created_at, id
                LIMIT 1
                FOR UPDATE SKIP LOCKED)
            UPDATE operations o
               SET status = 'running', attempts = o.attempts + 1, claimed_by = $1,
                   lease_until = clock_timestamp() + make_interval(secs => $2)
              FROM next WHERE o.id = next.id
            RETURNING {", ".join("o." + c.strip() for c in OPERATION_COLUMNS.split(","))}""",
        owner, float(lease_seconds))
    return operation_from_row(row) if row is not None else None


async def renew_lease(pool: asyncpg.Pool, op_id: str, attempts: int, lease_seconds: float) -> bool:
    result = await pool.execute(
        """UPDATE operations SET lease_until = clock_timestamp() + make_interval(secs => $3)
            WHERE id = $1 AND attempts = $2 AND status = 'running'""",
        op_id, attempts, float(lease_seconds))
    return result.split()[-1] != "0"


async def fail_job(pool: asyncpg.Pool, op_id: str, attempts: int, error: str, retry: bool,
                   retry_at=None) -> bool:
    # Guarded like complete_job: a stale claimer must not undo a newer claim's state.
    # A queued job's lease_until is its "not before" time.
    result = await pool.execute(
        """UPDATE operations
              SET status = CASE WHEN $4 THEN 'queued' ELSE 'failed' END,
                  error = $3, lease_until = CASE WHEN $4 THEN $5::timestamptz ELSE NULL END,
                  claimed_by = NULL,
                  finished_at = CASE WHEN $4 THEN NULL ELSE clock_timestamp() END
            WHERE id = $1 AND attempts = $2 AND status = 'running'""",
        op_id, attempts, error, retry, retry_at)
    return result.split()[-1] != "0"


async def release_job(pool: asyncpg.Pool, op_id: str, attempts: int, retry_at=None) -> bool:
    result = await pool.execute(
        """UPDATE operations
              SET status = 'queued', attempts = attempts - 1, lease_until = $3::timestamptz,
                  claimed_by = NULL
            WHERE id = $1 AND attempts = $2 AND status = 'running'""",
        op_id, attempts, retry_at)
    return result.split()[-1] != "0"


async def requeue_running(pool: asyncpg.Pool, owner: int) -> int:
    result = await pool.execute(
        f"""UPDATE operations
               SET status = 'queued', lease_until = NULL, claimed_by = NULL
             WHERE status = 'running'
               AND (claimed_by IS NULL OR claimed_by = $1
                    OR lease_until < clock_timestamp() OR NOT {_OWNER_ALIVE})""",
        owner)
    return int(result.split()[-1])


async def count_jobs(pool: asyncpg.Pool, namespace: str | None,
                     status: str | Sequence[str]) -> int:
    statuses = [status] if isinstance(status, str) else list(status)
    if namespace is None:
        return int(await pool.fetchval(
            "SELECT count(*) FROM operations WHERE status = ANY($1::text[])", statuses))
    return int(await pool.fetchval(
        "SELECT count(*) FROM operations WHERE namespace = $1 AND status = ANY($2::text[])",
        namespace, statuses))


async def recent_failures(pool: asyncpg.Pool, namespace: str | None, limit: int) -> list[dict]:
    rows = await pool.fetch(
        "SELECT id, namespace, kind, attempts, error, finished_at FROM operations "
        "WHERE status = 'failed' AND ($1::text IS NULL OR namespace = $1) "
        "ORDER BY finished_at DESC NULLS LAST, id LIMIT $2",
        namespace, max(0, limit))
    return [dict(r) for r in rows]
