"""Bearer tokens -> namespaces.

Raw tokens are shown once at creation and never stored: storage keeps their SHA-256. The
FastMCP verifier looks every request's token up in storage, so a revoked token (or an erased
namespace) gets HTTP 401 on its very next request. Over stdio there is no HTTP request; the
namespace comes from RECALL_TOKEN, and every tool call checks the token again
(`verified_namespace`), so after a revoke or an erase the same session stops working.
"""

from __future__ import annotations

import contextvars
from typing import Any

from fastmcp.server.auth import AccessToken, TokenVerifier
from starlette.responses import JSONResponse
from fastmcp.server.dependencies import get_access_token

from ..errors import RecallError
from ..access.principal import ALL_SCOPES, Principal, parse_scopes
from ..contracts import Storage, TokenGrant
from ..admin.tokens import TOKEN_PREFIX, create_token, hash_token, new_token  # noqa: F401 (re-export)

# Set for the stdio transport (one caller per process).
_stdio_namespace: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "recall_stdio_namespace", default=None)


class StorageTokenVerifier(TokenVerifier):
    """FastMCP verifier backed by the api_tokens table."""

    def __init__(self, storage: Storage):
        super().__init__()
        self.storage = storage

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token:
            return None
        grant = await self.storage.grant_for_token(hash_token(token))
        if grant is None:
            return None
        return grant_access_token(token, principal_of(grant))


def principal_of(grant: TokenGrant) -> Principal:
    """The principal a stored token grant proves (NULL scopes: a token made before scopes
    existed, which keeps every power)."""
    return Principal(grant.namespace, grant.agent, parse_scopes(grant.scopes))


def grant_access_token(token: str, principal: Principal, **extra: Any) -> AccessToken:
    """FastMCP's AccessToken for a principal: scopes as OAuth scope strings (FastMCP's
    scope checks read them), namespace and agent as claims (`current_principal`)."""
    return AccessToken(token=token, client_id=principal.namespace,
                       scopes=sorted(principal.scopes),
                       claims={"namespace": principal.namespace, "agent": principal.agent},
                       **extra)


_stdio_recheck: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "recall_stdio_recheck", default=None)
_stdio_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "recall_stdio_principal", default=None)


def set_stdio_namespace(namespace: str, storage: Storage | None = None,
                        token: str | None = None, principal: Principal | None = None) -> None:
    """The stdio caller: `principal` (from RECALL_TOKEN's grant) or the namespace's owner."""
    _stdio_namespace.set(namespace)
    _stdio_principal.set(principal or Principal(namespace))
    if storage is not None and token is not None:
        digest = hash_token(token)
        _stdio_recheck.set(lambda: storage.namespace_for_token(digest))


async def verified_namespace() -> str:
    """current_namespace(), with the stdio token checked again on every call."""
    namespace = current_namespace()
    recheck = _stdio_recheck.get()
    if recheck is not None and get_access_token() is None:
        if await recheck() != namespace:
            raise RecallError(
                "This session's token (RECALL_TOKEN) was revoked or its namespace was erased, "
                "so this session can no longer read or write. Create a new token with `recall "
                "create-token NAMESPACE` and restart the client with it.", code="UNAUTHORIZED")
    return namespace


def current_namespace() -> str:
    """The verified caller's namespace. Tools never take it as an argument."""
    tok = get_access_token()
    if tok is not None:
        ns = tok.claims.get("namespace") if isinstance(tok, AccessToken) else None
        return ns or tok.client_id
    ns = _stdio_namespace.get()
    if ns:
        return ns
    raise RecallError("No verified caller: send 'Authorization: Bearer <token>' (HTTP) or set "
                      "RECALL_TOKEN (stdio). Create a token with `recall create-token NAMESPACE`.",
                      code="UNAUTHORIZED")


def current_principal() -> Principal:
    """The verified caller: namespace, agent (None: the owner) and scopes."""
    tok = get_access_token()
    if tok is not None:
        return principal_of_token(tok)
    principal = _stdio_principal.get()
    if principal is not None:
        return principal
    # A namespace set without a principal (the start-up warm-up's throwaway one) is its
    # owner's; with neither, current_namespace raises the UNAUTHORIZED error.
    return Principal(current_namespace())


def principal_of_token(tok: Any) -> Principal:
    """The principal a verified AccessToken carries (static or OAuth: both put namespace and
    agent in its claims; the scopes are its OAuth scopes that are Recall's)."""
    claims = tok.claims if isinstance(tok, AccessToken) else {}
    namespace = claims.get("namespace") or tok.client_id
    agent = claims.get("agent") or None
    return Principal(namespace, agent, frozenset(tok.scopes or ()) & ALL_SCOPES)


def current_namespace_or_none() -> str | None:
    try:
        return current_namespace()
    except RecallError:
        return None


def unauthorized_response(authorization: str) -> JSONResponse:
    """The 401 of every HTTP route behind a token (MCP and A2A) while `[oauth] mode = "off"`,
    given the request's Authorization header. A missing token says so with a bare `Bearer
    realm="recall"` challenge (RFC 6750: no error code when no credentials were sent); a token
    that opens nothing is `invalid_token`. Both name the header and how to get a token, and
    carry no OAuth hints (the server speaks no OAuth then; hints send clients such as MCP
    Inspector into OAuth discovery). With OAuth on, oauth/challenge.py answers instead."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        error, challenge = "unauthorized", 'Bearer realm="recall"'
        reason = ("Missing bearer token: the request has no 'Authorization: Bearer ...' "
                  "header." if not authorization.strip() else
                  "Missing bearer token: the Authorization header is not 'Bearer <token>'.")
    else:
        error, reason = "invalid_token", "Unknown or revoked token."
        challenge = 'Bearer realm="recall", error="invalid_token"'
    return JSONResponse(
        {"error": error,
         "error_description": f"{reason} Send 'Authorization: Bearer <token>' with a token "
                              f"from `recall create-token NAMESPACE`, run where the server's "
                              f"database is (OAuth is off on this server: [oauth] mode; the "
                              f"same tokens work for MCP and A2A)."},
        status_code=401, headers={"WWW-Authenticate": challenge})
