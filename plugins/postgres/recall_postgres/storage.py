"""PostgresStorage: recall_core.contracts.storage.Storage on an asyncpg pool.

Same tables and semantics as the SQLite plugin; what Postgres adds is concurrency across
processes (see queue.py), a generated tsvector column with a GIN index for keyword search, and
pgvector when the server has it (see vectors.py). Memory rows live in memories.py and
search in retrieval.py (mixins sharing `pool`, `vectors` and the `_bump`/`_insert` helpers).

Lock order, to keep concurrent transactions free of deadlocks: operation row, then memory
rows (locked in id order), then keyword statistics rows (`fulltext_terms`, locked in lexeme
order by fulltext.sync), then the `namespaces` version row, always last.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.parse
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import asyncpg

from recall_core import ConfigError, TransientConflict
from recall_core import Operation, ToolCallRecord
from recall_core.contracts import Capabilities, OutboxEvent, TaskKeys, TaskPage, TaskQuery, TaskRow, TokenGrant

from . import queue
from .admin import AdminMethods
from .memories import MemoryMethods
from .oauth import OAuthMethods
from .fulltext import FullText
from .faults import PROBE, classify
from .migrations import MIGRATION_LOCK, current_version, migrate
from .retrieval import RetrievalMethods
from .rows import OPERATION_COLUMNS, aware, operation_from_row
from .settings import PostgresSettings
from .retry import RETRYABLE
from .tx import PgWriteTx
from .vectors import ArrayIndex, PgVectorIndex, choose, setup_vector_column
from .webhooks import WebhookMethods

log = logging.getLogger("recall_postgres")


async def _keep_session(con: asyncpg.Connection) -> None:
    """What a pooled connection's release runs after asyncpg's own cleanup (which rolls back
    a transaction left open): nothing. asyncpg's default sends 'pg_advisory_unlock_all();
    CLOSE ALL; UNLISTEN *; RESET ALL' on every release, one round trip each time (4 per
    search in process, ~8 per search over HTTP: ~0.3 ms each on the 2-vCPU VM), for session
    state this plugin never leaves on a pool connection: its advisory locks on them are
    transaction-scoped (pg_advisory_xact_lock; the job-owner lock has its own connection),
    its settings SET LOCAL or given at connect (server_settings), no LISTEN, no cursor
    outside a transaction."""


def redact(url: str) -> str:
    """user@host:port/db, never the password."""
    p = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(p.query)
    host = p.hostname or (query.get("host") or ["localhost"])[0]
    port = f":{p.port}" if p.port else ""
    user = f"{p.username}@" if p.username else ""
    db = p.path.lstrip("/") or (p.username or "")
    return f"{user}{host}{port}/{db}"


class PostgresStorage(MemoryMethods, RetrievalMethods, AdminMethods, OAuthMethods,
                      WebhookMethods):
    capabilities = Capabilities(fulltext=True, vectors=True, near_duplicates=True, history=True,
                                session_neighbours=True, time_ranges=True,
                                embedding_models=True, memory_sources=True, admin=True,
                                oauth=True, webhooks=True)

    def __init__(self, url: str, settings: PostgresSettings | None = None):
        self.url = url
        self.settings = settings or PostgresSettings()
        self.description = f"postgresql {redact(url)} (not opened)"
        self.vectors: PgVectorIndex | ArrayIndex | None = None
        self.schema_version: int | None = None
        self.server_version: str | None = None
        self.schema: str | None = None
        self._pool: asyncpg.Pool | None = None
        self._owner_con: asyncpg.Connection | None = None
        self._owner: int = 0
        self.fulltext = FullText()

    # -- lifecycle ------------------------------------------------------------------------
    def _server_settings(self) -> dict[str, str]:
        s = {"application_name": "recall"}
        if self.settings.statement_timeout:
            s["statement_timeout"] = str(int(self.settings.statement_timeout * 1000))
        return s

    async def _connect(self) -> asyncpg.Connection:
        try:
            return await asyncpg.connect(self.url, timeout=self.settings.connect_timeout,
                                         server_settings=self._server_settings())
        except (OSError, asyncio.TimeoutError, asyncpg.PostgresError,
                asyncpg.InterfaceError) as exc:
            raise ConfigError(
                f"Cannot connect to PostgreSQL at {redact(self.url)}: {type(exc).__name__}: "
                f"{exc}. Check RECALL_DB_URL (postgresql://user:password@host:port/db), that "
                f"the server is running and that the database exists.") from exc

    async def open(self) -> None:
        # This first connection migrates, then stays open holding the job-owner lock.
        con = await self._connect()
        try:
            async with con.transaction():
                await con.execute("SET LOCAL statement_timeout = 0")
                await con.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
                await migrate(con)
                choice = await choose(con, self.settings.vector)
                await setup_vector_column(con, choice, self.settings.hnsw_m,
                                          self.settings.hnsw_ef_construction)
            self.schema_version = await current_version(con)
            self.server_version = await con.fetchval("SHOW server_version")
            self.schema = await con.fetchval("SELECT current_schema()")
            s = self.settings
            if choice.mode == "pgvector":
                self.vectors = PgVectorIndex(choice, s.hnsw_ef_search, s.hnsw_m,
                                             s.hnsw_ef_construction)
            else:
                self.vectors = ArrayIndex(choice, s.array_cache_namespaces,
                                          s.array_cache_mb << 20, s.array_inline_rows,
                                          s.array_ann_min_rows, s.vector_index_dir)
            await self.vectors.load(con)
            self._owner = await queue.hold_owner_lock(con)
            self._pool = await asyncpg.create_pool(
                self.url, min_size=self.settings.pool_min, max_size=self.settings.pool_max,
                timeout=self.settings.connect_timeout,
                server_settings={**self._server_settings(), **self.vectors.server_settings()},
                init=self._init_connection, reset=_keep_session)
        except BaseException:
            await con.close()
            raise
        self._owner_con = con
        self.description = (
            f"postgresql {redact(self.url)} (PostgreSQL {self.server_version}, schema "
            f"{self.schema} v{self.schema_version}, pool {self.settings.pool_min}-{self.settings.pool_max}; "
            f"vectors: {self.vectors.describe()})")
        log.info("storage: %s", self.description)

    async def _init_connection(self, con: asyncpg.Connection) -> None:
        for typ in ("jsonb", "json"):
            await con.set_type_codec(typ, schema="pg_catalog", encoder=json.dumps,
                                     decoder=json.loads)
        assert self.vectors is not None
        await self.vectors.init_connection(con)

    def vectors_loading(self) -> list[str]:
        return self.vectors.loading() if isinstance(self.vectors, ArrayIndex) else []

    async def close(self) -> None:
        if isinstance(self.vectors, ArrayIndex):
            await self.vectors.close()  # background loads first: they use the pool
        if self._pool is not None:
            try:
                await asyncio.wait_for(self._pool.close(), timeout=10)
            except asyncio.TimeoutError:
                self._pool.terminate()
            self._pool = None
        if self._owner_con is not None:
            await self._owner_con.close()
            self._owner_con = None

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError("PostgresStorage.open() has not been called (or close() was)")
        return self._pool

    def classify_failure(self, exc: BaseException) -> str | None:
        return classify(exc)

    async def check_writable(self) -> None:
        await self.pool.execute(PROBE)

    def status(self) -> dict[str, Any]:
        """What `recall status` shows about this backend."""
        vec = self.vectors
        out: dict[str, Any] = {
            "backend": "postgresql",
            "database": redact(self.url),
            "server_version": self.server_version,
            "schema": self.schema,
            "schema_version": self.schema_version,
            "pool": {"min": self.settings.pool_min, "max": self.settings.pool_max},
            "vector_mode": vec.mode if vec else None,
            "vector_detail": vec.describe() if vec else None,
            "fulltext": "tsvector (english) + GIN, BM25 (exact, level-pruned)",
            "queue": "FOR UPDATE SKIP LOCKED with leases",
        }
        if self._pool is not None:
            out["pool"].update(size=self._pool.get_size(), idle=self._pool.get_idle_size())
        if isinstance(vec, PgVectorIndex):
            out["pgvector_version"] = vec.choice.version
            out["hnsw_dims"] = sorted(vec.indexed_dims)
        elif isinstance(vec, ArrayIndex):
            out["vector_fallback_reason"] = vec.choice.reason
        return out

    # -- tokens ---------------------------------------------------------------------------
    async def create_token(self, namespace: str, token_hash: str, agent: str | None = None,
                           scopes: str | None = None) -> None:
        if "/" in namespace:  # a partition ("ns/agent") is never a token's namespace
            raise ValueError(f"namespace {namespace!r} contains '/', which only partitions do")
        owner = await self.pool.fetchval(
            """INSERT INTO api_tokens (token_hash, namespace, agent, scopes)
               VALUES ($1, $2, $3, $4)
               ON CONFLICT (token_hash) DO UPDATE SET token_hash = excluded.token_hash
               RETURNING namespace""", token_hash, namespace, agent, scopes)
        if owner != namespace:
            raise ValueError("this token hash already belongs to another namespace; "
                             "generate a new token")

    async def namespace_for_token(self, token_hash: str) -> str | None:
        return await self.pool.fetchval(
            "SELECT namespace FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL",
            token_hash)

    async def grant_for_token(self, token_hash: str) -> TokenGrant | None:
        row = await self.pool.fetchrow(
            "SELECT namespace, agent, scopes FROM api_tokens "
            "WHERE token_hash = $1 AND revoked_at IS NULL", token_hash)
        return TokenGrant(row[0], row[1], row[2]) if row else None

    async def revoke_token(self, token_hash: str) -> bool:
        res = await self.pool.execute(
            "UPDATE api_tokens SET revoked_at = clock_timestamp() "
            "WHERE token_hash = $1 AND revoked_at IS NULL", token_hash)
        return res != "UPDATE 0"

    # -- operations / durable queue -----------------------------------------------------
    async def enqueue(self, op: Operation) -> tuple[Operation, bool]:
        return await queue.enqueue(self.pool, op)

    async def get_operation(self, namespace: str, op_id: str) -> Operation | None:
        return await queue.get_operation(self.pool, namespace, op_id)

    async def claim_job(self, lease_seconds: float, max_attempts: int | None = None
                        ) -> Operation | None:
        return await queue.claim_job(self.pool, self._owner, lease_seconds, max_attempts)

    async def payloads_to_scrub(self, finished_before: datetime, limit: int) -> list[Operation]:
        rows = await self.pool.fetch(
            f"""SELECT {OPERATION_COLUMNS} FROM operations
                 WHERE status IN ('done', 'failed') AND finished_at < $1
                   AND NOT (payload ? 'scrubbed') ORDER BY finished_at LIMIT $2""",
            aware(finished_before), max(0, limit))
        return [operation_from_row(r) for r in rows]

    async def expired_leases(self) -> int:
        return int(await self.pool.fetchval(
            "SELECT count(*) FROM operations WHERE status = 'running' "
            "AND lease_until < clock_timestamp()"))

    async def renew_lease(self, op_id: str, attempts: int, lease_seconds: float) -> bool:
        return await queue.renew_lease(self.pool, op_id, attempts, lease_seconds)

    @asynccontextmanager
    async def write(self, namespace: str, keys: Sequence[tuple[str, str]] = ()
                    ) -> AsyncIterator[PgWriteTx]:
        try:
            async with self.pool.acquire() as con:
                async with con.transaction():
                    tx = PgWriteTx(self, con, namespace)
                    await tx.lock(keys)
                    yield tx
                    await tx.settle()
        except RETRYABLE as exc:  # rolled back whole: the caller may run it again
            raise TransientConflict(str(exc)) from exc
        if tx.dims:
            await self.vectors.ensure_indexes(self.pool, tx.dims)

    async def fail_job(self, op_id: str, attempts: int, error: str, retry: bool,
                       retry_at: datetime | None = None, event: OutboxEvent | None = None
                       ) -> bool:
        return await queue.fail_job(self.pool, op_id, attempts, error, retry, retry_at, event)

    async def release_job(self, op_id: str, attempts: int, retry_at: datetime | None = None
                          ) -> bool:
        return await queue.release_job(self.pool, op_id, attempts, retry_at)

    async def requeue_running(self) -> int:
        return await queue.requeue_running(self.pool, self._owner)

    async def count_jobs(self, namespace: str | None, status: str | Sequence[str]) -> int:
        return await queue.count_jobs(self.pool, namespace, status)

    async def recent_failures(self, namespace: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
        return await queue.recent_failures(self.pool, namespace, limit)

    # -- audit and A2A --------------------------------------------------------------------
    async def record_tool_call(self, record: ToolCallRecord) -> None:
        await self.record_tool_calls([record])

    async def record_tool_calls(self, records: Sequence[ToolCallRecord]) -> None:
        """Several rows in one statement (core's audit log writes them in batches)."""
        if not records:
            return
        returned = [(r.call_id, r.namespace, hit.id, rank, float(hit.score), aware(r.at))
                    for r in records if r.namespace is not None
                    for rank, hit in enumerate(r.returned, 1)]
        async with self.pool.acquire() as con, con.transaction():
            await con.execute(
                """INSERT INTO tool_call_records (tool, namespace, inputs_hash, status, code,
                                                  duration_ms, at, call_id)
                   SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
                                        $5::text[], $6::float8[], $7::timestamptz[],
                                        $8::text[])""",
                [r.tool for r in records], [r.namespace for r in records],
                [r.inputs_hash for r in records], [r.status for r in records],
                [r.code for r in records], [float(r.duration_ms) for r in records],
                [aware(r.at) for r in records], [r.call_id for r in records])
            if returned:
                await con.executemany(
                    "INSERT INTO retrieval_results (call_id, namespace, memory_id, rank, score, "
                    "at) VALUES ($1, $2, $3, $4, $5, $6)", returned)

    async def save_task(self, namespace: str, task_id: str, data: dict[str, Any],
                        keys: TaskKeys = TaskKeys()) -> None:
        await self.pool.execute(
            """INSERT INTO a2a_tasks (namespace, task_id, data, context_id, state, status_ns)
               VALUES ($1, $2, $3, $4, $5, $6)
               ON CONFLICT (namespace, task_id)
               DO UPDATE SET data = excluded.data, updated_at = clock_timestamp(),
                             context_id = excluded.context_id, state = excluded.state,
                             status_ns = excluded.status_ns""",
            namespace, task_id, data, keys.context_id, keys.state, keys.status_ns)

    async def get_task(self, namespace: str, task_id: str) -> dict[str, Any] | None:
        return await self.pool.fetchval(
            "SELECT data FROM a2a_tasks WHERE namespace = $1 AND task_id = $2",
            namespace, task_id)

    async def list_tasks(self, namespace: str, query: TaskQuery = TaskQuery()) -> TaskPage:
        where, params = ["namespace = $1"], [namespace]
        for clause, value in (("context_id = ${}", query.context_id),
                              ("state = ${}", query.state),
                              ("status_ns >= ${}", query.status_ns_from)):
            if value is not None:
                params.append(value)
                where.append(clause.format(len(params)))
        filters = " AND ".join(where)
        total = await self.pool.fetchval(f"SELECT count(*) FROM a2a_tasks WHERE {filters}",
                                         *params)
        position, at = "", list(params)
        if query.after is not None:
            ns, task_id = query.after
            at.append(task_id)
            after_id = f'task_id COLLATE "C" < ${len(at)}'
            if ns is None:
                position = f" AND status_ns IS NULL AND {after_id}"
            else:
                at.append(ns)
                n = len(at)
                position = (f" AND (status_ns < ${n} OR (status_ns = ${n} AND {after_id}) "
                            f"OR status_ns IS NULL)")
        at.append(query.limit)
        rows = await self.pool.fetch(
            f"""SELECT task_id, status_ns, data FROM a2a_tasks WHERE {filters}{position}
                ORDER BY status_ns DESC NULLS LAST, task_id COLLATE "C" DESC
                LIMIT ${len(at)}""", *at)
        return TaskPage([TaskRow(r["task_id"], r["status_ns"], r["data"]) for r in rows], total)

    async def expire_tasks(self, updated_before: datetime) -> int:
        result = await self.pool.execute("DELETE FROM a2a_tasks WHERE updated_at < $1",
                                         aware(updated_before))
        return int(result.split()[-1])

    async def delete_task(self, namespace: str, task_id: str) -> None:
        await self.pool.execute("DELETE FROM a2a_tasks WHERE namespace = $1 AND task_id = $2",
                                namespace, task_id)
