"""Pinning (the inspector's Pin): a pinned memory is skipped by the decay job, so its
importance never goes down. Pinning also restores the importance decay had already taken
(the undecayed base), since "never lowered" should not mean "frozen half-decayed"."""

from __future__ import annotations

from typing import Any

from ..contracts import Storage
from . import validation as v
from ..errors import MemoryNotFound
from ..models import Memory, utcnow
from .writes import transaction


async def set_pinned(storage: Storage, namespace: str, memory_id: Any, pinned: bool) -> Memory:
    """Pin or unpin a current memory of the namespace; returns it as stored after."""
    memory_id = v.memory_id(memory_id)
    now = utcnow()

    async def body(tx: Any) -> Memory | None:
        found = await tx.current([memory_id])
        if not found:
            return None
        await tx.set_pinned([memory_id], pinned)
        if pinned:
            # importance = max(base, 0) = the undecayed base (refresh's rule).
            await tx.refresh([(memory_id, 0.0)], now)
        return (await tx.current([memory_id]))[0]

    got = await transaction(storage, namespace, [], body)
    if got is None:
        raise MemoryNotFound(f"No active memory with id {memory_id!r} in this namespace; only "
                             f"a current memory can be pinned.")
    return got
