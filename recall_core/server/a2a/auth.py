"""Bearer auth for the A2A routes, and how the verified namespace reaches the SDK.

The JSON-RPC and REST routes are wrapped one by one (the agent card stays public): each
request's `Authorization: Bearer` credential goes through the server's auth
(`oauth.compose.ServerAuth.authenticate`), the same verifiers and principal mapping as /mcp:
a static token is looked up in storage (a revoked token or an erased namespace gets 401 on its
next request), an OAuth token is verified as configured in `[oauth]`. The namespace and the
principal are put in the ASGI scope; `NamespaceContextBuilder` turns them into the
`ServerCallContext` user that the task store and the executor read. Nothing downstream ever
takes a namespace from the request body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..auth import hash_token, principal_of_token
from ...access.partitions import home
from ...access.principal import Principal
from ...contracts import Storage
from .inputs import refusal

if TYPE_CHECKING:
    from ..oauth import ServerAuth, Verified

SCOPE_KEY = "recall.namespace"
TOKEN_KEY = "recall.token_hash"
PRINCIPAL_KEY = "recall.principal"

Endpoint = Callable[[Request], Awaitable[Response]]


class NamespaceUser(User):
    """The caller as the SDK sees it: its user name is the namespace its token maps to."""

    def __init__(self, namespace: str, token_hash: str | None = None,
                 principal: Principal | None = None):
        self.namespace = namespace
        #: The SHA-256 of the caller's static token: the task store re-checks it before it
        #: writes, so a task finishing after its namespace was erased leaves no row behind.
        #: None for an OAuth token (not stored; it was verified for this request).
        self.token_hash = token_hash
        #: The verified caller (namespace, agent, scopes), as /mcp's `current_principal`.
        self.principal = principal or Principal(namespace)

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self.namespace


class NamespaceContextBuilder(DefaultServerCallContextBuilder):
    """Builds the SDK call context from a request that `require_token` already let through."""

    def build(self, request: Request) -> ServerCallContext:
        ctx = super().build(request)
        headers = ctx.state.get("headers")
        if isinstance(headers, dict):
            headers.pop("authorization", None)  # the SDK logs call contexts at debug level
        return ctx

    def build_user(self, request: Request) -> User:
        return NamespaceUser(request.scope[SCOPE_KEY], request.scope.get(TOKEN_KEY),
                             request.scope.get(PRINCIPAL_KEY))


async def still_valid(storage: Storage, context: ServerCallContext) -> bool:
    """Whether the caller's token still opens its namespace (not revoked, not erased)."""
    user = context.user
    if not isinstance(user, NamespaceUser) or user.token_hash is None:
        return True
    return await storage.namespace_for_token(user.token_hash) == user.namespace


def caller_of(context: ServerCallContext) -> Principal:
    """The verified caller of an A2A call (see `namespace_of`)."""
    namespace_of(context)  # fails loudly without one
    user = context.user
    assert isinstance(user, NamespaceUser)
    return user.principal


def task_space(context: ServerCallContext) -> str:
    """Where the caller's tasks are kept: the namespace for its owner, the agent's private
    partition for an agent (`access.partitions.home`), so no agent reads, resumes or lists
    another's task, and erasing an agent's memories erases its tasks."""
    return home(caller_of(context))


def namespace_of(context: ServerCallContext) -> str:
    """The verified namespace of an A2A call. Fails loudly rather than fall back to a default
    namespace: every A2A route is behind `require_token`, so a miss here is a wiring bug."""
    user = context.user
    if isinstance(user, NamespaceUser) and user.namespace:
        return user.namespace
    raise PermissionError("A2A call without a verified namespace; the route is not behind "
                          "recall_core.server.a2a.auth.require_token.")


async def verify_request(auth: ServerAuth, request: Request) -> Verified | Response:
    """The caller's verified credential, or the 401/403 (the same answers as the MCP route's)."""
    return await auth.authenticate(request.headers.get("authorization", ""))


def body_limit(max_text_bytes: int) -> int:
    """The largest A2A request body accepted: room for a text at the size limit even when
    JSON escapes every character (up to 6 bytes for one UTF-8 byte... in practice 2x), plus
    the envelope. A bigger body is refused before the SDK stores it in a task's history."""
    return 8 * max_text_bytes + 64 * 1024


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse(
        {"error": "payload_too_large",
         "error_description": f"The request body is larger than {limit} bytes. A memory's text "
                             f"may be at most limits.max_text_bytes; split it into several "
                             f"messages."}, status_code=413)


def require_token(auth: ServerAuth, endpoint: Endpoint, max_body: int | None = None,
                  rpc: bool = True) -> Endpoint:
    """`endpoint` behind the size limit, the bearer token and the input rules of
    `inputs.refusal` (`rpc`: answer in the JSON-RPC binding's error form, else REST's)."""
    async def behind_token(request: Request) -> Response:
        if max_body is not None and request.method in ("POST", "PUT", "PATCH"):
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_body:
                return _too_large(max_body)
            if not declared and len(await request.body()) > max_body:  # chunked
                return _too_large(max_body)
        outcome = await verify_request(auth, request)
        if isinstance(outcome, Response):
            return outcome
        refused = await refusal(request, rpc)
        if refused is not None:
            return refused
        principal = principal_of_token(outcome.access)
        request.scope[SCOPE_KEY] = principal.namespace
        request.scope[PRINCIPAL_KEY] = principal
        if outcome.static:
            token = request.headers.get("authorization", "").partition(" ")[2].strip()
            request.scope[TOKEN_KEY] = hash_token(token)
        return await endpoint(request)

    behind_token.__name__ = getattr(endpoint, "__name__", "a2a_endpoint")
    return behind_token


def routes_behind_token(auth: ServerAuth, routes: list[BaseRoute],
                        max_body: int | None = None, rpc: bool = True) -> list[Route]:
    """Plain `Route`s with their endpoints behind `require_token`. Anything else the SDK
    returns (the REST `/{tenant}` mount) is dropped: Recall does not use path tenants, and a
    catch-all mount at the root would shadow other routes."""
    out: list[Route] = []
    for route in routes:
        if isinstance(route, Route):
            out.append(Route(route.path, endpoint=require_token(auth, route.endpoint, max_body, rpc),
                             methods=sorted(route.methods or ()), name=route.name))
    return out
