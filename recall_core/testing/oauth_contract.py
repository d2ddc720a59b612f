"""`OAuthStorageContract`: conformance tests of the OAuth capability
(`recall_core.contracts.oauth.OAuthStorage`) that Recall's own authorization server needs.

    class TestMyOAuth(OAuthStorageContract):
        def make_storage(self, location):
            return MyStorage(location)

Same fixtures as `AdminStorageContract`; everything goes through public methods.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from datetime import timedelta
from typing import Any

import pytest

from ..admin.tokens import hash_token
from ..contracts import OAuthCode, OAuthGrant, OAuthStorage, OAuthTokenRow
from ..models import utcnow
from .admin_contract import AdminStorageContract


def grant(namespace: str = "alice", agent: str | None = None,
          scopes: str = "memory:read memory:write") -> OAuthGrant:
    return OAuthGrant(secrets.token_hex(8), namespace, agent, scopes, "client-1", "Test client",
                      "http://127.0.0.1:9/callback", "http://127.0.0.1:8765/mcp")


def code_for(g: OAuthGrant, seconds: float = 300) -> tuple[str, OAuthCode]:
    raw = secrets.token_urlsafe(32)
    return raw, OAuthCode(hash_token(raw), g, "challenge", True,
                          utcnow() + timedelta(seconds=seconds))


def pair(access_seconds: float = 3600) -> tuple[dict[str, str], list[OAuthTokenRow]]:
    raw = {"access": secrets.token_urlsafe(32), "refresh": secrets.token_urlsafe(32)}
    return raw, [OAuthTokenRow(hash_token(raw["access"]), "access",
                               utcnow() + timedelta(seconds=access_seconds)),
                 OAuthTokenRow(hash_token(raw["refresh"]), "refresh", None)]


class OAuthStorageContract:
    pytestmark = [pytest.mark.asyncio, pytest.mark.recall_contract]

    # Fixtures (storage_location, storage) are the admin contract's.
    make_storage = AdminStorageContract.make_storage
    storage_location = AdminStorageContract.storage_location
    storage = AdminStorageContract.storage

    async def _granted(self, storage: Any, g: OAuthGrant | None = None
                       ) -> tuple[OAuthGrant, dict[str, str]]:
        g = g or grant()
        _, code = code_for(g)
        await storage.create_oauth_code(code)
        raw, rows = pair()
        got = await storage.redeem_oauth_code(code.code_hash, utcnow(), rows)
        assert got is not None
        return got, raw

    async def test_is_an_oauth_storage(self, storage: Any) -> None:
        assert storage.capabilities.oauth
        assert isinstance(storage, OAuthStorage)

    async def test_clients_are_saved_and_replaced(self, storage: Any) -> None:
        assert await storage.oauth_client("nope") is None
        await storage.save_oauth_client("c1", json.dumps({"client_name": "one"}))
        await storage.save_oauth_client("c1", json.dumps({"client_name": "uno"}))
        assert json.loads(await storage.oauth_client("c1")) == {"client_name": "uno"}

    async def test_a_code_is_redeemed_once_and_stored_by_hash(self, storage: Any) -> None:
        g = grant(agent="planner")
        raw_code, code = code_for(g)
        await storage.create_oauth_code(code)
        assert await storage.oauth_code(raw_code) is None  # by hash only
        loaded = await storage.oauth_code(code.code_hash)
        assert loaded.grant.namespace == "alice" and loaded.grant.agent == "planner"
        assert loaded.code_challenge == "challenge" and loaded.redirect_uri_explicit is True
        raw, rows = pair()
        got = await storage.redeem_oauth_code(code.code_hash, utcnow(), rows)
        assert got.grant_id == g.grant_id and got.scopes == g.scopes
        assert (await storage.oauth_code(code.code_hash)).redeemed is True
        live = await storage.oauth_token(hash_token(raw["access"]), "access", utcnow())
        assert live.grant.grant_id == g.grant_id and live.grant.agent == "planner"
        assert await storage.oauth_token(raw["access"], "access", utcnow()) is None
        # An access token is no refresh token, and the other way round.
        assert await storage.oauth_token(hash_token(raw["access"]), "refresh", utcnow()) is None
        assert await storage.oauth_token(hash_token(raw["refresh"]), "refresh", utcnow())
        # A second use is refused and revokes what the first one got.
        assert await storage.redeem_oauth_code(code.code_hash, utcnow(), pair()[1]) is None
        assert await storage.oauth_token(hash_token(raw["access"]), "access", utcnow()) is None
        assert await storage.oauth_token(hash_token(raw["refresh"]), "refresh", utcnow()) is None
        [listed] = await storage.list_oauth_grants("alice")
        assert listed.revoked_at is not None

    async def test_concurrent_redemptions_of_one_code_give_one_grant(self, storage: Any) -> None:
        _, code = code_for(grant())
        await storage.create_oauth_code(code)
        results = await asyncio.gather(*[
            storage.redeem_oauth_code(code.code_hash, utcnow(), pair()[1]) for _ in range(6)])
        assert sum(r is not None for r in results) == 1
        # The others were second uses: the one grant is revoked.
        [listed] = await storage.list_oauth_grants("alice")
        assert listed.revoked_at is not None

    async def test_an_expired_code_is_refused_and_consumed(self, storage: Any) -> None:
        _, code = code_for(grant(), seconds=60)
        await storage.create_oauth_code(code)
        later = utcnow() + timedelta(seconds=120)
        assert await storage.redeem_oauth_code(code.code_hash, later, pair()[1]) is None
        assert await storage.oauth_code(code.code_hash) is None  # deleted
        assert await storage.redeem_oauth_code(code.code_hash, utcnow(), pair()[1]) is None
        assert await storage.list_oauth_grants("alice") == []

    async def test_expired_codes_are_swept_when_a_code_is_made(self, storage: Any) -> None:
        _, old = code_for(grant(), seconds=-1)
        await storage.create_oauth_code(old)
        _, new = code_for(grant())
        await storage.create_oauth_code(new)
        assert await storage.oauth_code(old.code_hash) is None
        assert await storage.oauth_code(new.code_hash) is not None

    async def test_tokens_expire(self, storage: Any) -> None:
        g, raw = await self._granted(storage)
        h = hash_token(raw["access"])
        assert await storage.oauth_token(h, "access", utcnow())
        assert await storage.oauth_token(h, "access", utcnow() + timedelta(hours=2)) is None

    async def test_refresh_rotates_and_a_replay_revokes_the_family(self, storage: Any) -> None:
        g, first = await self._granted(storage)
        second, rows = pair()
        outcome, got = await storage.rotate_oauth_refresh(hash_token(first["refresh"]),
                                                          utcnow(), rows)
        assert outcome == "rotated" and got.grant_id == g.grant_id
        now = utcnow()
        assert await storage.oauth_token(hash_token(first["access"]), "access", now) is None
        assert await storage.oauth_token(hash_token(first["refresh"]), "refresh", now) is None
        assert await storage.oauth_token(hash_token(second["access"]), "access", now)
        # The old refresh token again: theft assumed, the whole grant goes.
        outcome, got = await storage.rotate_oauth_refresh(hash_token(first["refresh"]),
                                                          utcnow(), pair()[1])
        assert outcome == "reused" and got.grant_id == g.grant_id
        now = utcnow()
        assert await storage.oauth_token(hash_token(second["access"]), "access", now) is None
        assert await storage.oauth_token(hash_token(second["refresh"]), "refresh", now) is None
        [listed] = await storage.list_oauth_grants("alice")
        assert listed.revoked_at is not None
        assert await storage.rotate_oauth_refresh(hash_token(second["refresh"]), utcnow(),
                                                  pair()[1]) == ("unknown", None)
        assert await storage.rotate_oauth_refresh("no-such-hash", utcnow(),
                                                  pair()[1]) == ("unknown", None)

    async def test_concurrent_refreshes_with_one_token_rotate_once(self, storage: Any) -> None:
        _, raw = await self._granted(storage)
        h = hash_token(raw["refresh"])
        results = await asyncio.gather(*[
            storage.rotate_oauth_refresh(h, utcnow(), pair()[1]) for _ in range(5)])
        assert [r[0] for r in results].count("rotated") <= 1
        assert [r[0] for r in results].count("rotated") + \
            [r[0] for r in results].count("reused") >= 1

    async def test_revoking_a_grant_ends_its_tokens(self, storage: Any) -> None:
        g, raw = await self._granted(storage)
        other, other_raw = await self._granted(storage, grant("bob"))
        assert await storage.revoke_oauth_grant(g.grant_id, "bob") is None  # not bob's
        assert (await storage.grant_of_oauth_token(hash_token(raw["refresh"]))).grant_id == \
            g.grant_id
        revoked = await storage.revoke_oauth_grant(g.grant_id, "alice")
        assert revoked.grant_id == g.grant_id
        assert await storage.revoke_oauth_grant(g.grant_id) is None  # already
        now = utcnow()
        assert await storage.oauth_token(hash_token(raw["access"]), "access", now) is None
        assert await storage.oauth_token(hash_token(other_raw["access"]), "access", now)
        assert [x.grant_id for x in await storage.list_oauth_grants("bob")] == [other.grant_id]
        [listed] = await storage.list_oauth_grants("alice")
        assert listed.revoked_at is not None and listed.client_name == "Test client"

    async def test_erasing_a_namespace_removes_its_grants(self, storage: Any) -> None:
        _, raw = await self._granted(storage)
        _, pending = code_for(grant())
        await storage.create_oauth_code(pending)
        _, bob_raw = await self._granted(storage, grant("bob"))
        await storage.delete_namespace("alice")
        assert await storage.list_oauth_grants("alice") == []
        assert await storage.oauth_code(pending.code_hash) is None
        assert await storage.grant_of_oauth_token(hash_token(raw["access"])) is None
        assert await storage.oauth_token(hash_token(bob_raw["access"]), "access", utcnow())
