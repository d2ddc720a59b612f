"""What the inspector's queue page shows about the running server: the runtime's parts and
the worker's loops, beside the queue's counts."""

from __future__ import annotations

from typing import Any

from ..health import degraded


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
        "degraded": degraded(runtime),
        "extraction": runtime.service.extraction.status(),
        "worker": worker_text,
        "worker_ok": loops["ok"] if loops is not None else worker is not None,
        "jobs": jobs,
    }
