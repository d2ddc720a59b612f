"""The one place the server's authentication is built from `[oauth]` in recall.toml.

    mode = "off"       FastMCP auth = StorageTokenVerifier (static tokens from
                       `recall create-token`); 401s carry no OAuth hints.
    mode = "external"  FastMCP's MultiAuth: a RemoteAuthProvider around the external issuer's
                       JWTs (JWKS, issuer, audience = this resource, claims -> Principal; it
                       also serves the RFC 9728 metadata) and, beside it, the static tokens.
    mode = "builtin"   Recall's own authorization server: `builtin.build_provider(runtime,
                       static_verifier)` (it accepts the static tokens too).

The result, `ServerAuth`, is what the HTTP app uses for /mcp (FastMCP's `auth=`, the 401 and
403 answers, the well-known routes) and for /a2a (`authenticate`): one verifier, one mapping
to the Principal, one challenge for both.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fastmcp.server.auth import AccessToken, AuthProvider, MultiAuth, RemoteAuthProvider
from mcp.server.auth.routes import build_resource_metadata_url
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ...access.principal import SCOPE_ORDER
from ...errors import ConfigError
from ..auth import StorageTokenVerifier, unauthorized_response
from .challenge import Challenge, ScopeFloor, has_recall_scope
from .discovery import discover_jwks_uri, discovery_urls
from .external import ClaimMapping, ExternalVerifier

log = logging.getLogger("recall")

MCP_PATH = "/mcp"
PRM_PATH = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class Verified:
    """A request's verified credential; `static` when it is a `recall create-token` token
    (those have a stored hash that A2A re-checks before writing a task)."""

    access: AccessToken
    static: bool


@dataclass(frozen=True)
class OAuthAdvert:
    """Where clients that only see Recall's A2A agent card get an OAuth token: `kind`
    "oidc" (an external issuer's discovery document) or "oauth2" (the built-in server's
    RFC 8414 metadata) at `metadata_url`, for the audience `resource`."""

    kind: str
    metadata_url: str
    resource: str


@dataclass
class ServerAuth:
    mode: str
    #: FastMCP's `auth=` for /mcp.
    provider: AuthProvider
    static: StorageTokenVerifier
    #: None when mode = "off": the 401 stays server/auth.py's, without OAuth hints.
    challenge: Challenge | None = None
    #: For the outer app: the RFC 9728 metadata (and, builtin, the authorization server).
    routes: list[BaseRoute] = field(default_factory=list)
    #: Inside FastMCP's /mcp app, after its authentication middleware.
    mcp_middleware: list[Middleware] = field(default_factory=list)
    #: For the A2A agent card (None: OAuth off, the card names the static bearer scheme only).
    advert: OAuthAdvert | None = None

    def unauthorized(self, authorization: str) -> Response:
        """The 401 of /mcp and /a2a for this Authorization header."""
        if self.challenge is None:
            return unauthorized_response(authorization)
        return self.challenge.unauthorized(authorization)

    async def authenticate(self, authorization: str) -> Verified | Response:
        """The credential behind an Authorization header (A2A; FastMCP does the same for
        /mcp through `provider`), or the 401/403 to answer."""
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return self.unauthorized(authorization)
        access = await self.static.verify_token(token)
        static = access is not None
        if access is None and self.provider is not self.static:
            access = await self.provider.verify_token(token)
        if access is None:
            return self.unauthorized(authorization)
        if self.challenge is not None and not has_recall_scope(access.scopes):
            granted = (access.claims.get("oauth") or {}).get("scope", "")
            return self.challenge.forbidden(granted.split())
        return Verified(access, static)


async def compose_auth(runtime: Any, public_url: str | None) -> ServerAuth:
    """The server's auth for `runtime.config.oauth`; ConfigError when it cannot work."""
    settings = runtime.config.oauth
    static = StorageTokenVerifier(runtime.storage)
    if settings.mode == "off":
        return ServerAuth("off", static, static)
    resource = resource_url(settings.resource_url, public_url)
    if settings.mode == "external":
        provider = await external_provider(settings, resource, static)
        source = f"the issuer {settings.issuer}"
        advert = OAuthAdvert("oidc", discovery_urls(settings.issuer)[0], resource)
    else:
        provider = await builtin_provider(runtime, static, resource)
        source = "this server's authorization server"
        advert = OAuthAdvert("oauth2", authorization_server_metadata(provider, resource),
                             resource)
    challenge = Challenge(resource, str(build_resource_metadata_url(resource)), source)
    log.info("OAuth %s: tokens from %s for the resource %s (metadata at %s), and static "
             "tokens from `recall create-token`", settings.mode, source, resource,
             challenge.metadata_url)
    return ServerAuth(settings.mode, provider, static, challenge,
                      routes=outer_routes(provider),
                      mcp_middleware=[Middleware(ScopeFloor, challenge=challenge)],
                      advert=advert)


def resource_url(configured: str, public_url: str | None) -> str:
    """This server's MCP URL as OAuth names it: `oauth.resource_url`, else public_url + /mcp.
    Its path ends in /mcp (a proxy may put a prefix before it)."""
    resource = configured.rstrip("/") if configured else ""
    if not resource:
        if not public_url:
            raise ConfigError("[oauth] needs this server's public MCP URL: set "
                              "oauth.resource_url (e.g. \"https://recall.example.com/mcp\") "
                              "or public_url.")
        resource = public_url.rstrip("/") + MCP_PATH
    if not urlsplit(resource).path.endswith(MCP_PATH):
        raise ConfigError(f"oauth.resource_url {configured!r} must be the URL of this "
                          f"server's MCP endpoint, ending in {MCP_PATH} (e.g. "
                          f"\"https://recall.example.com/mcp\").")
    return resource


async def external_provider(settings: Any, resource: str,
                            static: StorageTokenVerifier) -> AuthProvider:
    """MultiAuth(RemoteAuthProvider(JWTs from `settings.issuer`), static tokens)."""
    from fastmcp.server.auth.providers.jwt import JWTVerifier

    if not settings.issuer:
        raise ConfigError("oauth.mode = \"external\" needs oauth.issuer: the OIDC issuer URL "
                          "exactly as the tokens' 'iss' (e.g. "
                          "\"https://sso.example.com/realms/recall\").")
    jwks_uri = settings.jwks_uri or await discover_jwks_uri(settings.issuer)
    try:
        jwt = JWTVerifier(jwks_uri=jwks_uri, issuer=settings.issuer,
                          audience=settings.audience or resource, algorithm=settings.algorithm)
    except ValueError as exc:
        raise ConfigError(f"[oauth] cannot verify the issuer's tokens: {exc}") from None
    mapping = ClaimMapping(settings.namespace_claim, settings.agent_claim,
                           settings.scopes_claim)
    base = resource[: -len(MCP_PATH)]
    remote = RemoteAuthProvider(
        token_verifier=ExternalVerifier(jwt, mapping, settings.issuer),
        # A string, not AnyHttpUrl: the metadata model keeps it as written (no "/" added to
        # a bare host), and clients compare it with the issuer's own metadata.
        authorization_servers=[settings.issuer],  # type: ignore[list-item]
        base_url=base, resource_base_url=base, scopes_supported=list(SCOPE_ORDER),
        resource_name="Recall")
    return MultiAuth(server=remote, verifiers=[static])


async def builtin_provider(runtime: Any, static: StorageTokenVerifier,
                           resource: str) -> AuthProvider:
    """mode = "builtin": `recall_core.server.oauth.builtin.build_provider(runtime, static)`
    (given `resource_url=` too when it takes it: the resolved public MCP URL, which the
    config alone does not know when public_url defaults to the listening address)."""
    try:
        module = importlib.import_module(f"{__package__}.builtin")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.builtin":
            raise
        raise ConfigError("oauth.mode = \"builtin\" (Recall's own authorization server) is "
                          "not part of this build. Use mode = \"external\" with your identity "
                          "provider, or mode = \"off\" (static tokens).") from None
    build = module.build_provider
    wants_resource = "resource_url" in inspect.signature(build).parameters
    provider = build(runtime, static, **({"resource_url": resource} if wants_resource else {}))
    return await provider if inspect.isawaitable(provider) else provider


def authorization_server_metadata(provider: AuthProvider, resource: str) -> str:
    """The RFC 8414 metadata URL of the built-in server: its issuer (an OAuthProvider's
    `issuer_url`, also inside a MultiAuth), else this server's base URL."""
    issuer = getattr(provider, "issuer_url", None) or getattr(
        getattr(provider, "server", None), "issuer_url", None) or resource[: -len(MCP_PATH)]
    parts = urlsplit(str(issuer).rstrip("/"))
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-authorization-server{parts.path}"


def outer_routes(provider: AuthProvider) -> list[BaseRoute]:
    """The provider's routes for the outer app (they are unreachable inside FastMCP's /mcp
    app, which is routed at /mcp only), plus the protected-resource metadata at the paths MCP
    clients try: /.well-known/oauth-protected-resource/mcp, then the bare one."""
    routes = list(provider.get_routes(mcp_path=MCP_PATH))
    paths = {getattr(r, "path", None) for r in routes}
    metadata = [r for r in routes if isinstance(r, Route) and r.path.startswith(PRM_PATH)]
    for alias in (PRM_PATH + MCP_PATH, PRM_PATH):
        if metadata and alias not in paths:
            first = metadata[0]
            routes.append(Route(alias, endpoint=first.endpoint,
                                methods=sorted(first.methods or ("GET",))))
    return routes
