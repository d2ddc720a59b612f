"""Input the A2A routes refuse before the SDK sees a request.

The SDK stores a new task's message (its history) before the executor runs, so a value that
storage cannot hold must be refused here or not at all: a NUL character (`\\x00`) anywhere in
the request (text or data parts, metadata, ids, a REST path or query parameter) is answered
with the same rule and wording as the MCP tools (`validation.nul_path`), as the binding's
invalid-params error (JSON-RPC -32602, REST 400 INVALID_ARGUMENT, with `code: INVALID_PARAM`
in the error details), and nothing is stored, on SQLite and Postgres alike.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import InvalidParamsError
from starlette.requests import Request
from starlette.responses import JSONResponse

from .. import validation as v

# JSON can only carry a NUL inside a string as this escape (a raw control character is not
# JSON): bodies without it are passed on without a second parse.
_NUL_ESCAPE = b"\\u0000"


async def refusal(request: Request, rpc: bool) -> JSONResponse | None:
    """The error answer for a request that carries a NUL character, or None."""
    where, doc = None, None
    for name, value in request.path_params.items():
        if isinstance(value, str) and "\x00" in value:
            where = f"path parameter {name}"
    for name, value in request.query_params.multi_items():
        if where is None and ("\x00" in value or "\x00" in name):
            where = f"query parameter {name}"
    if where is None and request.method in ("POST", "PUT", "PATCH"):
        body = await request.body()  # Starlette keeps it: the SDK reads the same bytes
        if _NUL_ESCAPE in body:
            try:
                doc = json.loads(body)
            except (ValueError, RecursionError):
                return None  # not JSON: the SDK answers with its own parse error
            where = v.nul_path(doc, "")
    if where is None:
        return None
    error = InvalidParamsError(message=v.nul_message(where), data={"code": "INVALID_PARAM"})
    if rpc:
        request_id: Any = doc.get("id") if isinstance(doc, dict) else None
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int, type(None))):
            request_id = None
        return JSONResponse(build_error_response(request_id, error))
    return JSONResponse(build_rest_error_payload(error), status_code=400)
