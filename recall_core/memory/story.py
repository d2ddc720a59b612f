"""A memory's story, as a person reads it in the inspector: the memory (current or replaced),
its fact's timeline with what replaced each value, the store it came from and the other
memories that store gave."""

from __future__ import annotations

from typing import Any

from ..contracts import MemoryFilter, Storage
from ..models import Memory
from .facts import told


async def memory_story(storage: Storage, namespace: str, memory_id: str) -> dict[str, Any] | None:
    """The story of one memory of the namespace (None: no such memory)."""
    rows, _ = await storage.query_memories(
        namespace, MemoryFilter(memory_id=memory_id, state="all"), 1, 0)
    if not rows:
        return None
    memory = rows[0]
    timeline: list[dict[str, Any]] = []
    if memory.entity and memory.attribute:
        history = told(await storage.history(namespace, memory.entity, memory.attribute))
        for i, m in enumerate(history):
            timeline.append({"memory": m, "superseded_by": superseded_by(m, history[i + 1:])})
    operation = None
    siblings: list[Memory] = []
    if memory.source_job_id:
        operation = await storage.get_operation(namespace, memory.source_job_id)
        same, _ = await storage.query_memories(
            namespace, MemoryFilter(source_job_id=memory.source_job_id, state="all"), 50, 0)
        siblings = [m for m in same if m.id != memory.id]
    return {"memory": memory, "timeline": timeline, "operation": operation, "siblings": siblings}


def superseded_by(m: Memory, later: list[Memory]) -> Memory | None:
    """The row that replaced `m`: the one storage names (`superseded_by`), else the next row
    of the timeline."""
    if m.valid_until is None:
        return None
    if m.superseded_by is not None:
        return next((other for other in later if other.id == m.superseded_by), None)
    return later[0] if later else None
