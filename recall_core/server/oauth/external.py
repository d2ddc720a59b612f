"""Tokens from an external OpenID Connect issuer (Keycloak, Authentik, Auth0, Entra, ...):
FastMCP's `JWTVerifier` checks the signature against the issuer's JWKS, the issuer, the
audience and the expiry; `ClaimMapping` turns the verified claims into Recall's Principal.

The mapping refuses rather than guesses: a namespace claim that is missing or not a plain
name makes the token invalid (401), and a token without any of Recall's scopes keeps an empty
scope set, which the HTTP layer answers with 403 insufficient_scope (`challenge.ScopeFloor`):
a token never gets powers it was not given.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastmcp.server.auth import AccessToken, TokenVerifier

from ...access.principal import ALL_SCOPES, Principal, valid_agent_name
from ...admin.service import valid_namespace_name
from ...errors import InvalidParam
from ..auth import grant_access_token

log = logging.getLogger("recall")

#: The claim an OAuth-issued AccessToken carries besides namespace and agent: where it came
#: from. A2A reads it to tell a JWT from a static token (only the latter has a stored hash).
OAUTH_CLAIM = "oauth"


class ClaimError(ValueError):
    """A verified token whose claims do not name a Recall principal."""


@dataclass(frozen=True)
class ClaimMapping:
    """Which claims name the namespace, the agent and the scopes (`[oauth]` in recall.toml)."""

    namespace_claim: str = "sub"
    agent_claim: str = ""
    scopes_claim: str = "scope"

    def principal(self, claims: dict[str, Any]) -> Principal:
        """The principal the claims prove; ClaimError when they name none."""
        namespace = claims.get(self.namespace_claim)
        if not isinstance(namespace, str) or not namespace:
            raise ClaimError(f"the token has no string claim {self.namespace_claim!r} "
                             f"(oauth.namespace_claim) to name its namespace")
        try:
            valid_namespace_name(namespace)
            agent = valid_agent_name(claims.get(self.agent_claim)) if self.agent_claim else None
        except InvalidParam as exc:
            raise ClaimError(str(exc)) from None
        return Principal(namespace, agent, self.scopes(claims))

    def scopes(self, claims: dict[str, Any]) -> frozenset[str]:
        """The token's scopes that are Recall's; anything else (openid, profile) is ignored.
        Empty when the token grants none of them: never all powers by default."""
        raw = claims.get(self.scopes_claim)
        if isinstance(raw, str):
            items = raw.split()
        elif isinstance(raw, list):
            items = [s for s in raw if isinstance(s, str)]
        else:
            items = []
        return frozenset(items) & ALL_SCOPES


class ExternalVerifier(TokenVerifier):
    """A TokenVerifier for the external issuer's JWTs: `jwt` verifies, `mapping` maps.

    Tokens without `exp` are refused: an access token that never expires cannot be taken
    back short of rotating the issuer's keys."""

    def __init__(self, jwt: TokenVerifier, mapping: ClaimMapping, issuer: str):
        super().__init__()
        self.jwt = jwt
        self.mapping = mapping
        self.issuer = issuer

    async def verify_token(self, token: str) -> AccessToken | None:
        verified = await self.jwt.verify_token(token)
        if verified is None:
            return None
        claims = verified.claims
        if claims.get("exp") is None:
            log.warning("OAuth token from %s refused: it has no 'exp' claim", self.issuer)
            return None
        try:
            principal = self.mapping.principal(claims)
        except ClaimError as exc:
            log.warning("OAuth token from %s refused: %s", self.issuer, exc)
            return None
        token_scopes = self.raw_scopes(claims)
        access = grant_access_token(token, principal, expires_at=verified.expires_at,
                                    subject=claims.get("sub"))
        access.claims[OAUTH_CLAIM] = {"iss": claims.get("iss"), "sub": claims.get("sub"),
                                      "client_id": claims.get("client_id") or claims.get("azp"),
                                      "scope": token_scopes}
        return access

    def raw_scopes(self, claims: dict[str, Any]) -> str:
        """The token's own scope text (for the 403 that says what the token did carry)."""
        raw = claims.get(self.mapping.scopes_claim)
        if isinstance(raw, list):
            return " ".join(s for s in raw if isinstance(s, str))
        return raw if isinstance(raw, str) else ""
