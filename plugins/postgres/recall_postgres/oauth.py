"""The OAuth capability (`recall_core.contracts.oauth.OAuthStorage`) on PostgreSQL, mixed into
PostgresStorage: registered clients, single-use codes, grants and their tokens. Several
processes share them: redeeming a code locks its row (`FOR UPDATE`), so of several concurrent
redeemers one redeems it and the others see a second use; a refresh locks its token's grant
row, so two refreshes with one token cannot both rotate."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from recall_core.contracts import (OAuthCode, OAuthGrant, OAuthTokenGrant, OAuthTokenRow,
                                   RotateOutcome)

from .retry import in_transaction
from .rows import aware

_GRANT = ("grant_id", "namespace", "agent", "scopes", "client_id", "client_name",
          "redirect_uri", "resource", "created_at", "revoked_at", "refreshed_at")
GRANT_COLUMNS = ", ".join(_GRANT)
G_COLUMNS = ", ".join(f"g.{c}" for c in _GRANT)
_CODE_COLUMNS = ("code_hash, grant_id, namespace, agent, scopes, client_id, client_name, "
                 "redirect_uri, resource, code_challenge, redirect_uri_explicit, expires_at, "
                 "redeemed_at")


def grant_from_row(r: Any, offset: int = 0) -> OAuthGrant:
    v = [r[offset + i] for i in range(len(_GRANT))]
    return OAuthGrant(*v[:8], aware(v[8]), aware(v[9]), aware(v[10]))


def _code_from_row(r: Any) -> OAuthCode:
    grant = OAuthGrant(*[r[i] for i in range(1, 9)])
    return OAuthCode(r[0], grant, r[9], bool(r[10]), aware(r[11]),  # type: ignore[arg-type]
                     r[12] is not None)


async def _insert_tokens(con: asyncpg.Connection, grant_id: str,
                         tokens: Sequence[OAuthTokenRow], now: datetime) -> None:
    await con.executemany(
        "INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at, created_at) "
        "VALUES ($1, $2, $3, $4, $5)",
        [(t.token_hash, grant_id, t.kind, t.expires_at, now) for t in tokens])


async def _revoke_grant(con: asyncpg.Connection, grant_id: str, now: datetime) -> None:
    await con.execute("UPDATE oauth_grants SET revoked_at = $2 WHERE grant_id = $1 "
                      "AND revoked_at IS NULL", grant_id, now)
    await con.execute("UPDATE oauth_tokens SET revoked_at = $2 WHERE grant_id = $1 "
                      "AND revoked_at IS NULL", grant_id, now)


class OAuthMethods:
    pool: asyncpg.Pool

    async def save_oauth_client(self, client_id: str, document: str) -> None:
        await self.pool.execute(
            "INSERT INTO oauth_clients (client_id, document) VALUES ($1, $2) "
            "ON CONFLICT (client_id) DO UPDATE SET document = excluded.document",
            client_id, document)

    async def oauth_client(self, client_id: str) -> str | None:
        return await self.pool.fetchval(
            "SELECT document FROM oauth_clients WHERE client_id = $1", client_id)

    async def create_oauth_code(self, code: OAuthCode) -> None:
        g = code.grant

        async def body(con: asyncpg.Connection) -> None:
            # Expired codes (redeemed or not) can only ever be refused: gone.
            await con.execute("DELETE FROM oauth_codes WHERE expires_at <= clock_timestamp()")
            await con.execute(
                f"INSERT INTO oauth_codes ({_CODE_COLUMNS}) "
                f"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL)",
                code.code_hash, *g[:8], code.code_challenge, code.redirect_uri_explicit,
                code.expires_at)

        await in_transaction(self.pool, body)

    async def oauth_code(self, code_hash: str) -> OAuthCode | None:
        row = await self.pool.fetchrow(
            f"SELECT {_CODE_COLUMNS} FROM oauth_codes WHERE code_hash = $1", code_hash)
        return _code_from_row(row) if row else None

    async def redeem_oauth_code(self, code_hash: str, now: datetime,
                                tokens: Sequence[OAuthTokenRow]) -> OAuthGrant | None:
        async def body(con: asyncpg.Connection) -> OAuthGrant | None:
            # The row lock makes concurrent redeemers of one code take turns.
            row = await con.fetchrow(
                f"SELECT {_CODE_COLUMNS} FROM oauth_codes WHERE code_hash = $1 FOR UPDATE",
                code_hash)
            if row is None:
                return None
            code = _code_from_row(row)
            if code.redeemed:  # a second use: what the first one got is revoked
                await _revoke_grant(con, code.grant.grant_id, now)
                return None
            if code.expires_at <= now:
                await con.execute("DELETE FROM oauth_codes WHERE code_hash = $1", code_hash)
                return None
            await con.execute("UPDATE oauth_codes SET redeemed_at = $2 WHERE code_hash = $1",
                              code_hash, now)
            g = code.grant
            await con.execute(
                f"INSERT INTO oauth_grants ({GRANT_COLUMNS}) "
                f"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $9)", *g[:8], now)
            await _insert_tokens(con, g.grant_id, tokens, now)
            return g._replace(created_at=now, refreshed_at=now)

        return await in_transaction(self.pool, body)

    async def oauth_token(self, token_hash: str, kind: str, now: datetime
                          ) -> OAuthTokenGrant | None:
        row = await self.pool.fetchrow(
            f"SELECT t.expires_at, {G_COLUMNS} FROM oauth_tokens t "
            f"JOIN oauth_grants g ON g.grant_id = t.grant_id "
            f"WHERE t.token_hash = $1 AND t.kind = $2 AND t.revoked_at IS NULL "
            f"AND g.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $3)",
            token_hash, kind, now)
        if row is None:
            return None
        return OAuthTokenGrant(kind, aware(row[0]), grant_from_row(row, 1))  # type: ignore[arg-type]

    async def rotate_oauth_refresh(self, token_hash: str, now: datetime,
                                   tokens: Sequence[OAuthTokenRow]
                                   ) -> tuple[RotateOutcome, OAuthGrant | None]:
        async def body(con: asyncpg.Connection) -> tuple[RotateOutcome, OAuthGrant | None]:
            grant_id = await con.fetchval(
                "SELECT grant_id FROM oauth_tokens WHERE token_hash = $1 AND kind = 'refresh'",
                token_hash)
            if grant_id is None:
                return "unknown", None
            # The grant row is the family's lock: refreshes of one grant take turns.
            grow = await con.fetchrow(
                f"SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE grant_id = $1 FOR UPDATE",
                grant_id)
            grant = grant_from_row(grow)
            trow = await con.fetchrow(
                "SELECT revoked_at, expires_at FROM oauth_tokens WHERE token_hash = $1",
                token_hash)
            if grant.revoked_at is not None:
                return "unknown", None
            if trow["revoked_at"] is not None:  # rotated before: a replay revokes the family
                await _revoke_grant(con, grant_id, now)
                return "reused", grant._replace(revoked_at=now)
            if trow["expires_at"] is not None and trow["expires_at"] <= now:
                return "unknown", None
            await con.execute("UPDATE oauth_tokens SET revoked_at = $2 WHERE grant_id = $1 "
                              "AND revoked_at IS NULL", grant_id, now)
            await _insert_tokens(con, grant_id, tokens, now)
            await con.execute("UPDATE oauth_grants SET refreshed_at = $2 WHERE grant_id = $1",
                              grant_id, now)
            return "rotated", grant._replace(refreshed_at=now)

        return await in_transaction(self.pool, body)

    async def list_oauth_grants(self, namespace: str) -> list[OAuthGrant]:
        rows = await self.pool.fetch(
            f"SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE namespace = $1 "
            f"ORDER BY created_at DESC, grant_id", namespace)
        return [grant_from_row(r) for r in rows]

    async def revoke_oauth_grant(self, grant_id: str, namespace: str | None = None
                                 ) -> OAuthGrant | None:
        async def body(con: asyncpg.Connection) -> OAuthGrant | None:
            row = await con.fetchrow(
                f"SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE grant_id = $1 "
                f"AND revoked_at IS NULL AND ($2::text IS NULL OR namespace = $2) FOR UPDATE",
                grant_id, namespace)
            if row is None:
                return None
            await _revoke_grant(con, grant_id, await con.fetchval("SELECT clock_timestamp()"))
            return grant_from_row(row)

        return await in_transaction(self.pool, body)

    async def grant_of_oauth_token(self, token_hash: str) -> OAuthGrant | None:
        row = await self.pool.fetchrow(
            f"SELECT {G_COLUMNS} FROM oauth_tokens t "
            f"JOIN oauth_grants g ON g.grant_id = t.grant_id WHERE t.token_hash = $1",
            token_hash)
        return grant_from_row(row) if row else None
