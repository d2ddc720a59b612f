"""ASGI middleware for the MCP route (/mcp), below FastMCP: one in-flight request per JSON-RPC
id and session (`OneRequestPerId`), and 401s that explain where tokens come from
(`ExplainUnauthorized`). Both are listed in the HTTP app's middleware (server/app.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse

from ..auth import unauthorized_response


class OneRequestPerId:
    """Answers a JSON-RPC request at once with an error when the same session already has a
    request with that id in flight. The MCP SDK routes answers by id: a second request with a
    live id took the first one's answer, and the first waited forever (which then also held
    up a graceful shutdown). A buggy client or load tool makes this easily."""

    def __init__(self, app: Any, prefix: str):
        self.app = app
        self.prefix = prefix
        self.inflight: set[tuple[bytes, str]] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (scope["type"] != "http" or scope["method"] != "POST"
                or not scope["path"].startswith(self.prefix)):
            await self.app(scope, receive, send)
            return
        session = dict(scope.get("headers") or []).get(b"mcp-session-id")
        if session is None:
            await self.app(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        key = _request_key(session, body)
        if key is not None and key in self.inflight:
            response = JSONResponse(
                {"jsonrpc": "2.0", "id": json.loads(key[1]),
                 "error": {"code": -32600,
                           "message": f"Invalid Request: id {key[1]} is already in use by a "
                                      f"request still running on this session. Use a new id "
                                      f"for each request."}})
            await response(scope, receive, send)
            return
        if key is not None:
            self.inflight.add(key)
        try:
            await self.app(scope, _replay([{"type": "http.request", "body": body,
                                            "more_body": False}], receive), send)
        finally:
            self.inflight.discard(key)


def _request_key(session: bytes, body: bytes) -> tuple[bytes, str] | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and "method" in message and message.get("id") is not None:
        return session, json.dumps(message["id"])
    return None


def _replay(messages: list[Any], then: Any = None) -> Any:
    async def receive() -> Any:
        if messages:
            return messages.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}
    return receive


class ExplainUnauthorized:
    """Rewrites the MCP route's 401s: a short JSON reason that names the header and how to
    get a token. With OAuth off (`answer` default) the challenge is a bare `Bearer
    realm="recall"`: the stock answer (an empty body, or text about re-registering to obtain
    new tokens) sent clients such as MCP Inspector into OAuth discovery, and static tokens
    come from `recall create-token`. With OAuth on, `answer` is the server's
    (`oauth.ServerAuth.unauthorized`), pointing at the protected-resource metadata."""

    def __init__(self, app: Any, prefix: str, answer: Callable[[str], Any] | None = None):
        self.app = app
        self.prefix = prefix
        self.answer = answer or unauthorized_response

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        swallowing = False

        async def send_explained(message: Any) -> None:
            nonlocal swallowing
            if message["type"] == "http.response.start" and message["status"] == 401:
                swallowing = True
                return
            if not swallowing:
                await send(message)
                return
            if message["type"] == "http.response.body" and not message.get("more_body"):
                swallowing = False
                header = dict(scope.get("headers") or []).get(b"authorization", b"")
                await self.answer(header.decode("latin-1"))(scope, receive, send)

        await self.app(scope, receive, send_explained)
