"""GET /health, and `readiness`: what is not (yet) working, for /health and the inspector."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .. import __version__
from ..admin.tokens import hash_token
from .group import group_reasons, read_beats

if TYPE_CHECKING:
    from .runtime import Runtime


def readiness(runtime: Runtime, *, detail: bool = True) -> list[str]:
    """What is not (yet) working, as search would report it in data.degraded."""
    emb = runtime.embedder
    if emb is None or emb.ready:
        return []
    status = emb.status()
    if status.get("error"):
        return [f"dense: model failed to load: {status['error']}" if detail
                else "dense: model failed to load"]
    return ["dense: warming up"]


def loading(runtime: Runtime) -> list[str]:
    """Namespaces whose vectors are still loading: their searches answer from full text."""
    storage = runtime.storage
    if runtime.embedder is None or not storage.capabilities.vectors:
        return []
    n = len(storage.vectors_loading())
    return [f"dense: loading the vectors of {n} namespace{'s' if n > 1 else ''} in the "
            f"background; their searches answer from full text until it ends"] if n else []


def degraded(runtime: Runtime, *, detail: bool = True, group: bool = True) -> list[str]:
    """Everything /health and the inspector call degraded: a model warming up, vectors
    loading, a storage fault (storage_faults.py), extraction paused while the model
    provider is down; with `--workers N`, another process of the group not answering or
    unhealthy (its heartbeat, server/group.py). `group=False`: this process alone."""
    service = runtime.service
    reasons = (readiness(runtime, detail=detail) + loading(runtime)
               + service.faults.reasons(detail=detail)
               + service.extraction.describe(detail=detail))
    if group and runtime.group is not None:
        reasons += group_reasons(runtime.group)
    return reasons


class Health:
    """Public: liveness, and what is degraded (a storage fault, a model warming up). With a valid token (any namespace's, or an admin's): what runs
    where. 503 when a worker loop is dead or stuck."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime

    async def endpoint(self, request: Request) -> JSONResponse:
        runtime = self.runtime
        faults = runtime.service.faults
        await faults.recheck()  # a reported storage fault clears once a probe write succeeds
        reasons = degraded(runtime, detail=False)
        body: dict[str, Any] = {"status": "degraded" if reasons else "ok", "degraded": reasons}
        if await self.caller_has_token(request):
            body.update(version=__version__, storage=runtime.storage.description,
                        degraded=degraded(runtime),
                        extraction=runtime.service.extraction.status(),
                        rankers=[s.ranker.name for s in runtime.rankers],
                        extractor=runtime.extractor.name)
            if runtime.group is not None:  # which process answered, and the others
                body["process"] = {"index": runtime.group.index, "pid": os.getpid(),
                                   "group": [{k: b.get(k) for k in ("index", "pid", "answering",
                                                                    "ok", "degraded")}
                                             for b in read_beats(runtime.group)]}
        if runtime.worker is not None:
            workers = runtime.worker.health()
            if "version" in body:  # a caller with a token sees which loops
                body["workers"] = workers
            if not workers["ok"]:
                # 503 so a supervisor or load balancer notices a dead or stuck worker loop.
                body["status"] = "unhealthy"
                return JSONResponse(body, status_code=503)
        return JSONResponse(body)

    async def caller_has_token(self, request: Request) -> bool:
        """has_valid_token, False when the database cannot answer (noted as a fault: /health
        must answer, and say so, exactly when storage is down)."""
        try:
            return await self.has_valid_token(request)
        except Exception as exc:
            if self.runtime.service.faults.translate(exc) is None:
                raise
            return False

    async def has_valid_token(self, request: Request) -> bool:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        digest = hash_token(token.strip())
        storage = self.runtime.storage
        if await storage.namespace_for_token(digest) is not None:
            return True
        return storage.capabilities.admin and await storage.admin_for_token(digest) is not None


def health_routes(runtime: Runtime) -> list[Route]:
    return [Route("/health", Health(runtime).endpoint, methods=["GET"], name="health")]
