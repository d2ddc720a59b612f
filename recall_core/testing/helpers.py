"""Write helpers for tests, built on the storage primitives (`Storage.write`).

They let a test set up rows or finish a claimed job directly, without an extractor; the
rules that decide what a real write does live in `recall_core.facts` / `recall_core.writes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from typing import Any

from recall_core.errors import StaleClaim
from recall_core.models import Memory, Operation, utcnow
from recall_core.protocols import Storage
from recall_core.writes import transaction


async def supersede(storage: Storage, namespace: str, ids: Sequence[str], at: datetime,
                    new: Sequence[Memory] = ()) -> None:
    """End the current rows `ids` at `at` and insert `new`, in one transaction."""
    keys = sorted({m.key for m in new if m.key is not None})

    async def body(tx: Any) -> None:
        current = await tx.current(ids)
        successor = new[0].id if len(new) == 1 else None
        if current:
            await tx.end([(m.id, at, successor) for m in current])
        if new:
            await tx.insert(new)

    await transaction(storage, namespace, keys, body)


async def complete_job(storage: Storage, op: Operation | tuple[str, str], attempts: int,
                       memories: Sequence[Memory] = (),
                       supersede: Sequence[tuple[str, datetime]] = (),
                       refresh: Sequence[tuple[str, float]] = ()) -> bool:
    """Finish a claimed job writing exactly the given changes (False, nothing written, for
    a stale claim)."""
    namespace, op_id = (op.namespace, op.id) if isinstance(op, Operation) else op
    keys = sorted({m.key for m in memories if m.key is not None})
    async def body(tx: Any) -> None:
        if supersede:
            await tx.end([(mid, at, None) for mid, at in supersede])
        if memories:
            await tx.insert(memories)
        if refresh:
            await tx.refresh(refresh, utcnow())
        if not await tx.finish_job(op_id, attempts):
            raise StaleClaim(op_id)

    try:
        await transaction(storage, namespace, keys, body)
    except StaleClaim:
        return False
    return True


async def delete(storage: Storage, namespace: str, memory_id: str) -> bool:
    """Hard-delete one current row (no forget semantics)."""
    async def body(tx: Any) -> bool:
        if not await tx.current([memory_id]):
            return False
        await tx.delete([memory_id])
        return True

    return await transaction(storage, namespace, [], body)


async def current_of(storage: Storage, namespace: str, entity: str, attribute: str) -> list[Memory]:
    """The current rows of one fact key."""
    return [m for m in await storage.history(namespace, entity, attribute) if m.valid_until is None]


async def dump_tables(storage: Any) -> str:
    """Every value of every table of the storage's database (SQLite file, or the Postgres
    schema in use) as one string: what a forensic look at the database would see. Forget
    and erase tests search it for text that must be gone. SQLite's FTS5 shadow tables are
    left out: the index is contentless (it holds no text, only terms of current rows)."""
    if hasattr(storage, "db") and hasattr(storage.db, "path"):
        import sqlite3

        con = sqlite3.connect(storage.db.path)
        try:
            names = [r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'memories_fts%' AND name NOT LIKE 'sqlite_%'")]
            return "\n".join(repr(row) for n in names for row in con.execute(f"SELECT * FROM {n}"))
        finally:
            con.close()
    rows = []
    async with storage.pool.acquire() as con:
        names = [r["table_name"] for r in await con.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() AND table_type = 'BASE TABLE'")]
        for n in names:
            rows.extend(repr(dict(r)) for r in await con.fetch(f'SELECT * FROM "{n}"'))
    return "\n".join(rows)
