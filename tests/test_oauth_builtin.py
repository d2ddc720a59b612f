"""Recall's own OAuth 2.1 authorization server ([oauth] mode = "builtin"), end to end against a
`recall serve` process on SQLite and (with RECALL_TEST_PG_URL) Postgres: the official MCP
Python SDK's OAuth client registers dynamically, the owner consents in headless Chromium, the
client calls tools, refreshes, and is revoked; then the protocol's edges with plain HTTP
(wrong redirect URI, code reuse, expired code, deny, refresh-token reuse, CSRF), and the
grant list and revoke of the admin API, the CLI and the inspector."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from recall_testkit.inspector import (admin_token, backends, chromium_missing, database,
                                      signed_in)
from recall_testkit.oauth import (BrowserConsent, MemoryTokenStorage, RawClient, code_from,
                                  consent_form, mcp_status, pkce)
from recall_testkit.serverproc import token_in_process, Agent, ServerProcess, free_port, recall_cli

TTL = 5  # access tokens live 5 s here, so the client really refreshes


def start(work, db: str, **env: str) -> ServerProcess:
    return ServerProcess(db, work, env={"RECALL_OAUTH__MODE": "builtin",
                                        "RECALL_OAUTH__ACCESS_TOKEN_TTL_SECONDS": str(TTL),
                                        "RECALL_EXTRACTOR": "stub", **env}).start()


@pytest.fixture(scope="module", params=backends())
def srv(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"oauth-{request.param}")
    db, cleanup = database(request.param, work)
    server = start(work, db)
    server.alice = server.token("alice")
    server.admin = admin_token(server)
    server.callback = f"http://127.0.0.1:{free_port()}/callback"
    yield server
    server.stop()
    cleanup()


def grants(srv, namespace: str = "alice") -> list[dict]:
    r = httpx.get(f"{srv.base}/admin/namespaces/{namespace}/oauth-grants",
                  headers={"Authorization": f"Bearer {srv.admin}"})
    assert r.status_code == 200, r.text
    return r.json()["grants"]


def audit_actions(srv) -> list[str]:
    r = httpx.get(f"{srv.base}/admin/audit?limit=200",
                  headers={"Authorization": f"Bearer {srv.admin}"})
    return [a["action"] for a in r.json()["actions"]]


async def _call(client, tool: str, **args):
    result = await client.call_tool(tool, args)
    envelope = result.structured_content or json.loads(result.content[0].text)
    assert envelope["status"] == "ok", envelope
    return envelope["data"]


@pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")
async def test_sdk_client_consents_in_the_browser_calls_refreshes_and_is_revoked(srv):
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import OAuthClientMetadata

    store = MemoryTokenStorage()
    consent = BrowserConsent(srv.alice, srv.callback, untick=("memory:forget",),
                             agent="planner")
    provider = OAuthClientProvider(
        srv.url, OAuthClientMetadata(client_name="Chat connector", redirect_uris=[srv.callback],
                                     grant_types=["authorization_code", "refresh_token"]),
        store, redirect_handler=consent.redirect, callback_handler=consent.callback_result)
    http = create_mcp_http_client(auth=provider)
    async with Client(streamable_http_client(srv.url, http_client=http)) as client:
        # Registered dynamically; the consent page named the client and its redirect URI.
        assert store.client is not None and store.client.client_id
        assert "Chat connector" in consent.page_text and srv.callback in consent.page_text
        first = store.history[0]
        assert first.access_token.startswith("rco_") and first.scope == "memory:read memory:write"
        ack = await _call(client, "store_memory", text="I prefer green tea in the morning.")
        assert ack["queued"] is True
        for _ in range(100):
            if (await _call(client, "get_memory_stats"))["pending_extractions"] == 0:
                break
            await asyncio.sleep(0.1)
        found = await _call(client, "search_memories", query="what tea does the user drink")
        assert any("green tea" in r["text"] for r in found["results"])
        [grant] = [g for g in grants(srv) if g["client_id"] == store.client.client_id]
        assert grant["namespace"] == "alice" and grant["agent"] == "planner"
        assert grant["scopes"] == ["memory:read", "memory:write"]

        # The access token expires; the client refreshes (rotation) and carries on.
        await asyncio.sleep(TTL + 1)
        await _call(client, "get_memory_stats")
        assert len(store.history) >= 2
        latest = store.history[-1]
        assert latest.refresh_token != first.refresh_token
        assert mcp_status(srv.base, first.access_token) == 401

        # Revoked by the owner (RFC 7009 here): the next call is refused, no new consent.
        revoked = httpx.post(srv.base + "/revoke", data={
            "client_id": store.client.client_id, "client_secret": store.client.client_secret,
            "token": latest.access_token})
        assert revoked.status_code == 200
        assert mcp_status(srv.base, latest.access_token) == 401
    # The same client again: its tokens are refused and it may not ask for consent again.
    with pytest.raises(Exception):
        http = create_mcp_http_client(auth=provider)
        async with Client(streamable_http_client(srv.url, http_client=http)) as client:
            await _call(client, "get_memory_stats")
    assert consent.uses == 2  # the refresh failed, so it asked (and was refused)
    # The first refresh token was rotated away: refused (and the grant is revoked anyway).
    raw = httpx.post(srv.base + "/token", data={
        "grant_type": "refresh_token", "refresh_token": first.refresh_token,
        "client_id": store.client.client_id, "client_secret": store.client.client_secret})
    assert raw.status_code == 401 and raw.json()["error"] == "invalid_grant"
    # The memory is alice's: her static token (still working beside OAuth) finds it.
    async with Agent(srv.url, srv.alice) as a:
        page = await a.ok("inspect_memories", limit=50)
        assert any("green tea" in m["text"] for m in page["memories"])
    actions = audit_actions(srv)
    for action in ("oauth_consent", "oauth_token", "oauth_refresh", "oauth_revoke"):
        assert action in actions


async def test_deny_sends_access_denied(srv):
    client = RawClient(srv.base, srv.callback)
    _, challenge = pkce()
    ui = signed_in(srv, srv.alice)
    r = consent_form(ui, client.authorize(challenge).headers["location"], decision="deny")
    assert r.status_code == 303
    query = code_from(r.headers["location"])
    assert r.headers["location"].startswith(srv.callback)
    assert query["error"] == "access_denied" and query["state"] == "st-1" and "code" not in query


async def test_redirect_uri_must_match_exactly(srv):
    client = RawClient(srv.base, srv.callback)
    _, challenge = pkce()
    for wrong in (srv.callback + "/", srv.callback + "x", "http://evil.example/callback"):
        r = client.authorize(challenge, redirect_uri=wrong)
        assert r.status_code == 400 and "location" not in r.headers, (wrong, r.text)
    # A consent form whose redirect URI was changed in the browser shows an error, and
    # sends nothing anywhere.
    ui = signed_in(srv, srv.alice)
    r = consent_form(ui, client.authorize(challenge).headers["location"],
                     redirect_uri="http://evil.example/callback")
    assert r.status_code == 400 and "location" not in r.headers
    assert "not one that client" in r.text


async def test_code_is_single_use_and_pkce_bound(srv):
    client = RawClient(srv.base, srv.callback)
    verifier, challenge = pkce()
    ui = signed_in(srv, srv.alice)
    r = consent_form(ui, client.authorize(challenge).headers["location"])
    code = code_from(r.headers["location"])["code"]
    assert client.exchange(code, pkce()[0]).json()["error"] == "invalid_grant"  # wrong verifier
    first = client.exchange(code, verifier)
    assert first.status_code == 200, first.text
    assert mcp_status(srv.base, first.json()["access_token"]) != 401
    again = client.exchange(code, verifier)
    assert again.status_code == 401 and again.json()["error"] == "invalid_grant"
    # A code used twice may have been stolen: what its first use got is revoked too.
    assert mcp_status(srv.base, first.json()["access_token"]) == 401
    assert client.refresh(first.json()["refresh_token"]).status_code == 401
    assert "oauth_code_reuse" in audit_actions(srv)


async def test_refresh_token_reuse_revokes_the_grant(srv):
    client = RawClient(srv.base, srv.callback)
    verifier, challenge = pkce()
    ui = signed_in(srv, srv.alice)
    r = consent_form(ui, client.authorize(challenge).headers["location"])
    one = client.exchange(code_from(r.headers["location"])["code"], verifier).json()
    two = client.refresh(one["refresh_token"]).json()
    assert two["access_token"] != one["access_token"]
    assert mcp_status(srv.base, one["access_token"]) == 401
    assert mcp_status(srv.base, two["access_token"]) != 401
    replay = client.refresh(one["refresh_token"])
    assert replay.status_code == 401 and "reuse" in replay.json()["error_description"]
    # The whole family is gone: the current tokens too.
    assert mcp_status(srv.base, two["access_token"]) == 401
    assert client.refresh(two["refresh_token"]).status_code == 401
    assert "oauth_refresh_reuse" in audit_actions(srv)


async def test_consent_needs_csrf_and_sign_in(srv):
    client = RawClient(srv.base, srv.callback)
    _, challenge = pkce()
    location = client.authorize(challenge).headers["location"]
    anonymous = httpx.get(location)
    assert anonymous.status_code == 303 and "/ui/signin?next=" in anonymous.headers["location"]
    ui = signed_in(srv, srv.alice)
    r = consent_form(ui, location, csrf="0" * 40)
    assert r.status_code == 403 and "location" not in r.headers


async def test_grants_listed_and_revoked_by_admin_api_cli_and_inspector(srv):
    made = []
    for _ in range(3):
        client = RawClient(srv.base, srv.callback, name="Revocable")
        verifier, challenge = pkce()
        r = consent_form(signed_in(srv, srv.alice), client.authorize(challenge).headers["location"])
        made.append(client.exchange(code_from(r.headers["location"])["code"], verifier).json())
    ids = {g["grant_id"]: g for g in grants(srv) if g["client_name"] == "Revocable"
           and g["revoked_at"] is None}
    assert len(ids) == 3
    api_id, cli_id, ui_id = list(ids)
    r = httpx.delete(f"{srv.base}/admin/namespaces/alice/oauth-grants/{api_id}",
                     headers={"Authorization": f"Bearer {srv.admin}"})
    assert r.status_code == 200 and r.json()["revoked"] is True
    assert httpx.delete(f"{srv.base}/admin/namespaces/bob/oauth-grants/{cli_id}",
                        headers={"Authorization": f"Bearer {srv.admin}"}).status_code == 404
    listed = recall_cli("oauth-grants", "alice", "--db", srv.db, env=srv.env).stdout
    assert cli_id in listed and "Revocable" in listed
    recall_cli("revoke-grant", cli_id, "--db", srv.db, env=srv.env)
    ui = signed_in(srv, srv.alice)
    page = ui.get("/ui/oauth/grants")
    assert page.status_code == 200 and ui_id in page.text
    r = ui.post("/ui/oauth/grants/revoke", data={"csrf": ui.csrf, "grant_id": ui_id})
    assert r.status_code == 303
    after = {g["grant_id"]: g for g in grants(srv)}
    assert all(after[g]["revoked_at"] for g in (api_id, cli_id, ui_id))
    assert all(mcp_status(srv.base, t["access_token"]) == 401 for t in made)


async def test_static_bearer_tokens_keep_working(srv):
    async with Agent(srv.url, srv.alice) as a:
        await a.ok("get_memory_stats")
    assert mcp_status(srv.base, "rco_not-a-real-token") == 401
    assert mcp_status(srv.base, "rcl_not-a-real-token") == 401


def test_an_expired_code_is_refused(tmp_path):
    server = start(tmp_path, str(tmp_path / "recall.db"), RECALL_OAUTH__CODE_TTL_SECONDS="1")
    try:
        server.alice = server.token("alice")
        client = RawClient(server.base, "http://127.0.0.1:9/callback")
        verifier, challenge = pkce()
        r = consent_form(signed_in(server, server.alice),
                         client.authorize(challenge).headers["location"])
        code = code_from(r.headers["location"])["code"]
        time.sleep(1.5)
        late = client.exchange(code, verifier)
        assert late.status_code == 401 and late.json()["error"] == "invalid_grant"
        assert "expired" in late.json()["error_description"]
    finally:
        server.stop()


async def test_sign_in_returns_only_to_the_consent_page(srv):
    for sent, expected in (("/ui/oauth/consent?client_id=x", "/ui/oauth/consent?client_id=x"),
                           ("https://evil.example/", "/ui/memories"),
                           ("//evil.example/ui/oauth/consent?", "/ui/memories")):
        r = httpx.post(srv.base + "/ui/signin", data={"token": srv.alice, "next": sent},
                       headers={"Origin": srv.base})
        assert r.status_code == 303 and r.headers["location"] == expected, sent


async def test_an_admin_grants_any_namespace_and_an_agent(srv):
    client = RawClient(srv.base, srv.callback)
    verifier, challenge = pkce()
    ui = signed_in(srv, srv.admin)
    r = consent_form(ui, client.authorize(challenge).headers["location"], namespace="carol",
                     agent="scribe", scopes=("memory:read",))
    tokens = client.exchange(code_from(r.headers["location"])["code"], verifier).json()
    assert tokens["scope"] == "memory:read"
    [grant] = grants(srv, "carol")
    assert grant["agent"] == "scribe" and grant["scopes"] == ["memory:read"]
    bad = consent_form(ui, client.authorize(challenge).headers["location"], namespace="carol",
                       agent="not a name!")
    assert bad.status_code == 400 and "location" not in bad.headers


async def _scoped_token(srv, agent: str, scopes: str) -> str:
    """An agent-bound, scoped token of alice, made on the server's database."""
    return await token_in_process(srv.db, "alice", agent=agent, scopes=scopes)


async def test_an_agent_token_grants_only_its_agent_and_scopes(srv):
    token = await _scoped_token(srv, "planner", "memory:read")
    client = RawClient(srv.base, srv.callback)
    verifier, challenge = pkce()
    ui = signed_in(srv, token)
    location = client.authorize(challenge).headers["location"]
    page = ui.get(location).text
    assert "planner" in page and 'value="memory:write" disabled' in page
    wider = consent_form(ui, location, scopes=("memory:read", "memory:write"))
    assert wider.status_code == 400 and "may only grant" in wider.text
    r = consent_form(ui, location, agent="someone-else", scopes=("memory:read",))
    tokens = client.exchange(code_from(r.headers["location"])["code"], verifier).json()
    assert tokens["scope"] == "memory:read"
    [grant] = [g for g in grants(srv) if g["client_id"] == client.info["client_id"]]
    assert grant["agent"] == "planner" and grant["scopes"] == ["memory:read"]


async def _oauth_rows(srv) -> str:
    """Every row of the OAuth tables, as one text (what someone with the database sees)."""
    tables = ("oauth_clients", "oauth_codes", "oauth_grants", "oauth_tokens")
    if srv.db.startswith("postgresql"):
        import asyncpg
        con = await asyncpg.connect(srv.db)
        try:
            return repr([[tuple(r) for r in await con.fetch(f"SELECT * FROM {t}")]
                         for t in tables])
        finally:
            await con.close()
    import sqlite3
    with sqlite3.connect(srv.db) as con:
        return repr([con.execute(f"SELECT * FROM {t}").fetchall() for t in tables])


async def test_codes_tokens_and_client_secrets_are_stored_hashed(srv):
    from recall_core.admin.tokens import hash_token

    client = RawClient(srv.base, srv.callback)
    verifier, challenge = pkce()
    r = consent_form(signed_in(srv, srv.alice), client.authorize(challenge).headers["location"])
    code = code_from(r.headers["location"])["code"]
    one = client.exchange(code, verifier).json()
    two = client.refresh(one["refresh_token"]).json()
    stored = await _oauth_rows(srv)
    secrets_ = [client.info["client_secret"], code, one["access_token"], one["refresh_token"],
                two["access_token"], two["refresh_token"]]
    for raw in secrets_:
        assert raw not in stored
        assert hash_token(raw) in stored
