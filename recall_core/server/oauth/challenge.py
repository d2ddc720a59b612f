"""The answers of /mcp and /a2a to a caller without a usable credential when OAuth is on.

- 401 (no token, or one nothing verifies): `WWW-Authenticate: Bearer ... resource_metadata=
  "<this server's RFC 9728 document>"`, with `error="invalid_token"` when a token was sent
  (RFC 6750 §3.1: no error code when no credentials were sent). MCP clients follow
  resource_metadata to the authorization server (the MCP authorization spec).
- 403 (a verified token that grants none of Recall's scopes): `error="insufficient_scope"`
  naming the scopes, body code FORBIDDEN. Sent by `ScopeFloor`, which sits behind FastMCP's
  own auth middleware on /mcp; A2A asks `forbidden` directly.

With `[oauth] mode = "off"` none of this is used: server/auth.py's `unauthorized_response`
answers exactly as before, with no OAuth hints (hints send MCP Inspector into OAuth discovery).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.responses import JSONResponse

from ...access.principal import ALL_SCOPES, SCOPE_ORDER


@dataclass(frozen=True)
class Challenge:
    """The OAuth-mode 401/403 for one resource."""

    resource_url: str
    metadata_url: str
    #: Where OAuth tokens come from, for people reading the body (the issuer's URL, or
    #: "this server's authorization server").
    token_source: str

    def _header(self, *params: str) -> str:
        return ", ".join(['Bearer realm="recall"', *params,
                          f'resource_metadata="{self.metadata_url}"'])

    def unauthorized(self, authorization: str) -> JSONResponse:
        """The 401 for a request with this Authorization header."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            error, header = "unauthorized", self._header()
            reason = ("Missing bearer token: the request has no 'Authorization: Bearer ...' "
                      "header." if not authorization.strip() else
                      "Missing bearer token: the Authorization header is not 'Bearer <token>'.")
        else:
            error, header = "invalid_token", self._header('error="invalid_token"')
            reason = ("The bearer token is unknown, revoked, expired, or not issued for this "
                      "resource (issuer, audience or signature do not match).")
        return JSONResponse(
            {"error": error,
             "error_description": f"{reason} Send 'Authorization: Bearer <token>' with an OAuth "
                                  f"access token from {self.token_source} whose audience is "
                                  f"{self.resource_url} (discovery: {self.metadata_url}), or a "
                                  f"token from `recall create-token NAMESPACE`."},
            status_code=401, headers={"WWW-Authenticate": header})

    def forbidden(self, granted: Iterable[str] = ()) -> JSONResponse:
        """The 403 for a verified token that grants none of Recall's scopes."""
        had = " ".join(granted) or "no scopes"
        wanted = " ".join(SCOPE_ORDER)
        header = self._header('error="insufficient_scope"', f'scope="{wanted}"')
        return JSONResponse(
            {"error": "insufficient_scope", "code": "FORBIDDEN",
             "error_description": f"The token is valid but grants none of Recall's scopes "
                                  f"({', '.join(SCOPE_ORDER)}); it carries: {had}. Request a "
                                  f"token with at least one of them (e.g. scope=\"memory:read\" "
                                  f"for read-only use) from {self.token_source}."},
            status_code=403, headers={"WWW-Authenticate": header})


def has_recall_scope(scopes: Iterable[str] | None) -> bool:
    return bool(set(scopes or ()) & ALL_SCOPES)


class ScopeFloor:
    """ASGI middleware inside FastMCP's /mcp app, after its authentication middleware: a
    verified token without any Recall scope gets `Challenge.forbidden` instead of reaching
    the tools (where an empty scope set must never read as "everything")."""

    def __init__(self, app: Any, challenge: Challenge):
        self.app = app
        self.challenge = challenge

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        user = scope.get("user") if scope["type"] == "http" else None
        if isinstance(user, AuthenticatedUser) and not has_recall_scope(user.scopes):
            token = user.access_token
            granted = (token.claims.get("oauth") or {}).get("scope", "") if hasattr(
                token, "claims") else ""
            await self.challenge.forbidden(granted.split())(scope, receive, send)
            return
        await self.app(scope, receive, send)
