"""A cap on open MCP sessions per token (the older, stateful initialize handshake).

4,000 sessions left open by one caller grew the server ~33 KB each; the MCP SDK caps sessions
only per server (and closes idle ones after `limits.session_idle_timeout`, set in app.py). This
ASGI middleware, on /mcp below the token check's 401 rewriting, counts each token's open
sessions from the traffic itself: an `initialize` answered with an `Mcp-Session-Id` opens
one; a DELETE, a 404 for it, or idling past the timeout ends it (idle: no call in flight; an
open GET stream does not count as use). When a token opens one more
than `limits.sessions_per_token`, the one idle longest is closed by the protocol's own means:
a DELETE with that session's id, sent through the app with the caller's own credential (the
SDK only lets a session's owner end it). When all of them are busy the new one is refused
with 429 and what to do.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

from .transport import _replay

log = logging.getLogger("recall.sessions")


@dataclass
class Session:
    last_used: float
    in_flight: int = 0


class SessionCap:
    def __init__(self, app: Any, prefix: str, per_token: int, idle_timeout: float,
                 clock: Callable[[], float] = time.monotonic):
        self.app = app
        self.prefix = prefix
        self.per_token = per_token
        self.idle_timeout = idle_timeout
        self.clock = clock
        #: sha256(Authorization header) -> session id -> Session (no raw token kept).
        self.sessions: dict[str, dict[str, Session]] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization")
        if not auth:
            await self.app(scope, receive, send)
            return
        key = hashlib.sha256(auth).hexdigest()
        sid = headers.get(b"mcp-session-id", b"").decode("latin-1")
        if sid:
            await self._in_session(key, sid, scope, receive, send)
        elif scope["method"] == "POST":
            await self._maybe_opening(key, auth, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _in_session(self, key: str, sid: str, scope: Any, receive: Any, send: Any) -> None:
        mine = self.sessions.get(key, {})
        # Only calls count as use: a client's open GET stream (server-to-client messages)
        # lasts as long as the session and would make every session look busy.
        session = mine.get(sid) if scope["method"] == "POST" else None
        if session is not None:
            session.in_flight += 1
            session.last_used = self.clock()
        try:
            status = await _run(self.app, scope, receive, send)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.last_used = self.clock()
        if status == 404 or (scope["method"] == "DELETE" and status is not None and status < 300):
            mine.pop(sid, None)
            if not mine:
                self.sessions.pop(key, None)

    async def _maybe_opening(self, key: str, auth: bytes, scope: Any, receive: Any,
                             send: Any) -> None:
        read, whole = await _read_head(receive)
        replay = _replay(read, receive)
        if not whole or not _is_initialize(b"".join(m.get("body", b"") for m in read)):
            await self.app(scope, replay, send)
            return
        mine = self._pruned(key)
        while len(mine) >= self.per_token:
            idle = [(s.last_used, sid) for sid, s in mine.items() if s.in_flight == 0]
            if not idle:
                await _too_many(self.per_token)(scope, replay, send)
                return
            _, victim = min(idle)
            mine.pop(victim, None)
            log.info("token %s… at its cap of %d MCP sessions: closing the one idle longest",
                     key[:12], self.per_token)
            await self._close(scope, auth, victim)
        new_id: str | None = None

        async def watch(message: Any) -> None:
            nonlocal new_id
            if message["type"] == "http.response.start" and message["status"] < 300:
                found = dict(message.get("headers") or []).get(b"mcp-session-id")
                new_id = found.decode("latin-1") if found else None
            await send(message)

        await self.app(scope, replay, watch)
        if new_id:
            self.sessions.setdefault(key, {})[new_id] = Session(self.clock())

    def _pruned(self, key: str) -> dict[str, Session]:
        """The token's sessions, without those the SDK has closed for idling by now (an
        unknown key, e.g. a bad token's, gets a fresh dict that is not kept)."""
        mine = self.sessions.get(key, {})
        cutoff = self.clock() - self.idle_timeout
        for sid in [sid for sid, s in mine.items() if s.in_flight == 0 and s.last_used < cutoff]:
            del mine[sid]
        return mine

    async def _close(self, scope: Any, auth: bytes, sid: str) -> None:
        """DELETE the session through the app, with the credential that owns it."""
        headers = [(b"authorization", auth), (b"mcp-session-id", sid.encode("latin-1"))]
        for name in (b"host", b"mcp-protocol-version"):
            value = dict(scope.get("headers") or []).get(name)
            if value is not None:
                headers.append((name, value))
        delete = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}
        status = await _run(self.app, delete, _replay([]), _discard)
        if status is None or status >= 300:
            log.warning("closing MCP session %s… answered %s", sid[:8], status)


async def _run(app: Any, scope: Any, receive: Any, send: Any) -> int | None:
    """Run the app; returns the response status it sent."""
    status: int | None = None

    async def watch(message: Any) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    await app(scope, receive, watch)
    return status


async def _discard(message: Any) -> None:
    return None


#: The MCP SDK's own body limit (it answers 413 above it, and reads as much itself): a padded
#: initialize up to it is still seen, so padding cannot slip a session past the cap.
HEAD_LIMIT = 4 * 1024 * 1024


async def _read_head(receive: Any) -> tuple[list[Any], bool]:
    """The request's first messages, up to HEAD_LIMIT bytes; and whether that is all of it."""
    messages: list[Any] = []
    size = 0
    while size <= HEAD_LIMIT:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, False
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            return messages, True
    return messages, False


def _is_initialize(body: bytes) -> bool:
    # Every stateless call passes here: skip the parse when the word cannot be in it (an
    # escaped spelling, "\u0069nitialize", is still parsed).
    if b"initialize" not in body and b"\\u" not in body:
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


def _too_many(cap: int) -> JSONResponse:
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None,
         "error": {"code": -32000,
                   "message": f"Too many open MCP sessions for this token: {cap} "
                              f"(limits.sessions_per_token), all busy with a request. Reuse an "
                              f"open session, close the ones you no longer use (HTTP DELETE "
                              f"with their Mcp-Session-Id), or retry when one finishes."}},
        status_code=429, headers={"Retry-After": "1"})
