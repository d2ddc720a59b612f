"""Memory rows: bulk insert, reads (by id, pages, iteration, sessions, history, past states,
time ranges), the write transaction, access counts, stats, erasure, importance and decay."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import aiosqlite

from recall_core import MEMORY_TYPES, Memory
from recall_core.contracts import ERASED_TOKEN_NAMESPACE as ERASED_TOKEN, DecayRow, Erased, OutboxEvent

from .codec import (
    INSERT_MEMORY,
    MEMORY_COLUMNS,
    by_ids,
    from_db,
    memory_from_row,
    memory_params,
    now_text,
    to_db,
)
from .connection import chunks
from .tx import SQLiteWriteTx, conflict
from .vectors import PRUNE_EVERY, RESET, prune_vector_events
from .webhooks import erase as erase_webhooks

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


class MemoryMethods:
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

    async def current_facts(self, namespace: str, limit: int) -> list[Memory]:
        rows = await self.db.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND valid_until IS NULL "
            "AND entity IS NOT NULL AND attribute IS NOT NULL AND value IS NOT NULL "
            "ORDER BY created_at DESC, seq DESC LIMIT ?", (namespace, limit))
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

    async def list_partitions(self, namespace: str) -> list[str]:
        # Index range scans (BINARY collation = code point order): the namespaces with
        # memories (namespace_versions has one row each) and, for a partition whose first
        # stores are still queued, the operations' (namespace, status) index walked one
        # distinct namespace at a time (a recursive min(), not every job row).
        lo, hi = namespace + "/", namespace + "0"
        rows = await self.db.fetch(
            "WITH RECURSIVE ops(ns) AS ("
            " SELECT (SELECT min(namespace) FROM operations WHERE namespace > ?1 AND namespace < ?2)"
            " UNION ALL SELECT (SELECT min(namespace) FROM operations"
            "  WHERE namespace > ops.ns AND namespace < ?2) FROM ops WHERE ops.ns IS NOT NULL) "
            "SELECT ns FROM ops WHERE ns IS NOT NULL UNION "
            "SELECT namespace FROM namespace_versions WHERE namespace > ?1 AND namespace < ?2 "
            "ORDER BY 1", (lo, hi))
        return [r[0] for r in rows]

    async def delete_namespace(self, namespace: str, event: OutboxEvent | None = None
                               ) -> Erased:
        now = now_text()
        tables: dict[str, int] = {}
        async with self.db.transaction() as db:
            tables.update(await erase_webhooks(db, namespace, event))
            for table in ("memories", "operations", "a2a_tasks", "tool_call_records",
                          "retrieval_results", "active_counts"):
                cur = await db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
                tables[table] = cur.rowcount
            # Its number in the full-text index (its rows left the index with the memories);
            # a namespace made again later gets a new one.
            await db.execute("DELETE FROM fts_namespaces WHERE namespace = ?", (namespace,))
            cur = await db.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE namespace = ? AND revoked_at IS NULL",
                (now, namespace))
            tokens = cur.rowcount
            # A revoked token keeps its row by hash only (ERASED_TOKEN names no namespace):
            # it still answers 401, and create_token cannot register that hash again.
            cur = await db.execute("UPDATE api_tokens SET namespace = ? WHERE namespace = ?",
                                   (ERASED_TOKEN, namespace))
            tables["api_tokens"] = cur.rowcount
            # OAuth grants of the namespace and their tokens go whole (no row may name it).
            cur = await db.execute(
                "DELETE FROM oauth_tokens WHERE grant_id IN "
                "(SELECT grant_id FROM oauth_grants WHERE namespace = ?)", (namespace,))
            tables["oauth_tokens"] = cur.rowcount
            for table in ("oauth_grants", "oauth_codes"):
                cur = await db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
                tables[table] = cur.rowcount
            # No row may name the erased namespace, not even the vector event log: every
            # process reloads all its vector indexes instead (a namespace-less event moves
            # the pruning mark past every cursor; erases are rare).
            for table in ("vector_events", "namespace_versions"):
                cur = await db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
                tables[table] = cur.rowcount
            await db.execute("INSERT INTO vector_events (namespace, memory_seq) VALUES ('', ?)",
                             (RESET,))
            await db.execute("UPDATE vector_events_pruned SET upto = "
                             "(SELECT max(seq) FROM vector_events) WHERE id = 1")
        self._vectors.forget(namespace)
        return Erased(tables["memories"], tokens, tables)

    async def update_importance(self, updates: Sequence[tuple[str, str, float]]) -> None:
        # A new base: whatever decay did before is forgotten.
        await self._set_importance(
            "UPDATE memories SET importance = ?, base_importance = NULL "
            "WHERE namespace = ? AND id = ?", updates)

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


async def _insert_memories(db: aiosqlite.Connection, memories: Sequence[Memory]) -> None:
    if memories:
        await db.executemany(INSERT_MEMORY, [memory_params(m) for m in memories])
