"""What the inspector's pages read, through the service and the storage protocols (no SQL
here or in templates). The one place the inspector reads storage itself: the service has no
method yet for a filtered page of memories, an operation, or job counts."""

from __future__ import annotations

from typing import Any

from ...contracts import MemoryFilter
from ...models import Memory
from ..health import readiness


async def memory_page(runtime: Any, namespace: str, where: MemoryFilter, limit: int,
                      offset: int) -> tuple[list[Memory], int]:
    """One page of a namespace's memories matching `where`, and how many match."""
    return await runtime.storage.query_memories(namespace, where, limit, offset)


async def memory_story(runtime: Any, namespace: str, memory_id: str) -> dict[str, Any] | None:
    """A memory (active or superseded), its (entity, attribute) timeline with what superseded
    each value, the operation it came from and the other memories extracted from that text."""
    storage = runtime.storage
    rows, _ = await storage.query_memories(
        namespace, MemoryFilter(memory_id=memory_id, state="all"), 1, 0)
    if not rows:
        return None
    memory = rows[0]
    timeline: list[dict[str, Any]] = []
    if memory.entity and memory.attribute:
        history = await runtime.service.history(namespace, memory.entity, memory.attribute)
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
    """The row that replaced `m`: the one storage names (`superseded_by`, where the backend
    keeps it), else the next row of the timeline."""
    if m.valid_until is None:
        return None
    named = getattr(m, "superseded_by", None)
    if named is not None:
        return next((other for other in later if other.id == named), None)
    return later[0] if later else None


async def server_status(runtime: Any) -> dict[str, Any]:
    """What `recall status` shows, for the running server (the queue page's health panel)."""
    storage = runtime.storage
    jobs = {s: await storage.count_jobs(None, s) for s in ("queued", "running", "done", "failed")}
    worker = runtime.worker
    loops = worker.health() if worker is not None else None
    if loops is not None:
        state = "running" if loops["ok"] else "UNHEALTHY"
        worker_text = (f"{state}: {loops['loops']} loops (concurrency "
                       f"{runtime.config.worker.concurrency}), {loops['restarts']} restarts")
        if loops["dead"]:
            worker_text += f"; dead: {', '.join(loops['dead'])}"
        if loops["stuck"]:
            worker_text += f"; stuck: {', '.join(loops['stuck'])}"
    elif worker is not None:
        worker_text = f"running, concurrency {runtime.config.worker.concurrency}"
    else:
        worker_text = "not running in this process (concurrency 0)"
    return {
        "storage": storage.description,
        "storage_status": storage.status(),
        "extractor": runtime.extractor.name,
        "rankers": [{"name": s.ranker.name, "weight": s.weight} for s in runtime.rankers],
        "degraded": readiness(runtime),
        "worker": worker_text,
        "worker_ok": loops["ok"] if loops is not None else worker is not None,
        "jobs": jobs,
    }
