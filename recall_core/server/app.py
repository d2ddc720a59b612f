"""The HTTP application, built in one place: every route, mount and middleware, and the
lifespan.

    /health                          liveness (health.py)
    /.well-known/agent-card.json     the A2A agent card       } a2a/routes.py
    /a2a, /a2a/...                   A2A JSON-RPC and REST    }
    /mcp                             MCP (FastMCP's app: token verifier, session manager)
    /.well-known/oauth-protected-... RFC 9728 metadata, when [oauth] is on (oauth/compose.py)
    /admin/...                       admin JSON API (admin_api.py)     } storage with the
    /ui/..., /ui/static/...          the inspector (inspector/)        } admin capability

Middleware, outermost first: storage faults answered as such (storage_errors.py), the Host
check (Starlette's TrustedHostMiddleware, hosts from `allowed_hosts`), then, for /mcp only,
explained 401s (with OAuth on, pointing at the metadata; inside FastMCP's app a
verified token without any Recall scope gets 403), a cap on sessions per token (mcp/sessions.py) and one request per JSON-RPC id
(mcp/transport.py), and for /a2a only, whole numbers as JSON integers (a2a/numbers.py).
Modules that contribute routes return them; nothing mutates another framework's app.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import BaseRoute, Mount, Route

# The runtime first: importing recall_core.search before recall_core.kit fails (kit/__init__
# and search/relevance import each other; only kit-first resolves), and runtime loads kit first.
from .runtime import Runtime  # noqa: I001
from ..admin.service import AdminService
from ..errors import ConfigError
from .a2a import WholeNumbers, a2a_routes, build_handler
from .admin_api import build_admin_api
from .health import health_routes
from .inspector import Inspector, static_files
from .mcp.server import build_mcp
from .oauth import compose_auth
from .mcp.sessions import SessionCap
from .mcp.transport import ExplainUnauthorized, OneRequestPerId
from .storage_errors import StorageFaultAnswers

log = logging.getLogger("recall")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


async def build_http_app(runtime: Runtime, *, public_url: str | None = None) -> Starlette:
    hosts = allowed_hosts(runtime.config)
    auth = await compose_auth(runtime, public_url)  # [oauth]: the one place auth is built
    mcp = await build_mcp(runtime, auth=auth.provider)
    runtime.mcp = mcp  # for the start-up warm-up (server/warmup.py)
    # FastMCP's own app for /mcp: its auth middleware (the token verifier) and the session
    # manager, whose lifespan ours runs. A Route, not a Mount: a Mount matches /mcp/... only,
    # and clients POST to /mcp exactly.
    limits = runtime.config.limits
    # In a --workers group, the older (stateful) handshake is served statelessly: the SDK
    # keeps a session in one process's memory, and SO_REUSEPORT spreads a client's
    # connections over processes by a hash we cannot steer, so pinning is not possible and
    # a session id known to one process is a 404 in another. Without an Mcp-Session-Id an
    # older client sends every request on its own (the protocol allows a server that issues
    # none); Recall pushes nothing to clients, so nothing is lost. 2026-07-28 clients are
    # stateless anyway.
    stateless = runtime.group is not None and runtime.group.count > 1
    mcp_app = mcp.http_app(path="/mcp", json_response=True, middleware=auth.mcp_middleware,
                           session_idle_timeout=limits.session_idle_timeout,
                           stateless_http=stateless or None)
    a2a_handler = build_handler(runtime, public_url, auth)
    routes: list[BaseRoute] = [
        *health_routes(runtime),
        *a2a_routes(runtime, a2a_handler, public_url, auth),
        Route("/mcp", endpoint=mcp_app, name="mcp"),
        *auth.routes,  # OAuth on: RFC 9728 metadata (built-in: the authorization server)
        *operator_routes(runtime, public_url),
    ]
    middleware = [
        Middleware(StorageFaultAnswers, faults=runtime.service.faults),
        *host_check(hosts),
        Middleware(ExplainUnauthorized, prefix="/mcp", answer=auth.unauthorized),
        Middleware(SessionCap, prefix="/mcp", per_token=limits.sessions_per_token,
                   idle_timeout=limits.session_idle_timeout),
        Middleware(OneRequestPerId, prefix="/mcp"),
        Middleware(WholeNumbers, prefix="/a2a"),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp_app.lifespan(mcp_app):
            try:
                yield
            finally:
                await a2a_handler.aclose()  # the SDK's in-memory task registry

    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def operator_routes(runtime: Runtime, public_url: str | None) -> list[BaseRoute]:
    """The admin API at /admin and the inspector at /ui, when the storage can serve them."""
    if not runtime.storage.capabilities.admin:
        log.warning("storage %s has no admin capability: /admin and /ui are not served",
                    runtime.storage.description)
        return []
    runtime.admin = AdminService(runtime.service)
    runtime.inspector = Inspector(runtime, runtime.admin, public_url)
    return [
        AnyPathMount("/admin", app=build_admin_api(runtime.admin)),
        AnyPathMount("/ui", routes=[*runtime.inspector.routes(),
                                    Mount("/static", app=static_files())]),
    ]


class AnyPathMount(Mount):
    """A Mount whose `{path}` also matches a decoded newline (Starlette's `.*` does not, so
    /admin/namespaces/a%0Ab/tokens fell through to the outer app's plain-text 404)."""

    def __init__(self, path: str, **kwargs: Any):
        super().__init__(path, **kwargs)
        self.path_regex = re.compile(self.path_regex.pattern, re.DOTALL)


def host_check(hosts: list[str] | None) -> list[Middleware]:
    """Starlette's TrustedHostMiddleware for `hosts` (none when any host is answered). A
    refused request gets its 400 "Invalid host header": a forged Host cannot steer the agent
    card, and a DNS-rebinding page cannot reach a loopback server."""
    if hosts is None:
        return []
    log.info("answering Host names %s; other requests get 400 (add names with allowed_hosts)",
             ", ".join(hosts))
    # Starlette compares IPv6 literals in their Host-header form, with brackets.
    patterns = [f"[{h}]" if ":" in h else h for h in hosts]
    return [Middleware(TrustedHostMiddleware, allowed_hosts=patterns, www_redirect=False)]


def allowed_hosts(config: Any) -> list[str] | None:
    """The Host header values the server answers (None: any). A wildcard bind with neither
    public_url nor allowed_hosts is refused: the agent card would advertise whatever host a
    caller sent, and clients would send their tokens there."""
    if config.allowed_hosts is not None:
        hosts = [h.strip().lower().strip("[]") for h in config.allowed_hosts if h.strip()]
        if "*" in hosts:
            return None
        for h in hosts:
            if "*" in h and not (h.startswith("*.") and "*" not in h[1:]):
                raise ConfigError(
                    f"allowed_hosts entry {h!r}: a wildcard is either \"*\" (any host) or a "
                    f"leading \"*.\" (every name under a domain, e.g. \"*.example.org\").")
        # Loopback names stay allowed (health checks inside a container): a card pointing a
        # client at its own loopback sends its token nowhere else.
        return sorted({*hosts, *LOOPBACK_NAMES})
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
