"""OAuth with an external issuer, end to end: a local OIDC issuer (real RSA keys, discovery
document and JWKS over real HTTP) signs JWTs; a real `recall serve` with `[oauth] mode =
"external"` verifies them; the official MCP client and the A2A SDK client call it with
`Authorization: Bearer <jwt>`. Static tokens from `recall create-token` keep working beside.
Nothing in the verification path is mocked."""

from __future__ import annotations

import importlib.util
import json
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from recall_testkit.a2a import A2A, COMPLETED, artifact, data
from recall_testkit.backends import BACKENDS
from recall_testkit.inspector import database
from recall_testkit.oidc import LocalIssuer, new_key
from recall_testkit.serverproc import Agent, ServerProcess, recall_cli

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALL = ["memory:read", "memory:write", "memory:forget"]
WHOAMI = "recall_testkit.plugins.whoami_tool"


@pytest.fixture(scope="module")
def issuer():
    iss = LocalIssuer().start()
    yield iss
    iss.stop()


def oauth_toml(path, issuer: LocalIssuer, resource: str, **extra: str) -> str:
    lines = ["[oauth]", 'mode = "external"', f'resource_url = "{resource}"',
             f'issuer = "{issuer.issuer}"', 'agent_claim = "recall_agent"',
             *(f'{k} = "{v}"' for k, v in extra.items())]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture(scope="module", params=BACKENDS)
def server(request, tmp_path_factory, issuer):
    """A real `recall serve` in external mode, on SQLite and (RECALL_TEST_PG_URL) Postgres:
    static tokens beside OAuth live in storage."""
    work = tmp_path_factory.mktemp("oauth")
    db, cleanup = database(request.param, work)
    srv = ServerProcess(db, work, env={"RECALL_PLUGIN_MODULES": WHOAMI})
    srv.args = ("--config", oauth_toml(work / "recall.toml", issuer, srv.url))
    srv.start()
    yield srv
    srv.stop()
    cleanup()


class McpCaller:
    """The official MCP SDK client with a bearer header, envelopes back."""

    def __init__(self, url: str, token: str | None, auth: Any = None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx2.AsyncClient(headers=headers, auth=auth, timeout=30)
        self.client = Client(streamable_http_client(url, http_client=self.http))

    async def __aenter__(self) -> McpCaller:
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)
        await self.http.aclose()

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args)
        env = result.structured_content or json.loads(result.content[0].text)
        assert set(env) == {"status", "data", "error", "code"}, env
        return env

    async def ok(self, tool: str, **args: Any) -> Any:
        env = await self.call(tool, **args)
        assert env["status"] == "ok", env
        return env["data"]

    async def wait_idle(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while (await self.ok("get_memory_stats"))["pending_extractions"]:
            assert time.monotonic() < deadline, "extractions still pending"
            time.sleep(0.1)


def metadata_url(server: ServerProcess) -> str:
    return server.base + "/.well-known/oauth-protected-resource/mcp"


async def test_protected_resource_metadata(server, issuer):
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        r = httpx.get(server.base + path)
        assert r.status_code == 200, (path, r.text)
        doc = r.json()
        assert doc["resource"] == server.url
        assert doc["authorization_servers"] == [issuer.issuer]
        assert doc["scopes_supported"] == ALL
        assert doc["bearer_methods_supported"] == ["header"]
        assert doc["resource_name"] == "Recall"
        assert set(doc) == {"resource", "authorization_servers", "scopes_supported",
                            "bearer_methods_supported", "resource_name"}, doc


async def test_the_agent_card_names_the_issuer_beside_the_static_token(server, issuer):
    card = httpx.get(server.base + "/.well-known/agent-card.json").json()
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"
    oidc = card["securitySchemes"]["oauth"]["openIdConnectSecurityScheme"]
    assert oidc["openIdConnectUrl"] == issuer.issuer + "/.well-known/openid-configuration"
    assert server.url in oidc["description"]
    assert card["securityRequirements"] == [
        {"schemes": {"bearer": {}}}, {"schemes": {"oauth": {"list": ALL}}}]


async def test_store_and_search_in_the_namespace_of_the_claim(server, issuer):
    jwt = issuer.token("oauth-ann", aud=server.url)
    async with McpCaller(server.url, jwt) as ann:
        assert await ann.ok("whoami") == {"namespace": "oauth-ann", "agent": None, "scopes": sorted(ALL)}
        await ann.ok("store_memory", text="The quarterly review is on the 14th of March.")
        await ann.wait_idle()
        found = await ann.ok("search_memories", query="when is the quarterly review?")
        assert "14th of March" in found["results"][0]["text"]
    # The namespace is the claim's: a static token of that namespace sees the same memory,
    # another namespace's JWT does not.
    async with Agent(server.url, server.token("oauth-ann")) as static:
        assert (await static.ok("search_memories", query="quarterly review"))["results"]
    async with McpCaller(server.url, issuer.token("oauth-bob", aud=server.url)) as bob:
        assert (await bob.ok("search_memories", query="quarterly review"))["results"] == []


async def test_agent_claim_and_scopes_reach_the_principal(server, issuer):
    token = issuer.token("oauth-cy", aud=server.url, scope="openid profile memory:read",
                         recall_agent="planner")
    async with McpCaller(server.url, token) as cy:
        assert await cy.ok("whoami") == {"namespace": "oauth-cy", "agent": "planner",
                                         "scopes": ["memory:read"]}
    # The scopes claim as a list (Entra's `scp`-style) reads the same.
    listed = issuer.token("oauth-cy", aud=server.url,
                          scope=["memory:read", "memory:write", "email"])
    async with McpCaller(server.url, listed) as cy:
        assert (await cy.ok("whoami"))["scopes"] == ["memory:read", "memory:write"]


class MemoryTokens:
    """The MCP client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


async def test_an_oauth_only_mcp_client_discovers_the_issuer_and_signs_in(server, issuer):
    """The MCP authorization spec's flow, by the official SDK's OAuth client, from nothing
    but Recall's URL: 401 -> resource_metadata -> the issuer's metadata -> registration ->
    authorization (PKCE, resource = Recall's URL) -> token -> the call."""
    seen: dict[str, str] = {}

    async def redirect(url: str) -> None:
        seen["url"] = url

    async def callback() -> AuthorizationCodeResult:
        code, state = issuer.approve(seen["url"], sub="oauth-kim")
        return AuthorizationCodeResult(code=code, state=state)

    auth = OAuthClientProvider(
        server_url=server.url, storage=MemoryTokens(), redirect_handler=redirect,
        callback_handler=callback,
        client_metadata=OAuthClientMetadata(client_name="oauth-only client",
                                            redirect_uris=["http://localhost:3999/callback"],
                                            grant_types=["authorization_code"],
                                            token_endpoint_auth_method="none"))
    async with McpCaller(server.url, None, auth=auth) as kim:
        assert await kim.ok("whoami") == {"namespace": "oauth-kim", "agent": None,
                                          "scopes": sorted(ALL)}
    query = {k: v[0] for k, v in parse_qs(urlsplit(seen["url"]).query).items()}
    assert seen["url"].startswith(issuer.issuer + "/authorize?")
    assert query["resource"] == server.url  # RFC 8707: the token is bound to Recall
    assert query["scope"].split() == ALL  # from the metadata's scopes_supported


async def test_a_read_only_jwt_cannot_store(server, issuer):
    token = issuer.token("oauth-dee", aud=server.url, scope="memory:read")
    async with McpCaller(server.url, token) as dee:
        refused = await dee.call("store_memory", text="This must not be stored.")
        assert refused["status"] == "error" and refused["code"] == "FORBIDDEN"
        assert "memory:write" in refused["error"]
        assert (await dee.call("get_memory_stats"))["data"]["pending_extractions"] == 0


def challenge(server: ServerProcess, error: str | None = None) -> str:
    parts = ['Bearer realm="recall"', *([f'error="{error}"'] if error else []),
             f'resource_metadata="{metadata_url(server)}"']
    return ", ".join(parts)


def bad_tokens(server: ServerProcess, issuer: LocalIssuer) -> dict[str, str]:
    aud = server.url
    return {
        "wrong audience": issuer.token(aud="https://other.example.com/mcp"),
        "no audience": issuer.token(aud=None),
        "wrong issuer": issuer.token(aud=aud, iss="https://evil.example.com"),
        "expired": issuer.token(aud=aud, expires_in=-60),
        "bad signature": issuer.token(aud=aud, key=new_key()),
        "unknown kid": issuer.token(aud=aud, kid="nobody"),
        "no exp": issuer.token(aud=aud, drop=("exp",)),
        "namespace with a slash": issuer.token("a/b", aud=aud),
        "agent not a plain name": issuer.token(aud=aud, recall_agent="x y"),
        "not a JWT": "rcl_not-a-token",
        "unsigned (alg none)": issuer.forged("none", aud=aud),
        "HS256 keyed with the public key": issuer.forged("HS256", aud=aud),
    }


async def test_bad_tokens_get_401_pointing_at_the_metadata(server, issuer):
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    for what, token in bad_tokens(server, issuer).items():
        headers = {"Authorization": f"Bearer {token}"}
        for r in (httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                             headers={**headers, "Accept": "application/json, text/event-stream"}),
                  httpx.post(server.base + "/a2a", json=body, headers=headers)):
            assert r.status_code == 401, (what, r.request.url, r.text)
            assert r.headers["www-authenticate"] == challenge(server, "invalid_token"), what
            assert r.json()["error"] == "invalid_token"
            assert server.url in r.json()["error_description"]
    # No token: the bare challenge with the metadata pointer (no error code, RFC 6750).
    for r in (httpx.post(server.url, json={}), httpx.post(server.base + "/a2a", json=body)):
        assert r.status_code == 401
        assert r.headers["www-authenticate"] == challenge(server)
        assert r.json()["error"] == "unauthorized"


async def test_a_token_without_recall_scopes_gets_403(server, issuer):
    token = issuer.token("oauth-eve", aud=server.url, scope="openid profile")
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    for r in (httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                         headers=headers),
              httpx.post(server.base + "/a2a", headers=headers,
                         json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}})):
        assert r.status_code == 403, r.text
        assert r.json()["error"] == "insufficient_scope" and r.json()["code"] == "FORBIDDEN"
        assert "openid profile" in r.json()["error_description"]
        assert r.headers["www-authenticate"] == ", ".join([
            'Bearer realm="recall"', 'error="insufficient_scope"',
            'scope="memory:read memory:write memory:forget"',
            f'resource_metadata="{metadata_url(server)}"'])
    none = issuer.token("oauth-eve", aud=server.url, scope=None)  # no scope claim at all
    r = httpx.post(server.url, json={}, headers={**headers, "Authorization": f"Bearer {none}"})
    assert r.status_code == 403


async def test_static_tokens_still_work_beside_oauth(server):
    token = server.token("static-fay")
    async with Agent(server.url, token) as fay:
        assert await fay.ok("whoami") == {"namespace": "static-fay", "agent": None, "scopes": sorted(ALL)}
        await fay.ok("store_memory", text="Fay's build server is called hopper.")
        await fay.wait_idle()
    async with A2A(server.base, token, streaming=False) as fay:
        found = await fay.send(data(skill="search_memories", query="build server", limit=5))
        assert found.status.state == COMPLETED
        assert "hopper" in artifact(found, "search_results")["results"][0]["text"]


async def test_a2a_with_a_jwt(server, issuer):
    jwt = issuer.token("oauth-gus", aud=server.url)
    async with A2A(server.base, jwt, streaming=False) as gus:
        stored = await gus.send(data(skill="store_memories", text="Gus drinks his coffee black."))
        assert stored.status.state == COMPLETED, stored.status
        found = await gus.send(data(skill="search_memories", query="coffee", limit=5))
        assert found.status.state == COMPLETED
        assert "black" in artifact(found, "search_results")["results"][0]["text"]
        assert {stored.id, found.id} <= await gus.task_ids()
    # Same namespace as /mcp: the claim's, seen by a static token of it and nobody else.
    async with Agent(server.url, server.token("oauth-gus")) as static:
        assert (await static.ok("search_memories", query="coffee"))["results"]
    async with A2A(server.base, issuer.token("oauth-hal", aud=server.url)) as hal:
        assert stored.id not in await hal.task_ids()


def serve_fails(tmp_path, toml: str) -> str:
    """`recall serve` with this recall.toml: it must stop at start-up; its stderr."""
    (tmp_path / "bad.toml").write_text(toml)
    proc = recall_cli("serve", "--db", str(tmp_path / "x.db"), "--port", "0", "--config",
                      str(tmp_path / "bad.toml"), check=False, timeout=60,
                      env={"RECALL_DISABLE_PLUGINS": "embeddings"})
    assert proc.returncode != 0, proc.stderr
    return proc.stderr


async def test_misconfigured_oauth_stops_start_up(tmp_path, issuer):
    err = serve_fails(tmp_path, '[oauth]\nmode = "external"\n')
    assert "oauth.issuer" in err
    err = serve_fails(tmp_path, f'[oauth]\nmode = "external"\nissuer = "{issuer.issuer}/"\n')
    assert "says its issuer is" in err  # discovery: the document names another issuer
    err = serve_fails(tmp_path, '[oauth]\nmode = "external"\nissuer = "http://127.0.0.1:9"\n')
    assert "oauth.jwks_uri" in err  # unreachable issuer: the way around it is named
    err = serve_fails(tmp_path, '[oauth]\nmode = "external"\nissuer = "x"\n')
    assert "oauth.issuer" in err and "http(s) URL" in err
    err = serve_fails(tmp_path, '[oauth]\nmode = "external"\nissuer = "http://a.example"\n'
                                'resource_url = "https://recall.example.com/api"\n')
    assert "/mcp" in err
    err = serve_fails(tmp_path, '[oauth]\nmode = "sometimes"\n')
    assert "oauth.mode" in err


@pytest.mark.skipif(importlib.util.find_spec("recall_core.server.oauth.builtin") is not None,
                    reason="Recall's own authorization server is in this build")
async def test_builtin_mode_without_the_builtin_server_says_so(tmp_path):
    err = serve_fails(tmp_path, '[oauth]\nmode = "builtin"\n')
    assert 'oauth.mode = "builtin"' in err and "not part of this build" in err
