"""`PgWriteTx`: the WriteTx primitives inside one PostgreSQL transaction.

Fact keys are locked with transaction-scoped advisory locks (`pg_advisory_xact_lock` on a
hash of namespace, entity and attribute), taken in sorted order so two writers never wait on
each other in a cycle: every process sharing the database serialises its writes of one key,
and what `timeline` read stays true until commit. The partial unique index
`memories_one_current` (migration 7) backs the invariant.

Keyword statistics (`fulltext.sync`) and the namespace version are applied once, at the end
of the transaction, for every row that became or stopped being current in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import asyncpg

from recall_core.kit import check_namespace
from recall_core import Memory, Operation
from recall_core.contracts import OutboxEvent
from recall_core.kit.text import fold

from .fulltext import sync
from .webhooks import emit, forget_texts
from .retry import conflict
from .rows import (CURRENT_BY_IDS, IN_NAMESPACE, MEMORY_COLUMNS, OPERATION_COLUMNS, aware, memory_from_row,
                   operation_from_row)

if TYPE_CHECKING:
    from .memories import MemoryMethods

_KEY_LOCK = "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2 || chr(31) || $3))"


class PgWriteTx:
    def __init__(self, storage: MemoryMethods, con: asyncpg.Connection, namespace: str):
        self.storage = storage
        self.con = con
        self.namespace = namespace
        self.added: list[str] = []
        self.removed: list[str] = []
        self.dims: set[int] = set()
        self.changed = False

    async def lock(self, keys: Sequence[tuple[str, str]]) -> None:
        for entity, attribute in sorted(set(keys)):
            await self.con.execute(_KEY_LOCK, self.namespace, entity, attribute)

    async def timeline(self, keys: Sequence[tuple[str, str]]) -> list[Memory]:
        if not keys:
            return []
        rows = await self.con.fetch(
            f"""SELECT {MEMORY_COLUMNS} FROM memories
                 WHERE namespace = $1 AND (entity, attribute) IN (
                       SELECT * FROM unnest($2::text[], $3::text[]))
                 ORDER BY valid_from, seq""",
            self.namespace, [k[0] for k in keys], [k[1] for k in keys])
        return [memory_from_row(r) for r in rows]

    async def older_jobs_pending(self, before: datetime) -> bool:
        return await self.con.fetchval(
            "SELECT EXISTS (SELECT 1 FROM operations WHERE namespace = $1 AND created_at < $2 "
            "AND status IN ('queued', 'running'))", self.namespace, aware(before))

    async def current(self, ids: Sequence[str]) -> list[Memory]:
        rows = await self.con.fetch(CURRENT_BY_IDS, self.namespace, list(ids))
        return [memory_from_row(r) for r in rows]

    async def insert(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        check_namespace(self.namespace, memories)
        try:
            async with self.con.transaction():  # a savepoint: the error leaves the tx usable
                self.dims |= await self.storage._insert(self.con, memories)
        except asyncpg.UniqueViolationError as exc:
            raise conflict(exc, self.namespace) from None
        self.added.extend(m.id for m in memories if m.valid_until is None)
        self.changed = True

    async def end(self, ends: Sequence[tuple[str, datetime, str | None]]) -> None:
        if not ends:
            return
        ids = sorted({e[0] for e in ends})
        was_current = await self.con.fetch(
            f"""SELECT id FROM memories WHERE id = ANY($2::text[]) AND {IN_NAMESPACE}
                  AND valid_until IS NULL ORDER BY id FOR UPDATE""", self.namespace, ids)
        await self.con.executemany(
            f"UPDATE memories SET valid_until = $3, superseded_by = $4 WHERE {IN_NAMESPACE} "
            "AND id = $2 AND (valid_until IS NULL OR valid_until > $3)",
            [(self.namespace, mid, aware(at), by) for mid, at, by in ends])
        self.removed.extend(r["id"] for r in was_current)
        self.changed = True

    async def refresh(self, items: Sequence[tuple[str, float]], at: datetime) -> None:
        if not items:
            return
        ref = sorted(items)
        await self.con.execute(
            f"""UPDATE memories m
                  SET importance = greatest(coalesce(m.base_importance, m.importance), r.imp),
                      base_importance = NULL, last_accessed_at = $4
                 FROM unnest($2::text[], $3::float8[]) AS r(id, imp),
                      (SELECT id FROM memories WHERE id = ANY($2::text[])
                         AND {IN_NAMESPACE} ORDER BY id FOR UPDATE) AS l
                WHERE m.id = l.id AND m.id = r.id AND m.valid_until IS NULL""",
            self.namespace, [i for i, _ in ref], [float(v) for _, v in ref], aware(at))
        self.changed = True

    async def set_pinned(self, ids: Sequence[str], pinned: bool) -> int:
        result = await self.con.execute(
            f"UPDATE memories SET pinned = $3 WHERE id = ANY($2::text[]) AND {IN_NAMESPACE} "
            f"AND valid_until IS NULL", self.namespace, list(ids), pinned)
        n = int(result.split()[-1])
        if n:
            self.changed = True
        return n

    async def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        rows = await self.con.fetch(
            f"""DELETE FROM memories WHERE id = ANY($2::text[]) AND {IN_NAMESPACE}
                RETURNING id, valid_until IS NULL AS current""", self.namespace, list(ids))
        if rows:  # a forgotten memory leaves the retrieval audit too, and the outbox
            await self.con.execute("DELETE FROM retrieval_results WHERE memory_id = ANY($1)",
                                   [r["id"] for r in rows])
            await forget_texts(self.con, self.namespace, [r["id"] for r in rows])
        self.removed.extend(r["id"] for r in rows if r["current"])
        if rows:
            self.changed = True
        return len(rows)

    async def predecessors(self, ids: Sequence[str]) -> list[Memory]:
        rows = await self.con.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE superseded_by = ANY($2::text[]) "
            f"AND superseded_by IS NOT NULL AND {IN_NAMESPACE}", self.namespace, list(ids))
        return [memory_from_row(r) for r in rows]

    async def scrub_context(self, session_ids: Sequence[str], texts: Sequence[str]) -> None:
        folded = [fold(t) for t in texts if t.strip()]
        if not folded:
            return
        hit = [r["id"] for r in await self.con.fetch(
            """SELECT id FROM memories WHERE namespace = $1 AND session_id = ANY($2::text[])
                 AND search_context IS NOT NULL
                 AND EXISTS (SELECT 1 FROM unnest($3::text[]) AS t(x)
                              WHERE position(t.x IN search_context) > 0)
               ORDER BY id FOR UPDATE""", self.namespace, list(session_ids), folded)]
        if not hit:
            return
        # Re-index those rows: out with the old context's terms, in with none.
        await self.storage._bump(self.con, [self.namespace], await sync(self.con, removed=hit))
        await self.con.execute("UPDATE memories SET search_context = NULL, embedding = NULL WHERE id = ANY($1::text[])",
                               hit)
        await self.storage._bump(self.con, [self.namespace], await sync(self.con, added=hit))

    async def operations(self, ids: Sequence[str]) -> list[Operation]:
        rows = await self.con.fetch(
            f"SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = $1 "
            f"AND id = ANY($2::text[]) ORDER BY id FOR UPDATE", self.namespace, list(ids))
        return [operation_from_row(r) for r in rows]

    async def restated_by(self, ids: Sequence[str]) -> list[Operation]:
        rows = await self.con.fetch(
            f"""SELECT {OPERATION_COLUMNS} FROM operations WHERE namespace = $1
                  AND (payload->'result'->'refreshed_ids' ?| $2::text[]
                       OR payload->'result'->'restated_ids' ?| $2::text[])
                ORDER BY id FOR UPDATE""",
            self.namespace, list(ids))
        return [operation_from_row(r) for r in rows]

    async def set_payload(self, op_id: str, payload: dict[str, Any]) -> None:
        await self.con.execute("UPDATE operations SET payload = $3 WHERE namespace = $1 AND id = $2",
                               self.namespace, op_id, payload)

    async def delete_tasks(self, task_ids: Sequence[str]) -> None:
        await self.con.execute(
            "DELETE FROM a2a_tasks WHERE namespace = $1 AND task_id = ANY($2::text[])",
            self.namespace, list(task_ids))

    async def finish_job(self, op_id: str, attempts: int | None,
                         result: dict[str, Any] | None = None) -> bool:
        if attempts is None:
            payload = await self.con.fetchval(
                "SELECT payload FROM operations WHERE id = $1 AND namespace = $2 FOR UPDATE",
                op_id, self.namespace)
        else:
            payload = await self.con.fetchval(
                "SELECT payload FROM operations WHERE id = $1 AND namespace = $2 "
                "AND status = 'running' AND attempts = $3 FOR UPDATE",
                op_id, self.namespace, attempts)
        if payload is None:
            return False
        if result is not None:
            payload = {**payload, "result": result}
        if attempts is None:
            await self.con.execute("UPDATE operations SET payload = $2 WHERE id = $1",
                                   op_id, payload)
        else:
            await self.con.execute(
                """UPDATE operations SET status = 'done', finished_at = clock_timestamp(),
                          error = NULL, lease_until = NULL, claimed_by = NULL, payload = $2
                    WHERE id = $1""", op_id, payload)
        return True

    async def emit(self, event: OutboxEvent) -> int:
        return await emit(self.con, event)

    async def settle(self) -> None:
        """Before commit: apply keyword statistics and bump the version (the last lock)."""
        if not self.changed:
            return
        # A row inserted and ended in this same transaction was never indexed.
        removed = [i for i in dict.fromkeys(self.removed) if i not in set(self.added)]
        counts = await sync(self.con, added=list(dict.fromkeys(self.added)), removed=removed)
        await self.storage._bump(self.con, [self.namespace], counts)
