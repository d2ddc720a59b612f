"""HTTP answers for storage faults raised outside a tool call: a token lookup (MCP, A2A,
the admin API, the inspector) against a database that is down or refusing. Without this they
were a bare 500 with a traceback in the log; now 503 (507 for a full disk) with the named
code and what to do, and the fault is on /health (memory/storage_faults.py)."""

from __future__ import annotations

import logging
from typing import Any

from starlette.responses import JSONResponse

from ..errors import StorageFault

log = logging.getLogger("recall.storage")

#: HTTP status per storage-fault code (507 Insufficient Storage is made for a full disk).
HTTP_STATUS = {"STORAGE_FULL": 507, "STORAGE_READ_ONLY": 503, "STORAGE_UNAVAILABLE": 503}


def fault_response(fault: StorageFault) -> JSONResponse:
    return JSONResponse({"error": fault.message, "code": fault.code},
                        status_code=HTTP_STATUS.get(fault.code, 503),
                        headers={"Retry-After": "5"})


class StorageFaultAnswers:
    """Outermost ASGI middleware of the HTTP app: an exception that escapes a route before
    its response started, and that the storage recognises as a fault, is answered as one."""

    def __init__(self, app: Any, faults: Any):
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            fault = self.faults.translate(exc)
            if fault is None or started:
                raise
            log.warning("%s %s: %s", scope.get("method"), scope.get("path"), fault.code)
            await fault_response(fault)(scope, receive, send)
