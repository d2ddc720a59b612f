"""Memory rows: writes, reads, namespace versions and erasure (mixed into PostgresStorage).

Every write that changes what a namespace's active memories are bumps its row in
`namespaces` last in the transaction (see the lock order in storage.py), so in-process caches
keyed by `namespace_version` never serve stale data. Writes that add or retire active rows
also update the keyword index and its statistics (`fulltext.sync`) just before, and the bump
applies the namespace's counters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import asyncpg

from recall_core import Memory
from recall_core.contracts import (ERASED_TOKEN_NAMESPACE as ERASED_TOKEN, DecayRow, Erased,
                                   OutboxEvent)

from .fulltext import TYPES, Counts, sync
from .retry import conflict, in_transaction
from .rows import (CURRENT_BY_IDS, IN_NAMESPACE, INSERT_MEMORY, MEMORY_COLUMNS, aware,
                   memory_from_row, memory_params, utc)

from .vectors import PRUNE_EVERY, ArrayIndex, prune_vector_changes
from .webhooks import erase as erase_webhooks

# The active memories just before and after each candidate in its session (created_at, then
# insertion order, as latest_in_session): two seeks a candidate on memories_session_newest.
# The candidates themselves are found by id (a primary-key probe per id), never through a
# namespace or session index: with `c.id = ANY($2)` and no statistics yet (a fresh bulk import)
# the planner scanned the namespace for them (34-210 ms at 100k rows); see rows.IN_NAMESPACE.
NEIGHBOURS = """
WITH c AS MATERIALIZED (
  SELECT id, namespace, session_id, created_at, seq, valid_until FROM memories
   WHERE id = ANY($2::text[]) AND namespace = $1 COLLATE "C")
SELECT c.id,
  (SELECT p.id FROM memories AS p
    WHERE p.namespace = c.namespace AND p.session_id = c.session_id AND p.valid_until IS NULL
      AND (p.created_at, p.seq) < (c.created_at, c.seq)
    ORDER BY p.created_at DESC, p.seq DESC LIMIT 1) AS prev,
  (SELECT n.id FROM memories AS n
    WHERE n.namespace = c.namespace AND n.session_id = c.session_id AND n.valid_until IS NULL
      AND (n.created_at, n.seq) > (c.created_at, c.seq)
    ORDER BY n.created_at, n.seq LIMIT 1) AS next
FROM c WHERE c.valid_until IS NULL AND c.session_id IS NOT NULL
"""

if TYPE_CHECKING:
    from .vectors import PgVectorIndex

# The bump also stamps this transaction's vector_changes rows (vectors.py) with the new
# version: other transactions' rows are uncommitted, so invisible here, and never stamped.
_BUMP = f"""
WITH bumped AS (
INSERT INTO namespaces (namespace, version, ft_docs, ft_len, ft_min_len,
                        {", ".join(f"active_{t}" for t in TYPES)})
VALUES ($1, nextval('namespace_version_seq'), $2, $3, $4,
        {", ".join(f"${5 + i}" for i in range(len(TYPES)))})
    ON CONFLICT (namespace) DO UPDATE
   SET version = nextval('namespace_version_seq'),
       ft_docs = namespaces.ft_docs + excluded.ft_docs,
       ft_len = namespaces.ft_len + excluded.ft_len,
       ft_min_len = CASE WHEN namespaces.ft_docs + excluded.ft_docs > 0
                         THEN least(namespaces.ft_min_len, excluded.ft_min_len) END,
       {", ".join(f"active_{t} = namespaces.active_{t} + excluded.active_{t}" for t in TYPES)}
RETURNING version)
UPDATE vector_changes SET version = (SELECT version FROM bumped)
 WHERE namespace = $1 AND version IS NULL"""
_PAGE = 500


def with_context(rows: Sequence[asyncpg.Record]) -> list[Memory]:
    """Memories with the session context as folded for the keyword index (`search_context`):
    rankers asked over given rows (`rank_pool`) index it too."""
    out = []
    for r in rows:
        m = memory_from_row(r)
        m.context = r["search_context"]
        out.append(m)
    return out


class MemoryMethods:
    pool: asyncpg.Pool
    vectors: PgVectorIndex | ArrayIndex | None
    _bumps = 0  # version bumps by this instance (vector_changes is pruned every PRUNE_EVERY)

    # -- helpers ----------------------------------------------------------------------------
    async def _bump(self, con: asyncpg.Connection, namespaces: Sequence[str],
                    counts: dict[str, Counts] | None = None) -> None:
        counts = counts or {}
        for ns in sorted(set(namespaces) | set(counts)):
            c = counts.get(ns, Counts())
            await con.execute(_BUMP, ns, c.docs, c.length, c.min_len, *c.by_type)
        if isinstance(self.vectors, ArrayIndex):
            self._bumps += 1
            if self._bumps % PRUNE_EVERY == 0:
                await prune_vector_changes(con)

    async def _insert(self, con: asyncpg.Connection, memories: Sequence[Memory]) -> set[int]:
        assert self.vectors is not None
        dims: set[int] = set()
        args = []
        for m in memories:
            emb = self.vectors.param(m.embedding)
            if emb is not None:
                dims.add(len(emb))
            args.append(memory_params(m, emb))
        if args:
            await con.executemany(INSERT_MEMORY, args)
        return dims

    # -- memories -------------------------------------------------------------------------
    async def insert_memories(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        async def body(con: asyncpg.Connection) -> set[int]:
            try:
                async with con.transaction():
                    dims = await self._insert(con, memories)
            except asyncpg.UniqueViolationError as exc:
                raise conflict(exc, memories[0].namespace) from None
            counts = await sync(con, added=[m.id for m in memories])
            await self._bump(con, [m.namespace for m in memories], counts)
            return dims

        await self.vectors.ensure_indexes(self.pool, await in_transaction(self.pool, body))

    async def get_memories(self, namespace: str, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        rows = await self.pool.fetch(CURRENT_BY_IDS, namespace, list(ids))
        return [memory_from_row(r) for r in rows]

    async def list_memories(self, namespace: str, limit: int, offset: int) -> tuple[list[Memory], int]:
        async with self.pool.acquire() as con, con.transaction(isolation="repeatable_read",
                                                                readonly=True):
            total = await con.fetchval(
                "SELECT count(*) FROM memories WHERE namespace = $1 AND valid_until IS NULL",
                namespace)
            rows = await con.fetch(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = $1 "
                f"AND valid_until IS NULL ORDER BY created_at DESC, seq DESC LIMIT $2 OFFSET $3",
                namespace, max(0, limit), max(0, offset))
        return [memory_from_row(r) for r in rows], int(total)

    async def iter_memories(self, namespace: str, active_only: bool = True) -> AsyncIterator[Memory]:
        # Keyset pages: no connection or transaction stays open while the caller holds the
        # iterator, however slowly it consumes it or if it stops early.
        active = "AND valid_until IS NULL" if active_only else ""
        rows = await self.pool.fetch(
            f"SELECT {MEMORY_COLUMNS}, seq FROM memories WHERE namespace = $1 {active} "
            f"ORDER BY created_at, seq LIMIT {_PAGE}", namespace)
        while rows:
            for r in rows:
                yield memory_from_row(r)
            if len(rows) < _PAGE:
                return
            last = rows[-1]
            rows = await self.pool.fetch(
                f"SELECT {MEMORY_COLUMNS}, seq FROM memories WHERE namespace = $1 {active} "
                f"AND (created_at, seq) > ($2, $3) ORDER BY created_at, seq LIMIT {_PAGE}",
                namespace, last["created_at"], last["seq"])

    async def session_neighbours(self, namespace: str, ids: Sequence[str]
                                 ) -> dict[str, tuple[str | None, str | None]]:
        if not ids:
            return {}
        rows = await self.pool.fetch(NEIGHBOURS, namespace, list(dict.fromkeys(ids)))
        return {r["id"]: (r["prev"], r["next"]) for r in rows}

    async def latest_in_session(self, namespace: str, session_id: str) -> Memory | None:
        row = await self.pool.fetchrow(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = $1 AND session_id = $2 "
            f"AND valid_until IS NULL ORDER BY created_at DESC, seq DESC LIMIT 1",
            namespace, session_id)
        return memory_from_row(row) if row is not None else None

    async def history(self, namespace: str, entity: str, attribute: str) -> list[Memory]:
        rows = await self.pool.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = $1 AND entity = $2 "
            f"AND attribute = $3 ORDER BY created_at, seq",
            namespace, entity, attribute)
        return [memory_from_row(r) for r in rows]

    async def current_facts(self, namespace: str, limit: int) -> list[Memory]:
        rows = await self.pool.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = $1 AND valid_until IS NULL "
            f"AND entity IS NOT NULL AND attribute IS NOT NULL AND value IS NOT NULL "
            f"ORDER BY created_at DESC, seq DESC LIMIT $2", namespace, limit)
        return [memory_from_row(r) for r in rows]

    async def memories_at(self, namespace: str, at: datetime) -> list[Memory]:
        # With the session context (as folded for the keyword index): rankers index it too.
        rows = await self.pool.fetch(
            f"SELECT {MEMORY_COLUMNS}, search_context FROM memories WHERE namespace = $1 "
            f"AND valid_from <= $2 AND (valid_until IS NULL OR valid_until > $2) "
            f"ORDER BY valid_from, seq", namespace, aware(at))
        return with_context(rows)

    async def memories_created(self, namespace: str, ranges: Sequence[tuple[datetime, datetime]],
                               limit: int) -> list[Memory] | None:
        # Counted first (index only, at most limit + 1 per range): a window too full to rank
        # costs no row reads. A row in two ranges comes once (UNION).
        if not ranges:
            return []
        n = len(ranges)
        where = ("WHERE namespace = $1 AND valid_until IS NULL "
                 "AND created_at >= ${lo} AND created_at < ${hi}")
        ids = await self.pool.fetch(" UNION ".join(
            f"(SELECT id FROM memories {where.format(lo=2 + i, hi=2 + n + i)} "
            f"ORDER BY created_at, seq LIMIT ${2 + 2 * n})" for i in range(n)),
            namespace, *(aware(a) for a, _ in ranges), *(aware(b) for _, b in ranges), limit + 1)
        if len(ids) > limit:
            return None
        rows = await self.pool.fetch(
            f"SELECT {MEMORY_COLUMNS}, search_context FROM memories WHERE id = ANY($2::text[]) "
            f"AND {IN_NAMESPACE} ORDER BY created_at, seq", namespace, [r["id"] for r in ids])
        return with_context(rows)

    async def record_access(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        if not ids:
            return
        # Not a version change: access counts feed scoring, not any cached index.
        async def body(con: asyncpg.Connection) -> None:
            await con.execute(
                f"""UPDATE memories m SET access_count = m.access_count + 1, last_accessed_at = $3
                     FROM (SELECT id FROM memories WHERE id = ANY($2::text[])
                             AND {IN_NAMESPACE} ORDER BY id FOR UPDATE) AS l
                    WHERE m.id = l.id""", namespace, list(ids), aware(at))

        await in_transaction(self.pool, body)

    async def stats(self, namespace: str) -> dict[str, int]:
        # Counters the writes keep exact (see fulltext.sync), not a count of the namespace.
        row = await self.pool.fetchrow(
            f"SELECT {', '.join(f'active_{t}' for t in TYPES)} FROM namespaces "
            f"WHERE namespace = $1", namespace)
        if row is None:
            return {}
        return {t: int(row[f"active_{t}"]) for t in TYPES if row[f"active_{t}"]}

    async def namespace_version(self, namespace: str) -> int:
        v = await self.pool.fetchval("SELECT version FROM namespaces WHERE namespace = $1",
                                     namespace)
        return int(v or 0)

    async def list_partitions(self, namespace: str) -> list[str]:
        # Compared under "C" (code point order) whatever the database's collation: under a
        # linguistic one '/' may sort as if absent and a range would miss partitions. The
        # namespaces table has one row per namespace (scanned, not per memory); queued and
        # running jobs come from their small partial indexes (a partition whose first stores
        # are not written yet).
        rows = await self.pool.fetch(
            'SELECT namespace FROM namespaces WHERE namespace COLLATE "C" > $1 '
            'AND namespace COLLATE "C" < $2 UNION '
            "SELECT namespace FROM operations WHERE status IN ('queued', 'running') "
            'AND namespace COLLATE "C" > $1 AND namespace COLLATE "C" < $2 '
            'ORDER BY 1', namespace + "/", namespace + "0")
        return sorted(r[0] for r in rows)

    async def delete_namespace(self, namespace: str, event: OutboxEvent | None = None
                               ) -> Erased:
        async def body(con: asyncpg.Connection) -> Erased:
            hooks = await erase_webhooks(con, namespace, event)
            # Unindex exactly the rows this statement deleted: a memory another transaction
            # committed meanwhile survives (this statement never saw it), and so must its
            # index row and counts.
            deleted = [r["id"] for r in await con.fetch(
                "DELETE FROM memories WHERE namespace = $1 RETURNING id", namespace)]
            tables = {"memories": len(deleted)}
            counts = await sync(con, removed=deleted)
            for table in ("operations", "a2a_tasks", "tool_call_records", "retrieval_results"):
                tables[table] = _rows(await con.execute(
                    f"DELETE FROM {table} WHERE namespace = $1", namespace))
            tokens = _rows(await con.execute(
                "UPDATE api_tokens SET revoked_at = clock_timestamp() "
                "WHERE namespace = $1 AND revoked_at IS NULL", namespace))
            # A revoked token keeps its row by hash only (ERASED_TOKEN names no namespace):
            # it still answers 401, and create_token cannot register that hash again.
            tables["api_tokens"] = _rows(await con.execute(
                "UPDATE api_tokens SET namespace = $2 WHERE namespace = $1",
                namespace, ERASED_TOKEN))
            # OAuth grants of the namespace and their tokens go whole (no row may name it).
            tables["oauth_tokens"] = _rows(await con.execute(
                "DELETE FROM oauth_tokens WHERE grant_id IN "
                "(SELECT grant_id FROM oauth_grants WHERE namespace = $1)", namespace))
            for table in ("oauth_grants", "oauth_codes"):
                tables[table] = _rows(await con.execute(
                    f"DELETE FROM {table} WHERE namespace = $1", namespace))
            await self._bump(con, [namespace], counts)
            # No row may name the erased namespace: its vector change log goes, and its
            # counters row too once it counts nothing (a write committed meanwhile keeps its
            # rows and therefore the counters that describe them; a later write's additive
            # bump recreates the row from zero). Other processes find no version and reload.
            tables["vector_changes"] = _rows(await con.execute(
                "DELETE FROM vector_changes WHERE namespace = $1", namespace))
            tables["namespaces"] = _rows(await con.execute(
                f"""DELETE FROM namespaces WHERE namespace = $1 AND ft_docs = 0
                      AND {" AND ".join(f"active_{t} = 0" for t in TYPES)}""", namespace))
            return Erased(len(deleted), tokens, {**tables, **hooks})

        out = await in_transaction(self.pool, body)
        forget = getattr(self.vectors, "forget", None)
        if forget is not None:  # no erased text or vector stays in this process
            forget(namespace)
        return out

    async def update_importance(self, updates: Sequence[tuple[str, str, float]]) -> None:
        if not updates:
            return
        ups = sorted(updates, key=lambda u: u[1])
        async def body(con: asyncpg.Connection) -> None:
            await con.execute(
                """UPDATE memories m SET importance = u.imp, base_importance = NULL
                     FROM unnest($1::text[], $2::text[], $3::float8[]) AS u(ns, id, imp),
                          (SELECT id FROM memories WHERE id = ANY($2::text[])
                            ORDER BY id FOR UPDATE) AS l
                    WHERE m.id = l.id AND m.id = u.id AND m.namespace = u.ns""",
                [u[0] for u in ups], [u[1] for u in ups], [float(u[2]) for u in ups])
            await self._bump(con, [u[0] for u in ups])

        await in_transaction(self.pool, body)

    # -- decay ------------------------------------------------------------------------------
    async def decay_candidates(self, after: str | None, limit: int) -> list[DecayRow]:
        # Walks the primary key; superseded rows are skipped, not returned.
        rows = await self.pool.fetch(
            """SELECT namespace, id, coalesce(base_importance, importance) AS base, importance,
                      created_at, last_accessed_at, access_count
                 FROM memories WHERE id > $1 AND valid_until IS NULL AND NOT pinned
                ORDER BY id LIMIT $2""",
            after or "", max(0, limit))
        return [DecayRow(r["namespace"], r["id"], float(r["base"]), float(r["importance"]),
                         utc(r["created_at"]), utc(r["last_accessed_at"]), int(r["access_count"]))
                for r in rows]

    async def apply_decay(self, updates: Sequence[tuple[str, str, float]]) -> None:
        if not updates:
            return
        ups = sorted(updates, key=lambda u: u[1])  # lock rows in id order, like every writer
        async def body(con: asyncpg.Connection) -> None:
            changed = await con.fetch(
                """UPDATE memories m
                      SET base_importance = coalesce(m.base_importance, m.importance),
                          importance = u.imp
                     FROM unnest($1::text[], $2::text[], $3::float8[]) AS u(ns, id, imp),
                          (SELECT id FROM memories WHERE id = ANY($2::text[])
                            ORDER BY id FOR UPDATE) AS l
                    WHERE m.id = l.id AND m.id = u.id AND m.namespace = u.ns
                      AND m.valid_until IS NULL
                RETURNING m.namespace""",
                [u[0] for u in ups], [u[1] for u in ups], [float(u[2]) for u in ups])
            await self._bump(con, [r["namespace"] for r in changed])

        await in_transaction(self.pool, body)


def _rows(status: str) -> int:
    """Rows a statement changed, from its status ("DELETE 3", "UPDATE 0")."""
    return int(status.split()[-1])
