"""External OAuth against a real OpenID Connect provider from PyPI (`oidc-provider-mock`, a
Flask + Authlib provider for tests): its own discovery document, key set and signed tokens,
obtained through a real authorization-code exchange. Recall discovers the keys from the
issuer URL alone and verifies the provider's JWT.

That provider's access tokens are opaque (it has no JWT access tokens and no introspection
endpoint Recall could call), so the bearer token here is the ID token it signs, with
`audience` set to the client id: the same verification path (discovery, JWKS, signature,
issuer, audience, expiry, claim mapping) a JWT access token from Keycloak or Auth0 takes.
Its opaque access token is refused with 401."""

from __future__ import annotations

import warnings
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from recall_testkit.serverproc import Agent, ServerProcess

with warnings.catch_warnings():  # it imports authlib.jose, which Authlib now marks deprecated
    warnings.simplefilter("ignore")
    oidc_provider_mock = pytest.importorskip("oidc_provider_mock",
                                             reason="test extra oidc-provider-mock")

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              # the provider uses Authlib APIs Authlib now marks deprecated
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

CLIENT = "recall-test-client"
CALLBACK = "http://localhost/callback"


@pytest.fixture(scope="module")
def provider():
    user = oidc_provider_mock.User(sub="oidc-ivy", claims={"recall_scopes": "memory:read memory:write"})
    with oidc_provider_mock.run_server_in_thread(user_claims=[user]) as srv:
        yield f"http://localhost:{srv.server_port}"


@pytest.fixture(scope="module")
def server(tmp_path_factory, provider):
    work = tmp_path_factory.mktemp("oidc")
    srv = ServerProcess(str(work / "r.db"), work)
    (work / "recall.toml").write_text(
        f'[oauth]\nmode = "external"\nissuer = "{provider}"\naudience = "{CLIENT}"\n'
        f'scopes_claim = "recall_scopes"\n')
    srv.args = ("--config", str(work / "recall.toml"))
    srv.start()
    yield srv
    srv.stop()


def sign_in(provider: str, sub: str) -> dict:
    """The authorization-code flow as a browser and a client do it: the provider's consent
    form posted for `sub`, the code from the redirect exchanged at the token endpoint."""
    with httpx.Client(base_url=provider) as http:
        config = http.get("/.well-known/openid-configuration").json()
        r = http.post(config["authorization_endpoint"],
                      params={"client_id": CLIENT, "redirect_uri": CALLBACK,
                              "response_type": "code", "scope": "openid", "state": "s1"},
                      data={"sub": sub})
        assert r.status_code == 302, r.text
        code = parse_qs(urlsplit(r.headers["location"]).query)["code"][0]
        r = http.post(config["token_endpoint"],
                      data={"grant_type": "authorization_code", "code": code,
                            "redirect_uri": CALLBACK, "client_id": CLIENT,
                            "client_secret": "anything"})
        assert r.status_code == 200, r.text
        return r.json()


async def test_the_providers_signed_token_opens_the_subjects_namespace(server, provider):
    tokens = sign_in(provider, "oidc-ivy")
    async with Agent(server.url, tokens["id_token"]) as ivy:
        await ivy.ok("store_memory", text="Ivy's favourite editor is Helix.")
        await ivy.wait_idle()
        found = await ivy.ok("search_memories", query="which editor does Ivy like?")
        assert "Helix" in found["results"][0]["text"]
    async with Agent(server.url, server.token("oidc-ivy")) as static:
        assert (await static.ok("search_memories", query="Helix"))["results"]


async def test_opaque_tokens_and_tokens_without_recall_scopes_are_refused(server, provider):
    tokens = sign_in(provider, "oidc-jo")  # a user without the recall_scopes claim
    r = httpx.post(server.url, json={}, headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert r.status_code == 401 and 'error="invalid_token"' in r.headers["www-authenticate"]
    r = httpx.post(server.url, json={}, headers={"Authorization": f"Bearer {tokens['id_token']}"})
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"
