"""`SQLiteWriteTx`: the WriteTx primitives on the writer connection inside BEGIN IMMEDIATE.

SQLite has one writer at a time per file (across processes too), so the transaction itself
is the fact-key lock the protocol asks for: nothing else can commit between `timeline` and
commit. The partial unique index `memories_one_current` (migration 5) backs the invariant.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import aiosqlite

from recall_core import StorageConflict
from recall_core.kit import check_namespace
from recall_core import Memory, Operation
from recall_core.contracts import OutboxEvent

from .codec import (INSERT_MEMORY, MEMORY_COLUMNS, by_ids, OPERATION_COLUMNS, memory_from_row,
                    memory_params, now_text, operation_from_row, to_db)
from .connection import chunks
from .webhooks import emit, forget_texts


def conflict(exc: sqlite3.IntegrityError, namespace: str) -> StorageConflict:
    text = str(exc)
    if "memories.namespace, memories.entity, memories.attribute" in text:
        return StorageConflict(
            f"Refused a second current value for one (entity, attribute) in namespace "
            f"{namespace!r}: the database keeps at most one current row per fact. Nothing was "
            f"written.", "second_current")
    if "memories.id" in text:
        return StorageConflict(
            f"A memory id being written exists already ({text}). Nothing was written.",
            "duplicate_id")
    return StorageConflict(f"The database refused the write: {text}. Nothing was written.",
                           "integrity")


class SQLiteWriteTx:
    def __init__(self, db: aiosqlite.Connection, namespace: str):
        self.db = db
        self.namespace = namespace
        #: True once anything that changes the namespace's memories ran (version bump).
        self.changed = False

    async def timeline(self, keys: Sequence[tuple[str, str]]) -> list[Memory]:
        out: list[Memory] = []
        for entity, attribute in dict.fromkeys(keys):
            rows = await self.db.execute_fetchall(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND entity = ? "
                "AND attribute = ? ORDER BY valid_from, seq", (self.namespace, entity, attribute))
            out.extend(memory_from_row(r) for r in rows)
        return out

    async def older_jobs_pending(self, before: datetime) -> bool:
        rows = await self.db.execute_fetchall(
            "SELECT 1 FROM operations WHERE namespace = ? AND created_at < ? "
            "AND status IN ('queued', 'running') LIMIT 1", (self.namespace, to_db(before)))
        return bool(rows)

    async def current(self, ids: Sequence[str]) -> list[Memory]:
        out: list[Memory] = []
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.execute_fetchall(
                by_ids(MEMORY_COLUMNS, "valid_until IS NULL", len(part)), (self.namespace, *part))
            out.extend(memory_from_row(r) for r in rows)
        return out

    async def insert(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        check_namespace(self.namespace, memories)
        try:
            await self.db.executemany(INSERT_MEMORY, [memory_params(m) for m in memories])
        except sqlite3.IntegrityError as exc:
            raise conflict(exc, self.namespace) from None
        self.changed = True

    async def end(self, ends: Sequence[tuple[str, datetime, str | None]]) -> None:
        if not ends:
            return
        await self.db.executemany(
            "UPDATE memories SET valid_until = ?, superseded_by = ? WHERE +namespace = ? "
            "AND id = ? AND (valid_until IS NULL OR valid_until > ?)",
            [(to_db(at), by, self.namespace, mid, to_db(at)) for mid, at, by in ends])
        self.changed = True

    async def refresh(self, items: Sequence[tuple[str, float]], at: datetime) -> None:
        if not items:
            return
        await self.db.executemany(
            "UPDATE memories SET importance = max(coalesce(base_importance, importance), ?), "
            "base_importance = NULL, last_accessed_at = ? "
            "WHERE +namespace = ? AND id = ? AND valid_until IS NULL",
            [(float(imp), to_db(at), self.namespace, mid) for mid, imp in items])
        self.changed = True

    async def set_pinned(self, ids: Sequence[str], pinned: bool) -> int:
        n = 0
        for part in chunks(list(dict.fromkeys(ids))):
            cur = await self.db.execute(
                f"UPDATE memories SET pinned = ? WHERE +namespace = ? AND valid_until IS NULL "
                f"AND id IN ({self._in(len(part))})", (int(pinned), self.namespace, *part))
            n += cur.rowcount
        if n:
            self.changed = True
        return n

    async def delete(self, ids: Sequence[str]) -> int:
        n = 0
        for part in chunks(list(dict.fromkeys(ids))):
            cur = await self.db.execute(
                f"DELETE FROM memories WHERE +namespace = ? AND id IN ({self._in(len(part))})",
                (self.namespace, *part))
            if cur.rowcount:  # a forgotten memory leaves the retrieval audit too
                await self.db.execute(f"DELETE FROM retrieval_results WHERE memory_id IN "
                                      f"({self._in(len(part))})", part)
                await forget_texts(self.db, self.namespace, part)  # and the outbox
            n += cur.rowcount
        if n:
            self.changed = True
        return n

    async def finish_job(self, op_id: str, attempts: int | None,
                         result: dict[str, Any] | None = None) -> bool:
        if attempts is None:  # a record made done (A2A): it only has to still exist
            rows = await self.db.execute_fetchall(
                "SELECT payload FROM operations WHERE id = ? AND namespace = ?",
                (op_id, self.namespace))
        else:
            rows = await self.db.execute_fetchall(
                "SELECT payload FROM operations WHERE id = ? AND namespace = ? "
                "AND status = 'running' AND attempts = ?", (op_id, self.namespace, attempts))
        if not rows:
            return False  # a stale claim: someone re-ran or finished this job
        payload = json.loads(rows[0][0])
        if result is not None:
            payload["result"] = result
        if attempts is None:
            await self.db.execute("UPDATE operations SET payload = ? WHERE id = ?",
                                  (json.dumps(payload, ensure_ascii=False), op_id))
            return True
        await self.db.execute(
            "UPDATE operations SET status = 'done', finished_at = ?, error = NULL, "
            "lease_until = NULL, payload = ? WHERE id = ?",
            (now_text(), json.dumps(payload, ensure_ascii=False), op_id))
        return True

    async def emit(self, event: OutboxEvent) -> int:
        return await emit(self.db, event)

    def _in(self, n: int) -> str:
        return ", ".join("?" * n)

    async def predecessors(self, ids: Sequence[str]) -> list[Memory]:
        out: list[Memory] = []
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.execute_fetchall(
                # IS NOT NULL lets SQLite use the partial index memories_successor; the unary
                # + keeps it off the namespace index (see storage.by_ids).
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE superseded_by IS NOT NULL "
                f"AND superseded_by IN ({self._in(len(part))}) AND +namespace = ?",
                (*part, self.namespace))
            out.extend(memory_from_row(r) for r in rows)
        return out

    async def scrub_context(self, session_ids: Sequence[str], texts: Sequence[str]) -> None:
        for session in session_ids:
            for text in texts:
                cur = await self.db.execute(
                    "UPDATE memories SET context = NULL, embedding = NULL WHERE namespace = ? AND session_id = ? "
                    "AND context IS NOT NULL AND instr(context, ?) > 0",
                    (self.namespace, session, text))
                if cur.rowcount:
                    self.changed = True

    async def operations(self, ids: Sequence[str]) -> list[Operation]:
        out: list[Operation] = []
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.execute_fetchall(
                f"SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = ? "
                f"AND id IN ({self._in(len(part))})", (self.namespace, *part))
            out.extend(operation_from_row(r) for r in rows)
        return out

    async def restated_by(self, ids: Sequence[str]) -> list[Operation]:
        out: dict[str, Operation] = {}
        for mid in dict.fromkeys(ids):
            # instr() first: a cheap filter before parsing any JSON.
            rows = await self.db.execute_fetchall(
                f"SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = ? "
                "AND instr(payload, ?) > 0 AND (EXISTS (SELECT 1 FROM json_each(payload, "
                "'$.result.refreshed_ids') WHERE value = ?) OR EXISTS (SELECT 1 FROM "
                "json_each(payload, '$.result.restated_ids') WHERE value = ?))",
                (self.namespace, mid, mid, mid))
            out.update((r[0], operation_from_row(r)) for r in rows)
        return list(out.values())

    async def set_payload(self, op_id: str, payload: dict[str, Any]) -> None:
        await self.db.execute("UPDATE operations SET payload = ? WHERE namespace = ? AND id = ?",
                              (json.dumps(payload, ensure_ascii=False), self.namespace, op_id))

    async def delete_tasks(self, task_ids: Sequence[str]) -> None:
        for part in chunks(list(dict.fromkeys(task_ids))):
            await self.db.execute(
                f"DELETE FROM a2a_tasks WHERE namespace = ? AND task_id IN ({self._in(len(part))})",
                (self.namespace, *part))
