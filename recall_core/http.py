"""The HTTP application: MCP at /mcp, a health route, and the A2A routes."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from .a2a import mount_a2a
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
    mount_a2a(app, runtime, public_url=public_url)
    return app
