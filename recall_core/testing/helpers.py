"""Write helpers for tests, built on the storage primitives (`Storage.write`).

They let a test set up rows or finish a claimed job directly, without an extractor; the
rules that decide what a real write does live in `recall_core.memory.facts` / `recall_core.memory.writes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from typing import Any

from ..errors import StaleClaim
from ..models import Memory, Operation, utcnow
from ..contracts import Storage
from ..memory.writes import transaction


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


def tasks_stored_before_task_keys() -> list[tuple[str, str]]:
    """(task id, JSON document) of three A2A tasks as a database held them before tasks had
    their own context/state/status-time columns (SQLite migration 8, Postgres migration 10):
    each backend's migration test inserts these with its own SQL, then checks
    `check_tasks_listed_by_keys`."""
    import json

    from a2a.types.a2a_pb2 import Task, TaskState, TaskStatus
    from google.protobuf.timestamp_pb2 import Timestamp

    from ..server.a2a.task_store import task_to_data

    tasks = [Task(id="t1", context_id="c1", status=TaskStatus(
                 state=TaskState.TASK_STATE_COMPLETED,
                 timestamp=Timestamp(seconds=1795497301, nanos=123456000))),
             Task(id="t2", context_id="c2", status=TaskStatus(state=TaskState.TASK_STATE_WORKING)),
             Task(id="t3", context_id="c1", status=TaskStatus(
                 state=TaskState.TASK_STATE_FAILED, timestamp=Timestamp(seconds=1795497302)))]
    return [(t.id, json.dumps(task_to_data(t))) for t in tasks]


async def check_tasks_listed_by_keys(storage: Any, namespace: str = "ns") -> None:
    """The migrated tasks of `tasks_stored_before_task_keys` filter and order like new ones:
    status time descending, the task without a time last."""
    import json

    from ..server.a2a.task_store import task_from_data, task_keys
    from ..contracts import TaskQuery

    stamps = {tid: task_keys(task_from_data(json.loads(doc))).status_ns
              for tid, doc in tasks_stored_before_task_keys()}
    page = await storage.list_tasks(namespace, TaskQuery(limit=10))
    assert [r.task_id for r in page.rows] == ["t3", "t1", "t2"]
    assert [r.status_ns for r in page.rows] == [stamps["t3"], stamps["t1"], stamps["t2"]]
    assert (await storage.list_tasks(namespace, TaskQuery(context_id="c1"))).total == 2
    working = await storage.list_tasks(namespace, TaskQuery(state="TASK_STATE_WORKING"))
    assert [r.task_id for r in working.rows] == ["t2"]
