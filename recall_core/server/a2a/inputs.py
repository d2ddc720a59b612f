"""Input the A2A routes refuse before the SDK sees a request.

The SDK stores a new task's message (its history) before the executor runs, so a value that
storage cannot hold must be refused here or not at all: a NUL character (`\\x00`) anywhere in
the request (text or data parts, metadata, ids, a REST path or query parameter), a lone
surrogate, a NaN or Infinity (also `1e400`, which Python reads as Infinity: the SDK parses it,
then cannot serialise it back), an integer beyond int64, or nesting deeper than storage takes,
is answered with the one rule every entry applies (`kit.representable`, through
`validation.unstorable`), as the binding's
invalid-params error (JSON-RPC -32602, REST 400 INVALID_ARGUMENT, with `code: INVALID_PARAM`
in the error details), and nothing is stored, on SQLite and Postgres alike.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import InvalidParamsError
from starlette.requests import Request
from starlette.responses import JSONResponse

from ...kit import representable
from ...memory import validation as v


async def refusal(request: Request, rpc: bool) -> JSONResponse | None:
    """The error answer for a request carrying what storage cannot hold, or None."""
    why, doc = None, None
    for name, value in request.path_params.items():
        if isinstance(value, str) and "\x00" in value:
            why = v.nul_message(f"path parameter {name}")
    for name, value in request.query_params.multi_items():
        if why is None and ("\x00" in value or "\x00" in name):
            why = v.nul_message(f"query parameter {name}")
    if why is None and request.method in ("POST", "PUT", "PATCH"):
        body = await request.body()  # Starlette keeps it: the SDK reads the same bytes
        try:  # every body: a number such as 1e400 or 2**64 has no marker to look for
            doc = json.loads(body)
            why = v.unstorable(doc, "")
        except RecursionError:  # nested beyond Python's parser (the SDK's fails the same way)
            why = representable.depth_problem("the request")
        except ValueError:
            return None  # not JSON: the SDK answers with its own parse error
    if why is None:
        return None
    error = InvalidParamsError(message=why, data={"code": "INVALID_PARAM"})
    if rpc:
        request_id: Any = doc.get("id") if isinstance(doc, dict) else None
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int, type(None))):
            request_id = None
        return JSONResponse(build_error_response(request_id, error))
    return JSONResponse(build_rest_error_payload(error), status_code=400)


# The SDK logs a full traceback (logger.exception) for a request it then answers with a clean
# invalid-params or invalid-request error; its next line, a WARNING "Request Error ...", names
# the parse error. A client's bad input is not a server fault: keep the WARNING, drop the
# traceback, so an operator's log shows tracebacks only for faults of the server.
_SDK_INPUT_TRACEBACKS = {
    "a2a.server.routes.jsonrpc_dispatcher": ("Failed to parse request params",
                                             "Failed to validate base JSON-RPC request"),
}


class _DropInputTracebacks(logging.Filter):
    def __init__(self, messages: tuple[str, ...]):
        super().__init__()
        self.messages = messages

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and record.msg in self.messages)


def quiet_sdk_input_tracebacks() -> None:
    for name, messages in _SDK_INPUT_TRACEBACKS.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropInputTracebacks) for f in logger.filters):
            logger.addFilter(_DropInputTracebacks(messages))
