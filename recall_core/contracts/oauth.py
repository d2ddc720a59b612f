"""What Recall's own OAuth 2.1 authorization server needs from storage
(`recall_core.server.oauth.builtin`), beyond `Storage`: an optional capability (`OAuthStorage`,
flag `Capabilities.oauth`). Both bundled backends implement it and
`recall_core.testing.oauth_contract.OAuthStorageContract` checks it on a real database.

Everything lives in the database, so several processes on one PostgreSQL share registered
clients, codes and tokens. Codes and tokens are stored as SHA-256 hashes only (like api
tokens); a client's document keeps a hash of its secret, never the secret.

A **grant** is what the owner approved on the consent page for one client: a namespace, an
optional agent, scopes. Redeeming its authorization code creates it (a second use of the code
revokes it), with its first access and
refresh token; each refresh rotates the pair inside the same grant (the token "family"). A
refresh token used a second time (stolen, or replayed) revokes the whole grant: OAuth 2.1
section 4.3.1's reuse detection. Revoking a grant (RFC 7009 endpoint, inspector, admin API,
CLI) makes every token of it answer 401 on the next request.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, NamedTuple, Protocol, runtime_checkable

TokenKind = Literal["access", "refresh"]


class OAuthGrant(NamedTuple):
    """What the owner approved for a client, and its state."""

    grant_id: str
    namespace: str
    #: None: the namespace's owner.
    agent: str | None
    #: Space-separated, e.g. "memory:read memory:write".
    scopes: str
    client_id: str
    client_name: str | None
    redirect_uri: str
    #: RFC 8707 resource the client asked for (the MCP endpoint), if any.
    resource: str | None = None
    created_at: datetime | None = None
    revoked_at: datetime | None = None
    #: When a token of the grant was last issued (at redemption or refresh).
    refreshed_at: datetime | None = None


class OAuthCode(NamedTuple):
    """An authorization code: single-use, short-lived. `grant` is what the code creates (its
    created_at and revoked_at are ignored). A redeemed code is kept until it expires, so that
    a second use is recognised (and revokes what the first use was given)."""

    code_hash: str
    grant: OAuthGrant
    code_challenge: str
    redirect_uri_explicit: bool
    expires_at: datetime
    redeemed: bool = False


class OAuthTokenRow(NamedTuple):
    """A token to store: its hash, kind and expiry (None: never)."""

    token_hash: str
    kind: TokenKind
    expires_at: datetime | None


class OAuthTokenGrant(NamedTuple):
    """A live token (unrevoked, unexpired, of an unrevoked grant) and the grant it belongs to."""

    kind: TokenKind
    expires_at: datetime | None
    grant: OAuthGrant


RotateOutcome = Literal["rotated", "reused", "unknown"]


@runtime_checkable
class OAuthStorage(Protocol):
    # -- registered clients (RFC 7591) -------------------------------------------------------
    async def save_oauth_client(self, client_id: str, document: str) -> None:
        """Store (or replace) a registered client's metadata, a JSON document core writes."""

    async def oauth_client(self, client_id: str) -> str | None:
        """The JSON document of a registered client, else None."""

    # -- authorization codes -------------------------------------------------------------------
    async def create_oauth_code(self, code: OAuthCode) -> None:
        """Store a code (by hash) minted when the owner approved the consent page; codes
        that expired before `code` was made may be deleted now."""

    async def oauth_code(self, code_hash: str) -> OAuthCode | None:
        """A stored code, redeemed or not, expired or not (the caller judges), else None."""

    async def redeem_oauth_code(self, code_hash: str, now: datetime,
                                tokens: Sequence[OAuthTokenRow]) -> OAuthGrant | None:
        """Atomically: redeem the code if it is unredeemed and `now` < its expiry, creating
        its grant with `tokens` in it, and return the grant. Else None: an unknown or expired
        code (an expired one is deleted), or one redeemed before, whose grant is then revoked
        with all its tokens (OAuth 2.1: a code used twice may have been stolen). So of several
        concurrent callers with one code at most one gets a grant, which is then revoked."""

    # -- tokens ----------------------------------------------------------------------------
    async def oauth_token(self, token_hash: str, kind: TokenKind, now: datetime
                          ) -> OAuthTokenGrant | None:
        """The live token of that kind with this hash: unrevoked, unexpired at `now`, in an
        unrevoked grant. Else None."""

    async def rotate_oauth_refresh(self, token_hash: str, now: datetime,
                                   tokens: Sequence[OAuthTokenRow]
                                   ) -> tuple[RotateOutcome, OAuthGrant | None]:
        """Refresh, atomically. A live refresh token: it and every other live token of its
        grant are revoked, `tokens` stored in the grant, ("rotated", grant). A refresh token of
        an unrevoked grant that was already rotated or revoked: the grant is revoked (reuse
        detection), ("reused", grant). Anything else: ("unknown", None). Of several concurrent
        callers with the same token at most one gets "rotated"."""

    # -- grants ----------------------------------------------------------------------------
    async def list_oauth_grants(self, namespace: str) -> list[OAuthGrant]:
        """The namespace's grants, revoked ones too, newest first."""

    async def revoke_oauth_grant(self, grant_id: str, namespace: str | None = None
                                 ) -> OAuthGrant | None:
        """Revoke an unrevoked grant (of `namespace`, when given) and every token in it.
        Returns the grant as it was, or None when no such unrevoked grant exists."""

    async def grant_of_oauth_token(self, token_hash: str) -> OAuthGrant | None:
        """The grant a token (access or refresh, live or not) belongs to, else None: RFC 7009
        revocation of a token revokes its grant."""
