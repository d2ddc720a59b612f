"""Recall's own OAuth 2.1 authorization server ([oauth] mode = "builtin"), for one user on their
own machine or behind their own TLS proxy.

FastMCP's `OAuthProvider` base mounts the MCP SDK's handlers (metadata, /authorize, /token,
/register, /revoke: PKCE S256, exact redirect URIs, client authentication); this subclass keeps
their state in Recall's storage (`OAuthStorage`), so several processes on one PostgreSQL share
it. `authorize` sends the browser to the inspector's consent page (`consent.py`), where the
signed-in owner picks namespace, agent and scopes; approving mints the code.

Tokens: access tokens `rco_...` (short-lived, [oauth] access_token_ttl_seconds), refresh tokens
`rcr_...`, rotated on every refresh; presenting a rotated refresh token again revokes the whole
grant (reuse detection). Only SHA-256 hashes are stored. Any other bearer token goes to the
static verifier, so `recall create-token` tokens keep working beside OAuth.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

from fastmcp.server.auth import AccessToken, OAuthProvider
from mcp.server.auth.provider import (AuthorizationCode, AuthorizationParams, AuthorizeError,
                                      RefreshToken, TokenError)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from ...access.principal import ALL_SCOPES, SCOPE_ORDER, Principal
from ...admin.oauth_grants import audit, grant_detail
from ...admin.tokens import hash_token
from ...config import OAuthSettings
from ...contracts import OAuthGrant, OAuthTokenRow
from ...errors import ConfigError
from ..auth import grant_access_token
from .builtin_clients import client_document, client_from_document, token_and_revoke_routes

ACCESS_PREFIX = "rco_"
REFRESH_PREFIX = "rcr_"
CODE_PREFIX = "rcc_"
CONSENT_PATH = "/ui/oauth/consent"


def _now() -> datetime:
    return datetime.now(timezone.utc)


def same_resource(a: str | None, b: str | None) -> bool:
    return (a or "").rstrip("/") == (b or "").rstrip("/")


class RecallAuthServer(OAuthProvider):
    def __init__(self, storage: Any, settings: OAuthSettings, *, base_url: str,
                 resource_url: str, static_verifier: Any = None):
        super().__init__(
            base_url=base_url, issuer_url=settings.issuer_url or base_url,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=list(SCOPE_ORDER), default_scopes=list(SCOPE_ORDER)),
            revocation_options=RevocationOptions(enabled=True))
        self.storage = storage
        self.settings = settings
        self.resource = resource_url
        self.static_verifier = static_verifier

    # -- clients (RFC 7591) -----------------------------------------------------------------
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        document = await self.storage.oauth_client(client_id)
        return client_from_document(document) if document else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None  # the SDK's handler mints it
        await self.storage.save_oauth_client(client_info.client_id, client_document(client_info))

    # -- authorization: to the consent page --------------------------------------------------
    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        if params.resource is not None and not same_resource(params.resource, self.resource):
            raise AuthorizeError("invalid_target", f"resource {params.resource!r} is not this "
                                 f"server's MCP endpoint; use {self.resource!r}.")
        query = {"client_id": client.client_id, "redirect_uri": str(params.redirect_uri),
                 "explicit": "1" if params.redirect_uri_provided_explicitly else "0",
                 "code_challenge": params.code_challenge,
                 "scope": " ".join(params.scopes or SCOPE_ORDER)}
        for key in ("state", "resource"):
            if getattr(params, key) is not None:
                query[key] = getattr(params, key)
        return f"{str(self.base_url).rstrip('/')}{CONSENT_PATH}?{urlencode(query)}"

    # -- codes -----------------------------------------------------------------------------
    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        code = await self.storage.oauth_code(hash_token(authorization_code))
        if code is None or code.grant.client_id != client.client_id:
            return None
        g = code.grant
        return AuthorizationCode(
            code=authorization_code, scopes=g.scopes.split(), client_id=g.client_id,
            expires_at=code.expires_at.timestamp(), code_challenge=code.code_challenge,
            redirect_uri=g.redirect_uri, redirect_uri_provided_explicitly=code.redirect_uri_explicit,
            resource=g.resource, subject=g.namespace)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        raw, rows = self._mint()
        digest = hash_token(authorization_code.code)
        grant = await self.storage.redeem_oauth_code(digest, _now(), rows)
        if grant is None:
            used = await self.storage.oauth_code(digest)
            if used is not None and used.redeemed:
                await audit(self.storage, f"oauth-client:{client.client_id}", "oauth_code_reuse",
                            used.grant.namespace, grant_detail(used.grant),
                            error="an authorization code was used twice: its grant is revoked")
            raise TokenError("invalid_grant", "authorization code was already used or has "
                             "expired; start the authorization again.")
        await audit(self.storage, f"oauth-client:{grant.client_id}", "oauth_token",
                    grant.namespace, grant_detail(grant))
        return self._token_response(raw, grant)

    # -- refresh tokens: rotated, reuse revokes the family ---------------------------------
    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        # A rotated token is returned too, so that exchange_refresh_token sees the replay.
        if not refresh_token.startswith(REFRESH_PREFIX):
            return None
        grant = await self.storage.grant_of_oauth_token(hash_token(refresh_token))
        if grant is None or grant.revoked_at is not None or grant.client_id != client.client_id:
            return None
        return RefreshToken(token=refresh_token, client_id=grant.client_id,
                            scopes=grant.scopes.split(), resource=grant.resource,
                            subject=grant.namespace)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        if set(scopes) != set(refresh_token.scopes):
            raise TokenError("invalid_scope", "a refresh keeps the scopes the owner granted; "
                             "to change them, authorize again.")
        raw, rows = self._mint()
        outcome, grant = await self.storage.rotate_oauth_refresh(
            hash_token(refresh_token.token), _now(), rows)
        actor = f"oauth-client:{client.client_id}"
        if outcome == "reused" and grant is not None:
            await audit(self.storage, actor, "oauth_refresh_reuse", grant.namespace,
                        grant_detail(grant), error="a rotated refresh token was presented "
                        "again: the grant is revoked")
            raise TokenError("invalid_grant", "this refresh token was already used, so the "
                             "grant is revoked (refresh token reuse); authorize again.")
        if outcome != "rotated" or grant is None:
            raise TokenError("invalid_grant", "refresh token is unknown, expired or revoked; "
                             "authorize again.")
        await audit(self.storage, actor, "oauth_refresh", grant.namespace, grant_detail(grant))
        return self._token_response(raw, grant)

    # -- access tokens -----------------------------------------------------------------------
    async def load_access_token(self, token: str) -> AccessToken | None:  # type: ignore[override]
        if not token.startswith(ACCESS_PREFIX):
            return None
        live = await self.storage.oauth_token(hash_token(token), "access", _now())
        if live is None:
            return None
        g = live.grant
        scopes = frozenset(g.scopes.split()) & ALL_SCOPES
        if not scopes:
            return None
        made = grant_access_token(
            token, Principal(g.namespace, g.agent, scopes), resource=g.resource,
            subject=g.namespace,
            expires_at=int(live.expires_at.timestamp()) if live.expires_at else None)
        # client_id is the OAuth client (the SDK's revocation compares it); the namespace
        # and agent travel as claims, which current_principal reads.
        return made.model_copy(update={
            "client_id": g.client_id,
            "claims": {**made.claims, "grant_id": g.grant_id, "oauth_client": g.client_id}})

    async def verify_token(self, token: str) -> AccessToken | None:
        if token.startswith(ACCESS_PREFIX):
            return await self.load_access_token(token)
        if self.static_verifier is not None:
            return await self.static_verifier.verify_token(token)
        return None

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:  # type: ignore[override]
        grant = await self.storage.grant_of_oauth_token(hash_token(token.token))
        if grant is None:
            return
        revoked = await self.storage.revoke_oauth_grant(grant.grant_id)
        if revoked is not None:
            await audit(self.storage, f"oauth-client:{grant.client_id}", "oauth_revoke",
                        grant.namespace, grant_detail(revoked))

    def get_routes(self, mcp_path: str | None = None) -> list[Any]:
        return token_and_revoke_routes(self, super().get_routes(mcp_path))

    # -- helpers -----------------------------------------------------------------------------
    def _mint(self) -> tuple[dict[str, str], list[OAuthTokenRow]]:
        s, now = self.settings, _now()
        raw = {"access": ACCESS_PREFIX + secrets.token_urlsafe(32),
               "refresh": REFRESH_PREFIX + secrets.token_urlsafe(32)}
        refresh_expiry = (now + timedelta(seconds=s.refresh_token_ttl_seconds)
                          if s.refresh_token_ttl_seconds else None)
        return raw, [
            OAuthTokenRow(hash_token(raw["access"]), "access",
                          now + timedelta(seconds=s.access_token_ttl_seconds)),
            OAuthTokenRow(hash_token(raw["refresh"]), "refresh", refresh_expiry)]

    def _token_response(self, raw: dict[str, str], grant: OAuthGrant) -> OAuthToken:
        return OAuthToken(access_token=raw["access"], token_type="Bearer",
                          expires_in=self.settings.access_token_ttl_seconds,
                          refresh_token=raw["refresh"], scope=grant.scopes)


def base_url_of(config: Any) -> str:
    """The server's own base URL: public_url, else http://host:port (loopback for a wildcard
    bind). The issuer defaults to it."""
    if config.public_url:
        return config.public_url.rstrip("/")
    host = config.host.strip("[]")
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if not config.port:
        raise ConfigError("[oauth] mode = \"builtin\" needs a known address: set public_url "
                          "(e.g. https://recall.example.org) or a fixed --port, not 0.")
    return f"http://{f'[{host}]' if ':' in host else host}:{config.port}"


def build_provider(runtime: Any, static_verifier: Any, base_url: str | None = None, *,
                   resource_url: str | None = None) -> RecallAuthServer:
    """The built-in authorization server for `runtime`, accepting `static_verifier`'s tokens
    too. Called by the one place that builds FastMCP's auth object (oauth/compose.py), with
    the resolved public MCP URL as `resource_url`: the base is that URL without /mcp."""
    if resource_url and base_url is None and resource_url.rstrip("/").endswith("/mcp"):
        base_url = resource_url.rstrip("/")[: -len("/mcp")]
    storage = runtime.storage
    if not storage.capabilities.oauth or not storage.capabilities.admin:
        raise ConfigError(
            f"[oauth] mode = \"builtin\" keeps clients, codes and tokens in storage and asks "
            f"for consent in the inspector, but the storage backend ({storage.description}) "
            f"lacks the oauth or admin capability. Use the SQLite or PostgreSQL backend, or "
            f"set [oauth] mode = \"off\" or \"external\".")
    settings = runtime.config.oauth
    base = (base_url or base_url_of(runtime.config)).rstrip("/")
    resource = (resource_url or settings.resource_url or f"{base}/mcp").rstrip("/")
    return RecallAuthServer(storage, settings, base_url=base, resource_url=resource,
                            static_verifier=static_verifier)


def code_expiry(settings: OAuthSettings) -> datetime:
    return _now() + timedelta(seconds=settings.code_ttl_seconds)


def new_code() -> str:
    return CODE_PREFIX + secrets.token_urlsafe(32)

