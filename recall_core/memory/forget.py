"""Forgetting a memory: what "delete_memory" removes, decided here for every backend.

A user who says "forget where I live" means every value, not just the current row. So
forgetting a memory removes, in one transaction with its fact key locked:

* the memory and every row of its (entity, attribute) timeline (current and history);
* rows it replaced through consolidation or supersession (`superseded_by` chains), however
  long the chain;
* its text in the session context of other rows of the same session (`Memory.context`, which
  the full-text index searches);
* the text of the operations the rows came from, and of stores that re-stated them (their
  result lists the row as refreshed): the payload keeps only a SHA-256 of the text and topic, so a retry with the same idempotency key is still recognised (and still cannot
  store a different text under that key), and the job's other fields;
* the A2A task of an A2A store (its history holds the text).

Full-text and vector index entries go with the rows (triggers, sync); in-process indexes are
invalidated by the namespace version bump of the write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..errors import MemoryNotFound
from ..models import Memory
from ..contracts import Storage
from .writes import transaction
from ..events import payloads
from ..events.deliverer import wake as wake_deliverer

SCRUBBED = "scrubbed"


def digest(text: str, topic: str) -> str:
    return hashlib.sha256(f"{topic}\x00{text}".encode()).hexdigest()


def scrub_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload without its text: a hash recognises a retry of the same store."""
    if payload.get(SCRUBBED):
        return payload
    out = {k: v for k, v in payload.items() if k not in ("text", "topic", "extracted")}
    out[SCRUBBED] = True
    out["sha256"] = digest(payload.get("text") or "", payload.get("topic") or "")
    return out


def same_store(payload: dict[str, Any], text: str, topic: str) -> bool:
    """Whether a stored operation's payload is the store of `text` under `topic`."""
    if payload.get(SCRUBBED):
        return payload.get("sha256") == digest(text, topic)
    return payload.get("text") == text and (payload.get("topic") or "") == topic


async def forget(storage: Storage, namespace: str, memory_id: str) -> dict[str, Any]:
    found = await storage.get_memories(namespace, [memory_id])
    if not found:
        raise MemoryNotFound(
            f"No active memory with id {memory_id!r} in your namespace. It may have been "
            f"deleted or superseded; call inspect_memories to list current memory ids.")
    target = found[0]
    keys = [target.key] if target.key is not None else []
    async def body(tx: Any) -> list[str]:
        if not await tx.current([memory_id]):
            raise MemoryNotFound(
                f"Memory {memory_id!r} changed while it was being forgotten (superseded or "
                f"deleted by another write). Call inspect_memories for its current id.")
        rows: dict[str, Memory] = {m.id: m for m in await tx.timeline(keys)} if keys else {}
        rows[target.id] = target
        frontier = list(rows)
        while frontier:  # rows replaced by what is being forgotten, transitively
            found_more = [m for m in await tx.predecessors(frontier) if m.id not in rows]
            rows.update((m.id, m) for m in found_more)
            frontier = [m.id for m in found_more]
        gone = list(rows.values())
        await tx.delete([m.id for m in gone])
        await _scrub(tx, gone)
        await tx.emit(payloads.deleted(namespace, memory_id, sorted(rows)))  # the outbox
        return sorted(rows)

    forgotten = await transaction(storage, namespace, keys, body)
    wake_deliverer()
    return {"deleted": memory_id, "forgotten_ids": forgotten}


async def _scrub(tx: Any, gone: Sequence[Memory]) -> None:
    sessions = sorted({m.session_id for m in gone if m.session_id})
    if sessions:
        await tx.scrub_context(sessions, sorted({m.text for m in gone}))
    op_ids = sorted({m.source_job_id for m in gone if m.source_job_id})
    ops = {op.id: op for op in await tx.operations(op_ids)} if op_ids else {}
    # Stores that only re-stated a forgotten memory (it was refreshed, no row of theirs
    # exists) carry its text too.
    ops.update((op.id, op) for op in await tx.restated_by([m.id for m in gone]))
    for op in ops.values():
        if not op.payload.get(SCRUBBED):
            await tx.set_payload(op.id, scrub_payload(op.payload))
    if ops:
        await tx.delete_tasks(sorted(ops))  # an A2A store's operation id is its task id
