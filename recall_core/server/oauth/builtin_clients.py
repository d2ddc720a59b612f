"""Registered OAuth clients of the built-in authorization server, kept without their secrets.

Dynamic client registration (RFC 7591, the MCP SDK's handler) gives a confidential client a
secret once; storage keeps only its SHA-256 (`sha256:<hex>` in the client's document), like
every token. The SDK's `ClientAuthenticator` compares the stored secret with the sent one, so
`HashedSecretAuthenticator` shows it the client with the sent secret in place when its hash
matches (and an unguessable one when not): the SDK's own checks (method, expiry, constant-time
compare) still decide. `token_and_revoke_routes` puts it behind /token and /revoke.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
from typing import Any
from urllib.parse import unquote

from fastmcp.server.auth.auth import TokenHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.routes import cors_middleware
from mcp.shared.auth import OAuthClientInformationFull
from starlette.requests import Request
from starlette.routing import Route

from ...admin.tokens import hash_token

HASHED = "sha256:"


def client_document(client: OAuthClientInformationFull) -> str:
    """The JSON storage keeps for a client: its metadata, the secret as a hash."""
    data = json.loads(client.model_dump_json())
    if data.get("client_secret"):
        data["client_secret"] = HASHED + hash_token(data["client_secret"])
    return json.dumps(data, sort_keys=True)


def client_from_document(document: str) -> OAuthClientInformationFull:
    return OAuthClientInformationFull.model_validate_json(document)


def _sent_secret(request: Request, form: Any) -> str | None:
    header = request.headers.get("Authorization", "")
    if header.startswith("Basic "):
        try:
            decoded = base64.b64decode(header[6:]).decode("utf-8")
        except (ValueError, UnicodeDecodeError, binascii.Error):
            return None
        return unquote(decoded.split(":", 1)[1]) if ":" in decoded else None
    sent = form.get("client_secret")
    return sent if isinstance(sent, str) else None


class _SecretInPlace:
    """The provider, as the SDK's authenticator sees it for one request."""

    def __init__(self, provider: Any, sent: str | None):
        self.provider = provider
        self.sent = sent

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        client = await self.provider.get_client(client_id)
        stored = client.client_secret if client is not None else None
        if client is None or not stored or not stored.startswith(HASHED):
            return client
        ok = self.sent is not None and hmac.compare_digest(
            stored[len(HASHED):].encode(), hash_token(self.sent).encode())
        return client.model_copy(update={
            "client_secret": self.sent if ok else secrets.token_hex(32)})


class HashedSecretAuthenticator(ClientAuthenticator):
    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()  # Starlette caches it: the handler reads it again
        inner = ClientAuthenticator(_SecretInPlace(self.provider, _sent_secret(request, form)))
        return await inner.authenticate_request(request)


def token_and_revoke_routes(provider: Any, routes: list[Any]) -> list[Any]:
    """`routes` with /token and /revoke served through HashedSecretAuthenticator (FastMCP's
    OAuth 2.1 token handler kept)."""
    auth = HashedSecretAuthenticator(provider)
    out = []
    for route in routes:
        if isinstance(route, Route) and route.path == "/token":
            handler = TokenHandler(provider=provider, client_authenticator=auth)
            route = Route("/token", endpoint=cors_middleware(handler.handle, ["POST", "OPTIONS"]),
                          methods=["POST", "OPTIONS"])
        elif isinstance(route, Route) and route.path == "/revoke":
            revoke = RevocationHandler(provider, auth)
            route = Route("/revoke", endpoint=cors_middleware(revoke.handle, ["POST", "OPTIONS"]),
                          methods=["POST", "OPTIONS"])
        out.append(route)
    return out
