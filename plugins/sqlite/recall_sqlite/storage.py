"""`SQLiteStorage`: the Storage protocol on one SQLite file.

Every statement that reads or writes tenant rows filters by namespace. Multi-statement writes
run in one BEGIN IMMEDIATE transaction (see `Database.transaction`), so they are all or
nothing, also against other processes using the same file.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import asynccontextmanager
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

import aiosqlite

from recall_core import (MEMORY_TYPES, Memory, Operation, ScoredId, ToolCallRecord,
                                exhausted_message, utcnow)
from recall_core.contracts import (Capabilities, DecayRow, TaskKeys, TaskPage, TaskQuery, TaskRow,
                                   VectorToRedo)

from .admin import AdminMethods
from .codec import (INSERT_MEMORY, by_ids, MEMORY_COLUMNS, OPERATION_COLUMNS, from_db, memory_from_row,
                    memory_params, now_text, operation_from_row, operation_params, pack_vector,
                    to_db, unpack_vector)
from .connection import Database, chunks
from .fulltext import FullText
from .settings import SQLiteSettings
from .tx import SQLiteWriteTx, conflict
from .vectors import OF_MODEL, PRUNE_EVERY, RESET, VectorSearch, prune_vector_events

# The active memories just before and after each candidate in its session (created_at, then
# insertion order, as latest_in_session): two seeks a candidate on memories_session_order.
# `+c.namespace` keeps the outer lookup on the id list (see codec.by_ids).
NEIGHBOURS = """
SELECT c.id,
  (SELECT p.id FROM memories AS p
    WHERE p.namespace = c.namespace AND p.session_id = c.session_id AND p.valid_until IS NULL
      AND (p.created_at, p.seq) < (c.created_at, c.seq)
    ORDER BY p.created_at DESC, p.seq DESC LIMIT 1),
  (SELECT n.id FROM memories AS n
    WHERE n.namespace = c.namespace AND n.session_id = c.session_id AND n.valid_until IS NULL
      AND (n.created_at, n.seq) > (c.created_at, c.seq)
    ORDER BY n.created_at, n.seq LIMIT 1)
FROM memories AS c
WHERE +c.namespace = ? AND c.valid_until IS NULL AND c.session_id IS NOT NULL AND c.id IN ({ids})
"""

_ITER_BATCH = 500
#: An insert of at least this many memories (an import) merges the full-text index after.
OPTIMIZE_AFTER_ROWS = 5000


class SQLiteStorage(AdminMethods):
    capabilities = Capabilities(fulltext=True, vectors=True, near_duplicates=True, history=True,
                                session_neighbours=True, time_ranges=True,
                                embedding_models=True, memory_sources=True, admin=True)

    def __init__(self, path: str, settings: SQLiteSettings | None = None):
        self.settings = settings or SQLiteSettings()
        self.db = Database(path, self.settings)
        self._fulltext = FullText(self.db)
        self._vectors = VectorSearch(self.db, self.settings.vector_cache_namespaces)
        self._writes = 0

    @property
    def path(self) -> str:
        return self.db.path

    @property
    def description(self) -> str:
        return f"sqlite {self.db.path} ({self.db.journal_mode})"

    async def open(self) -> None:
        await self.db.open()
        async with self.db.transaction() as db:
            await prune_vector_events(db)

    async def close(self) -> None:
        await self.db.close()

    def status(self) -> dict[str, Any]:
        """What `recall status` shows about this backend."""
        return {"backend": "sqlite", "path": self.db.path, "journal_mode": self.db.journal_mode,
                "sqlite_version": sqlite3.sqlite_version,
                "fulltext": "FTS5 (BM25, context column weighted)",
                "vectors": "in-process exact cosine index per namespace"}

    # -- tokens -------------------------------------------------------------------------------
    async def create_token(self, namespace: str, token_hash: str) -> None:
        await self.db.write(
            "INSERT INTO api_tokens (token_hash, namespace, created_at) VALUES (?, ?, ?)",
            (token_hash, namespace, now_text()))

    async def namespace_for_token(self, token_hash: str) -> str | None:
        row = await self.db.fetch_one(
            "SELECT namespace FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL",
            (token_hash,))
        return row[0] if row else None

    async def revoke_token(self, token_hash: str) -> bool:
        return await self.db.write(
            "UPDATE api_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
            (now_text(), token_hash)) == 1

    # -- operations / durable queue ---------------------------------------------------------
    async def enqueue(self, op: Operation) -> tuple[Operation, bool]:
        params = operation_params(op)
        # One autocommit INSERT is atomic; the unique (namespace, idempotency_key) index
        # decides the race, in this process or another.
        created = await self.db.write(
            f"INSERT INTO operations ({OPERATION_COLUMNS}) VALUES ({', '.join('?' * 11)}) "
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

    _READY = ("SELECT id FROM ("
              " SELECT id, created_at, rowid AS r FROM (SELECT id, created_at, rowid FROM operations"
              "  WHERE status = 'queued' AND (lease_until IS NULL OR lease_until <= ?)"
              "  ORDER BY created_at, rowid LIMIT 1)"
              " UNION ALL"
              " SELECT id, created_at, rowid AS r FROM (SELECT id, created_at, rowid FROM operations"
              "  WHERE status = 'running' AND lease_until < ? ORDER BY created_at, rowid LIMIT 1)"
              ") ORDER BY created_at, r LIMIT 1")

    async def claim_job(self, lease_seconds: float, max_attempts: int | None = None
                        ) -> Operation | None:
        now = utcnow()
        # Idle polls stay on the reader and never take the write lock.
        if await self.db.fetch_one(self._READY, (to_db(now), to_db(now))) is None:
            return None
        async with self.db.transaction() as db:
            now = utcnow()  # again: waiting for the write lock may have taken a while
            if max_attempts is not None:
                for op_id, attempts in await db.execute_fetchall(
                        "SELECT id, attempts FROM operations WHERE status = 'running' "
                        "AND lease_until < ? AND attempts >= ?", (to_db(now), max_attempts)):
                    await db.execute(
                        "UPDATE operations SET status = 'failed', error = ?, finished_at = ?, "
                        "lease_until = NULL WHERE id = ?",
                        (exhausted_message(attempts), to_db(now), op_id))
            rows = await db.execute_fetchall(self._READY, (to_db(now), to_db(now)))
            if not rows:
                return None
            op_id = rows[0][0]
            await db.execute(
                "UPDATE operations SET status = 'running', attempts = attempts + 1, "
                "lease_until = ? WHERE id = ?",
                (to_db(now + timedelta(seconds=lease_seconds)), op_id))
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
                       retry_at: datetime | None = None) -> bool:
        # Guarded like complete_job: a stale claim must not touch a job someone else now runs.
        # A queued job's lease_until is its "not before" time.
        changed = await self.db.write(
            "UPDATE operations SET status = ?, error = ?, lease_until = ?, finished_at = ? "
            "WHERE id = ? AND status = 'running' AND attempts = ?",
            ("queued" if retry else "failed", error, to_db(retry_at) if retry else None,
             None if retry else now_text(), op_id, attempts))
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

    # -- memories -----------------------------------------------------------------------------
    async def insert_memories(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        async with self.db.transaction() as db:
            try:
                await _insert_memories(db, memories)
            except sqlite3.IntegrityError as exc:
                raise conflict(exc, memories[0].namespace) from None
            await self._changed(db, [m.namespace for m in memories])
        if len(memories) >= OPTIMIZE_AFTER_ROWS:
            # A bulk load leaves the full-text index in many segments; merging them into one
            # made queries ~25% faster at 100k rows and costs ~0.2 s there (bench/speed.py).
            async with self.db.transaction() as db:
                await db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")

    async def get_memories(self, namespace: str, ids: Sequence[str]) -> list[Memory]:
        out: list[Memory] = []
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.fetch(by_ids(MEMORY_COLUMNS, "valid_until IS NULL", len(part)),
                                       (namespace, *part))
            out.extend(memory_from_row(r) for r in rows)
        return out

    async def list_memories(self, namespace: str, limit: int, offset: int) -> tuple[list[Memory], int]:
        rows = await self.db.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND valid_until IS NULL "
            "ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?",
            (namespace, max(0, limit), max(0, offset)))
        return [memory_from_row(r) for r in rows], await self._active_count(namespace)

    async def _active_count(self, namespace: str) -> int:
        row = await self.db.fetch_one(
            "SELECT coalesce(sum(n), 0) FROM active_counts WHERE namespace = ?", (namespace,))
        return int(row[0])

    async def iter_memories(self, namespace: str, active_only: bool = True) -> AsyncIterator[Memory]:
        # Keyset pages, so no statement stays open across a yield.
        active = "AND valid_until IS NULL" if active_only else ""
        created, seq = "", -1
        while True:
            rows = await self.db.fetch(
                f"SELECT {MEMORY_COLUMNS}, seq FROM memories WHERE namespace = ? {active} "
                f"AND (created_at, seq) > (?, ?) ORDER BY created_at, seq LIMIT {_ITER_BATCH}",
                (namespace, created, seq))
            for r in rows:
                yield memory_from_row(r)
            if len(rows) < _ITER_BATCH:
                return
            created, seq = rows[-1][11], rows[-1][-1]

    async def session_neighbours(self, namespace: str, ids: Sequence[str]
                                 ) -> dict[str, tuple[str | None, str | None]]:
        out: dict[str, tuple[str | None, str | None]] = {}
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.fetch(NEIGHBOURS.format(ids=", ".join("?" * len(part))),
                                       (namespace, *part))
            out.update((r[0], (r[1], r[2])) for r in rows)
        return out

    async def latest_in_session(self, namespace: str, session_id: str) -> Memory | None:
        row = await self.db.fetch_one(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND session_id = ? "
            "AND valid_until IS NULL ORDER BY created_at DESC, seq DESC LIMIT 1",
            (namespace, session_id))
        return memory_from_row(row) if row else None

    async def history(self, namespace: str, entity: str, attribute: str) -> list[Memory]:
        rows = await self.db.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND entity = ? "
            "AND attribute = ? ORDER BY created_at, seq", (namespace, entity, attribute))
        return [memory_from_row(r) for r in rows]

    async def memories_at(self, namespace: str, at: datetime) -> list[Memory]:
        # Text comparison is time order: every datetime is stored fixed-width UTC (codec).
        # With the session context: the ranker indexes it like the full-text index does.
        t = to_db(at)
        rows = await self.db.fetch(
            f"SELECT {MEMORY_COLUMNS}, context FROM memories WHERE namespace = ? "
            "AND valid_from <= ? AND (valid_until IS NULL OR valid_until > ?) "
            "ORDER BY valid_from, seq", (namespace, t, t))
        out = []
        for r in rows:
            m = memory_from_row(r)
            m.context = r[-1]
            out.append(m)
        return out

    async def memories_created(self, namespace: str, ranges: Sequence[tuple[datetime, datetime]],
                               limit: int) -> list[Memory] | None:
        # Counted first on the index alone (memories_active), at most limit + 1 per range:
        # a window too full to rank costs no row reads. A row in two ranges comes once (UNION).
        if not ranges:
            return []
        where = "WHERE namespace = ? AND valid_until IS NULL AND created_at >= ? AND created_at < ?"
        params: list[Any] = []
        for start, end in ranges:
            params += [namespace, to_db(start), to_db(end), limit + 1]
        seqs = await self.db.fetch(" UNION ".join(
            [f"SELECT * FROM (SELECT seq FROM memories {where} ORDER BY created_at, seq LIMIT ?)"]
            * len(ranges)), params)
        if len(seqs) > limit:
            return None
        out = []
        for part in chunks([r[0] for r in seqs]):
            rows = await self.db.fetch(
                f"SELECT {MEMORY_COLUMNS}, context, seq FROM memories WHERE seq IN "
                f"({', '.join('?' * len(part))})", part)
            for r in rows:
                m = memory_from_row(r)
                m.context = r[-2]
                out.append((m.created_at, r[-1], m))
        return [m for *_, m in sorted(out, key=lambda t: (t[0], t[1]))]

    @asynccontextmanager
    async def write(self, namespace: str, keys: Sequence[tuple[str, str]] = ()
                    ) -> AsyncIterator[SQLiteWriteTx]:
        # BEGIN IMMEDIATE serialises every writer of the file, so it is the key lock too.
        async with self.db.transaction() as db:
            tx = SQLiteWriteTx(db, namespace)
            yield tx
            if tx.changed:
                await self._changed(db, [namespace])

    async def record_access(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        # Deliberately no version bump: access counts feed scoring, not any cached index, and
        # bumping on every search would defeat the caches.
        if not ids:
            return
        async with self.db.transaction() as db:
            await db.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? "
                "WHERE namespace = ? AND id = ?", [(to_db(at), namespace, mid) for mid in ids])

    async def stats(self, namespace: str) -> dict[str, int]:
        rows = await self.db.fetch(
            "SELECT type, n FROM active_counts WHERE namespace = ? AND n > 0", (namespace,))
        out = dict.fromkeys(MEMORY_TYPES, 0)
        out.update({r[0]: int(r[1]) for r in rows})
        return out

    async def namespace_version(self, namespace: str) -> int:
        row = await self.db.fetch_one(
            "SELECT version FROM namespace_versions WHERE namespace = ?", (namespace,))
        return int(row[0]) if row else 0

    async def delete_namespace(self, namespace: str) -> tuple[int, int]:
        now = now_text()
        async with self.db.transaction() as db:
            cur = await db.execute("DELETE FROM memories WHERE namespace = ?", (namespace,))
            memories = cur.rowcount
            for table in ("operations", "a2a_tasks", "tool_call_records", "active_counts"):
                await db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
            cur = await db.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE namespace = ? AND revoked_at IS NULL",
                (now, namespace))
            tokens = cur.rowcount
            # No row may name the erased namespace, not even the vector event log: every
            # process reloads all its vector indexes instead (a namespace-less event moves
            # the pruning mark past every cursor; erases are rare).
            await db.execute("DELETE FROM vector_events WHERE namespace = ?", (namespace,))
            await db.execute("DELETE FROM namespace_versions WHERE namespace = ?", (namespace,))
            await db.execute("INSERT INTO vector_events (namespace, memory_seq) VALUES ('', ?)",
                             (RESET,))
            await db.execute("UPDATE vector_events_pruned SET upto = "
                             "(SELECT max(seq) FROM vector_events) WHERE id = 1")
        self._vectors.forget(namespace)
        return memories, tokens

    async def update_importance(self, updates: Sequence[tuple[str, str, float]]) -> None:
        # A new base: whatever decay did before is forgotten.
        await self._set_importance(
            "UPDATE memories SET importance = ?, base_importance = NULL "
            "WHERE namespace = ? AND id = ?", updates)

    # -- decay --------------------------------------------------------------------------------
    async def decay_candidates(self, after: str | None, limit: int) -> list[DecayRow]:
        # Walks the unique index on id; superseded rows are skipped, not returned.
        rows = await self.db.fetch(
            "SELECT namespace, id, coalesce(base_importance, importance), importance, "
            "created_at, last_accessed_at, access_count FROM memories "
            "WHERE id > ? AND valid_until IS NULL AND pinned = 0 ORDER BY id LIMIT ?",
            (after or "", max(0, limit)))
        return [DecayRow(r[0], r[1], float(r[2]), float(r[3]), from_db(r[4]), from_db(r[5]),
                         int(r[6])) for r in rows]

    async def apply_decay(self, updates: Sequence[tuple[str, str, float]]) -> None:
        # Decay keeps the base, so the next run recomputes from it instead of compounding.
        await self._set_importance(
            "UPDATE memories SET base_importance = coalesce(base_importance, importance), "
            "importance = ? WHERE namespace = ? AND id = ? AND valid_until IS NULL", updates)

    async def _set_importance(self, sql: str, updates: Sequence[tuple[str, str, float]]) -> None:
        """Run `sql` with (importance, namespace, id) per update in one transaction and
        bump the version of every namespace it changed."""
        if not updates:
            return
        by_namespace: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
        for namespace, mid, importance in updates:
            by_namespace[namespace].append((float(importance), namespace, mid))
        async with self.db.transaction() as db:
            changed = []
            for namespace, params in by_namespace.items():
                cur = await db.executemany(sql, params)
                if cur.rowcount:
                    changed.append(namespace)
            await self._changed(db, changed)

    async def _changed(self, db: aiosqlite.Connection, namespaces: Iterable[str]) -> None:
        """Inside a write transaction: give each namespace the next value of the global
        version counter; now and then prune the vector event log."""
        for namespace in dict.fromkeys(namespaces):
            await db.execute("UPDATE version_counter SET value = value + 1 WHERE id = 1")
            await db.execute(
                "INSERT INTO namespace_versions (namespace, version) "
                "SELECT ?, value FROM version_counter WHERE id = 1 "
                "ON CONFLICT (namespace) DO UPDATE SET version = excluded.version", (namespace,))
        self._writes += 1
        if self._writes % PRUNE_EVERY == 0:
            await prune_vector_events(db)

    # -- retrieval ----------------------------------------------------------------------------
    async def search_fulltext(self, namespace: str, terms: Sequence[str], limit: int) -> list[ScoredId]:
        return await self._fulltext.search(namespace, terms, limit)

    async def search_near_duplicates(self, namespace: str, terms: Sequence[str],
                                     max_missing: int, limit: int) -> list[ScoredId]:
        return await self._fulltext.near_duplicates(namespace, terms, max_missing, limit)

    async def search_vectors(self, namespace: str, vector: Sequence[float], limit: int,
                             model: str | None = None) -> list[ScoredId]:
        return [ScoredId(id=i, score=s)
                for i, s in await self._vectors.search(namespace, vector, limit, model)]

    async def set_embeddings(self, namespace: str, items: Sequence[tuple[str, Sequence[float]]],
                             model: str | None = None) -> None:
        if not items:
            return
        async with self.db.transaction() as db:
            cur = await db.executemany(
                "UPDATE memories SET embedding = ?, embedding_model = ? "
                "WHERE namespace = ? AND id = ?",
                [(pack_vector(vec), model, namespace, mid) for mid, vec in items])
            if cur.rowcount:
                await self._changed(db, [namespace])

    async def get_embeddings(self, namespace: str, ids: Sequence[str],
                             model: str | None = None) -> dict[str, list[float]]:
        # The model parameters go between namespace and ids: by_ids puts `condition` first.
        out: dict[str, list[float]] = {}
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.fetch(
                by_ids("id, embedding", f"embedding IS NOT NULL AND {OF_MODEL}", len(part)),
                (namespace, model, model, *part))
            out.update((r[0], unpack_vector(r[1])) for r in rows)
        return out

    async def memory_sources(self, namespace: str | None) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT CASE WHEN m.source_job_id IS NULL THEN NULL "
            "ELSE coalesce(json_extract(o.payload, '$.result.extractor'), '') END AS x, "
            "json_extract(o.payload, '$.result.model') AS mo, "
            "json_extract(o.payload, '$.result.prompt_version') AS pv, count(*) AS n "
            "FROM memories m LEFT JOIN operations o ON o.id = m.source_job_id "
            "AND o.namespace = m.namespace WHERE m.valid_until IS NULL "
            "AND (? IS NULL OR m.namespace = ?) GROUP BY x, mo, pv ORDER BY n DESC, x",
            (namespace, namespace))
        return [{"extractor": r[0], "model": r[1], "prompt_version": r[2], "memories": int(r[3])}
                for r in rows]

    async def embedding_models(self, namespace: str | None) -> dict[str | None, int]:
        rows = await self.db.fetch(
            "SELECT embedding_model, count(*) FROM memories WHERE embedding IS NOT NULL "
            "AND (? IS NULL OR namespace = ?) GROUP BY embedding_model", (namespace, namespace))
        return {r[0]: int(r[1]) for r in rows}

    async def other_model_vectors(self, namespace: str, model: str) -> int:
        # Two ranges of the (namespace, embedding_model) index rather than a scan of it.
        row = await self.db.fetch_one(
            "SELECT count(*) FROM memories WHERE namespace = ? AND embedding IS NOT NULL "
            "AND valid_until IS NULL AND (embedding_model < ? OR embedding_model > ?)",
            (namespace, model, model))
        return int(row[0])

    async def embeddings_to_redo(self, namespace: str | None, model: str, after: int,
                                 limit: int) -> list[VectorToRedo]:
        # A walk of the rowid from `after`: a whole run reads the table once.
        rows = await self.db.fetch(
            "SELECT seq, namespace, id, text, session_id FROM memories WHERE seq > ? "
            "AND embedding IS NOT NULL AND (embedding_model IS NULL OR embedding_model != ?) "
            "AND (? IS NULL OR namespace = ?) ORDER BY seq LIMIT ?",
            (after, model, namespace, namespace, max(0, limit)))
        return [VectorToRedo(*r) for r in rows]

    async def ids_missing_embeddings(self, limit: int) -> list[tuple[str, str, str]]:
        rows = await self.db.fetch(
            "SELECT namespace, id, text FROM memories "
            "WHERE valid_until IS NULL AND embedding IS NULL ORDER BY seq LIMIT ?",
            (max(0, limit),))
        return [(r[0], r[1], r[2]) for r in rows]

    # -- audit and A2A ------------------------------------------------------------------------
    async def record_tool_call(self, record: ToolCallRecord) -> None:
        await self.record_tool_calls([record])

    async def record_tool_calls(self, records: Sequence[ToolCallRecord]) -> None:
        """Several rows in one transaction (the audit middleware's batches)."""
        if not records:
            return
        async with self.db.transaction() as db:
            await db.executemany(
                "INSERT INTO tool_call_records (tool, namespace, inputs_hash, status, code, "
                "duration_ms, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(r.tool, r.namespace, r.inputs_hash, r.status, r.code, float(r.duration_ms),
                  to_db(r.at)) for r in records])

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


async def _insert_memories(db: aiosqlite.Connection, memories: Sequence[Memory]) -> None:
    if memories:
        await db.executemany(INSERT_MEMORY, [memory_params(m) for m in memories])
