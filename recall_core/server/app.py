"""The HTTP application: MCP at /mcp, a health route, and the A2A routes, behind a Host check."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from starlette.responses import JSONResponse

from .. import __version__
from .a2a import mount_a2a
from .admin_mount import mount_operator_routes
from .mcp.server import build_mcp
from .runtime import Runtime
from .auth import hash_token, unauthorized_response
from ..errors import ConfigError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


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


def allowed_hosts(config: Any) -> list[str] | None:
    """The Host header values the server answers (None: any). A wildcard bind with neither
    public_url nor allowed_hosts is refused: the agent card would advertise whatever host a
    caller sent, and clients would send their tokens there."""
    if config.allowed_hosts is not None:
        hosts = [h.strip().lower().strip("[]") for h in config.allowed_hosts if h.strip()]
        # Loopback names stay allowed (health checks inside a container): a card pointing a
        # client at its own loopback sends its token nowhere else.
        return None if "*" in hosts else sorted({*hosts, *LOOPBACK_NAMES})
    public = (urlsplit(config.public_url).hostname or "") if config.public_url else ""
    bind = config.host.strip("[]").lower()
    if bind in WILDCARDS and public in WILDCARDS:
        raise ConfigError(
            f"--host {config.host} listens on every address, so the Host header of a request "
            f"would decide where the A2A agent card sends clients. Set public_url (the URL "
            f"clients use, e.g. https://recall.example.org; env RECALL_PUBLIC_URL) or "
            f"allowed_hosts (e.g. [\"recall.internal\"]; env RECALL_ALLOWED_HOSTS='[\"recall.internal\"]'; "
            f"[\"*\"] to accept any).")
    hosts = {*LOOPBACK_NAMES}
    for h in (public, bind):
        if h not in WILDCARDS:
            hosts.add(h.lower())
    return sorted(hosts)


class HostCheck:
    """Answers 400 to a request whose Host is not one of `hosts` (every route): a forged Host
    cannot steer the agent card, and a DNS-rebinding page cannot reach a loopback server."""

    def __init__(self, app: Any, hosts: list[str]):
        self.app = app
        self.hosts = set(hosts)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            raw = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
            if _hostname(raw) not in self.hosts:
                response = JSONResponse(
                    {"error": "invalid_host",
                     "error_description": f"This server does not answer for host {raw!r}. Use "
                                          f"its configured address (public_url), or add the "
                                          f"name to allowed_hosts in its config."},
                    status_code=400)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _hostname(header: str) -> str:
    """`name:port` -> name, `[::1]:8765` -> ::1."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.split(":", 1)[0] if header.count(":") == 1 else header


async def build_http_app(runtime: Runtime, *, public_url: str | None = None) -> Any:
    hosts = allowed_hosts(runtime.config)
    mcp = await build_mcp(runtime)
    runtime.mcp = mcp  # for the start-up warm-up (server/warmup.py)

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request):
        # Public: liveness only. With a valid token (any namespace's): what runs where.
        degraded = readiness(runtime, detail=False)
        body: dict[str, Any] = {"status": "degraded" if degraded else "ok", "degraded": degraded}
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            digest = hash_token(token.strip())
            storage = runtime.storage
            if (await storage.namespace_for_token(digest) is not None
                    or (storage.capabilities.admin
                        and await storage.admin_for_token(digest) is not None)):
                body.update(version=__version__, storage=runtime.storage.description,
                            degraded=readiness(runtime),
                            rankers=[s.ranker.name for s in runtime.rankers],
                            extractor=runtime.extractor.name)
        if runtime.worker is not None:
            workers = runtime.worker.health()
            if "version" in body:  # a caller with a token sees which loops
                body["workers"] = workers
            if not workers["ok"]:
                # 503 so a supervisor or load balancer notices a dead or stuck worker loop.
                body["status"] = "unhealthy"
                return JSONResponse(body, status_code=503)
        return JSONResponse(body)

    app = mcp.http_app(path="/mcp", json_response=True)
    app.add_middleware(OneRequestPerId, prefix="/mcp")
    app.add_middleware(ExplainUnauthorized, prefix="/mcp")
    mount_a2a(app, runtime, public_url=public_url)
    mount_operator_routes(app, runtime, public_url=public_url)
    if hosts is not None:
        app.add_middleware(HostCheck, hosts=hosts)
    return app


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
    get a token, and a bare `Bearer realm="recall"` challenge. The stock answer (an empty body,
    or text about re-registering to obtain new tokens) sent clients such as MCP Inspector into
    OAuth discovery; Recall has no OAuth, its tokens come from `recall create-token`."""

    def __init__(self, app: Any, prefix: str):
        self.app = app
        self.prefix = prefix

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
                await unauthorized(scope)(scope, receive, send)

        await self.app(scope, receive, send_explained)


def unauthorized(scope: Any) -> JSONResponse:
    header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
    return unauthorized_response(header)
