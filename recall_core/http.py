"""The HTTP application: MCP at /mcp, a health route, and the A2A routes."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from .a2a import mount_a2a
from .admin.mount import mount_operator_routes
from .app import Runtime, build_mcp


def readiness(runtime: Runtime) -> list[str]:
    """What is not (yet) working, as search would report it in data.degraded."""
    emb = runtime.embedder
    if emb is None or emb.ready:
        return []
    status = emb.status() if hasattr(emb, "status") else {}
    if status.get("error"):
        return [f"dense: model failed to load: {status['error']}"]
    return ["dense: warming up"]


async def build_http_app(runtime: Runtime, *, public_url: str | None = None) -> Any:
    mcp = await build_mcp(runtime)

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request):  # never behind auth: carries no tenant data
        return JSONResponse({"status": "ok", "storage": runtime.storage.description,
                             "degraded": readiness(runtime)})

    app = mcp.http_app(path="/mcp", json_response=True)
    app.add_middleware(ExplainUnauthorized, prefix="/mcp")
    mount_a2a(app, runtime, public_url=public_url)
    mount_operator_routes(app, runtime, public_url=public_url)
    return app


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
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        error, reason, challenge = ("unauthorized", "Missing bearer token.",
                                    'Bearer realm="recall"')
    else:
        error, reason = "invalid_token", "Unknown or revoked token."
        challenge = 'Bearer realm="recall", error="invalid_token"'
    return JSONResponse(
        {"error": error,
         "error_description": f"{reason} Send 'Authorization: Bearer <token>' with a token "
                              f"from `recall create-token NAMESPACE`, run where the server's "
                              f"database is (Recall has no OAuth; the same tokens work for "
                              f"A2A)."},
        status_code=401, headers={"WWW-Authenticate": challenge})
