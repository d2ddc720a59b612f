"""The OAuth capability (`recall_core.contracts.oauth.OAuthStorage`) on SQLite, mixed into
SQLiteStorage: registered clients, single-use codes, grants and their tokens. Every change of
more than one row runs in one BEGIN IMMEDIATE transaction, which also serialises concurrent
redemptions of one code (or refreshes of one token), across processes too."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from recall_core.contracts import (OAuthCode, OAuthGrant, OAuthTokenGrant, OAuthTokenRow,
                                   RotateOutcome)

from .codec import from_db, now_text, to_db
from .connection import Database

GRANT_COLUMNS = ("grant_id, namespace, agent, scopes, client_id, client_name, redirect_uri, "
                 "resource, created_at, revoked_at, refreshed_at")
_CODE_GRANT = "grant_id, namespace, agent, scopes, client_id, client_name, redirect_uri, resource"
_CODE_COLUMNS = (f"code_hash, {_CODE_GRANT}, code_challenge, redirect_uri_explicit, expires_at, "
                 f"redeemed_at")


def grant_from_row(r: Sequence[Any]) -> OAuthGrant:
    return OAuthGrant(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], from_db(r[8]),
                      from_db(r[9]), from_db(r[10]))


def _code_from_row(r: Sequence[Any]) -> OAuthCode:
    grant = OAuthGrant(*r[1:9])
    return OAuthCode(r[0], grant, r[9], bool(r[10]), from_db(r[11]),  # type: ignore[arg-type]
                     r[12] is not None)


async def _insert_tokens(db: Any, grant_id: str, tokens: Sequence[OAuthTokenRow],
                         now: str) -> None:
    await db.executemany(
        "INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [(t.token_hash, grant_id, t.kind, to_db(t.expires_at), now) for t in tokens])


async def _revoke_grant(db: Any, grant_id: str, now: str) -> None:
    await db.execute("UPDATE oauth_grants SET revoked_at = ? WHERE grant_id = ? "
                     "AND revoked_at IS NULL", (now, grant_id))
    await db.execute("UPDATE oauth_tokens SET revoked_at = ? WHERE grant_id = ? "
                     "AND revoked_at IS NULL", (now, grant_id))


class OAuthMethods:
    db: Database

    async def save_oauth_client(self, client_id: str, document: str) -> None:
        await self.db.write(
            "INSERT INTO oauth_clients (client_id, document, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (client_id) DO UPDATE SET document = excluded.document",
            (client_id, document, now_text()))

    async def oauth_client(self, client_id: str) -> str | None:
        row = await self.db.fetch_one(
            "SELECT document FROM oauth_clients WHERE client_id = ?", (client_id,))
        return row[0] if row else None

    async def create_oauth_code(self, code: OAuthCode) -> None:
        g = code.grant
        async with self.db.transaction() as db:
            # Expired codes (redeemed or not) can only ever be refused: gone.
            await db.execute("DELETE FROM oauth_codes WHERE expires_at <= ?", (now_text(),))
            await db.execute(
                f"INSERT INTO oauth_codes ({_CODE_COLUMNS}) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                (code.code_hash, g.grant_id, g.namespace, g.agent, g.scopes, g.client_id,
                 g.client_name, g.redirect_uri, g.resource, code.code_challenge,
                 int(code.redirect_uri_explicit), to_db(code.expires_at)))

    async def oauth_code(self, code_hash: str) -> OAuthCode | None:
        row = await self.db.fetch_one(
            f"SELECT {_CODE_COLUMNS} FROM oauth_codes WHERE code_hash = ?", (code_hash,))
        return _code_from_row(row) if row else None

    async def redeem_oauth_code(self, code_hash: str, now: datetime,
                                tokens: Sequence[OAuthTokenRow]) -> OAuthGrant | None:
        at = to_db(now)
        async with self.db.transaction() as db:
            cur = await db.execute(
                f"SELECT {_CODE_COLUMNS} FROM oauth_codes WHERE code_hash = ?", (code_hash,))
            row = await cur.fetchone()
            await cur.close()
            if row is None:
                return None
            code = _code_from_row(row)
            if code.redeemed:  # a second use: what the first one got is revoked
                await _revoke_grant(db, code.grant.grant_id, at)  # type: ignore[arg-type]
                return None
            if code.expires_at <= now:
                await db.execute("DELETE FROM oauth_codes WHERE code_hash = ?", (code_hash,))
                return None
            await db.execute("UPDATE oauth_codes SET redeemed_at = ? WHERE code_hash = ?",
                             (at, code_hash))
            g = code.grant
            await db.execute(
                f"INSERT INTO oauth_grants ({GRANT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                f"NULL, ?)", (*g[:8], at, at))
            await _insert_tokens(db, g.grant_id, tokens, at)  # type: ignore[arg-type]
            return g._replace(created_at=now, refreshed_at=now)

    async def oauth_token(self, token_hash: str, kind: str, now: datetime
                          ) -> OAuthTokenGrant | None:
        g_cols = ", ".join(f"g.{c.strip()}" for c in GRANT_COLUMNS.split(","))
        row = await self.db.fetch_one(
            f"SELECT t.expires_at, {g_cols} FROM oauth_tokens t "
            f"JOIN oauth_grants g ON g.grant_id = t.grant_id "
            f"WHERE t.token_hash = ? AND t.kind = ? AND t.revoked_at IS NULL "
            f"AND g.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?)",
            (token_hash, kind, to_db(now)))
        if row is None:
            return None
        return OAuthTokenGrant(kind, from_db(row[0]), grant_from_row(row[1:]))  # type: ignore[arg-type]

    async def rotate_oauth_refresh(self, token_hash: str, now: datetime,
                                   tokens: Sequence[OAuthTokenRow]
                                   ) -> tuple[RotateOutcome, OAuthGrant | None]:
        at = to_db(now)
        g_cols = ", ".join(f"g.{c.strip()}" for c in GRANT_COLUMNS.split(","))
        async with self.db.transaction() as db:
            cur = await db.execute(
                f"SELECT t.revoked_at, t.expires_at, {g_cols} FROM oauth_tokens t "
                f"JOIN oauth_grants g ON g.grant_id = t.grant_id "
                f"WHERE t.token_hash = ? AND t.kind = 'refresh'", (token_hash,))
            row = await cur.fetchone()
            await cur.close()
            if row is None:
                return "unknown", None
            grant = grant_from_row(row[2:])
            if grant.revoked_at is not None:
                return "unknown", None
            if row[0] is not None:  # rotated before: a replay revokes the family
                await _revoke_grant(db, grant.grant_id, at)  # type: ignore[arg-type]
                return "reused", grant._replace(revoked_at=now)
            if row[1] is not None and row[1] <= at:
                return "unknown", None
            await db.execute("UPDATE oauth_tokens SET revoked_at = ? WHERE grant_id = ? "
                             "AND revoked_at IS NULL", (at, grant.grant_id))
            await _insert_tokens(db, grant.grant_id, tokens, at)  # type: ignore[arg-type]
            await db.execute("UPDATE oauth_grants SET refreshed_at = ? WHERE grant_id = ?",
                             (at, grant.grant_id))
            return "rotated", grant._replace(refreshed_at=now)

    async def list_oauth_grants(self, namespace: str) -> list[OAuthGrant]:
        rows = await self.db.fetch(
            f"SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE namespace = ? "
            f"ORDER BY created_at DESC, grant_id", (namespace,))
        return [grant_from_row(r) for r in rows]

    async def revoke_oauth_grant(self, grant_id: str, namespace: str | None = None
                                 ) -> OAuthGrant | None:
        at = now_text()
        async with self.db.transaction() as db:
            cur = await db.execute(
                f"SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE grant_id = ? "
                f"AND revoked_at IS NULL AND (? IS NULL OR namespace = ?)",
                (grant_id, namespace, namespace))
            row = await cur.fetchone()
            await cur.close()
            if row is None:
                return None
            await _revoke_grant(db, grant_id, at)  # type: ignore[arg-type]
            return grant_from_row(row)

    async def grant_of_oauth_token(self, token_hash: str) -> OAuthGrant | None:
        row = await self.db.fetch_one(
            f"SELECT {', '.join('g.' + c.strip() for c in GRANT_COLUMNS.split(','))} "
            f"FROM oauth_tokens t JOIN oauth_grants g ON g.grant_id = t.grant_id "
            f"WHERE t.token_hash = ?", (token_hash,))
        return grant_from_row(row) if row else None
