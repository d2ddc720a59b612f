"""OAuth clients for the built-in authorization server's tests: the official MCP SDK's
`OAuthClientProvider` with its consent given in headless Chromium (Playwright's async API),
and a raw client (httpx) for the protocol's edges: register, authorize, consent through the
inspector's form, exchange, refresh, revoke."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import json
import re
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from .inspector import CHROMIUM


class MemoryTokenStorage:
    """The SDK client's TokenStorage, in memory, keeping every token set it was given."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None
        self.history: list[Any] = []

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


class BrowserConsent:
    """redirect_handler + callback_handler for OAuthClientProvider: opens the authorization
    URL in Chromium, signs in to the inspector with `token`, sets the consent form (unticks
    `untick`, types `agent`), presses Allow or Deny, and catches the redirect to `callback`
    (a route Playwright intercepts: no listener needed). Refuses a second consent unless
    `again` is set, so a client that lost its grant fails instead of asking again."""

    def __init__(self, token: str, callback: str, untick: tuple[str, ...] = (),
                 agent: str | None = None, decision: str = "approve"):
        self.token, self.callback = token, callback
        self.untick, self.agent, self.decision = untick, agent, decision
        self.caught: asyncio.Future[str] | None = None
        self.page_text = ""
        self.uses = 0

    async def redirect(self, url: str) -> None:
        from playwright.async_api import async_playwright

        self.uses += 1
        if self.uses > 1:
            raise RuntimeError("asked for consent again")
        self.caught = asyncio.get_running_loop().create_future()
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                await self._drive(await browser.new_page(), url)
            finally:
                await browser.close()

    async def _drive(self, page: Any, url: str) -> None:
        async def on_callback(route: Any) -> None:
            if not self.caught.done():  # type: ignore[union-attr]
                self.caught.set_result(route.request.url)  # type: ignore[union-attr]
            await route.fulfill(status=200, content_type="text/plain", body="done")

        await page.route(self.callback + "**", on_callback)
        await page.goto(url)
        assert "/ui/signin" in page.url, page.url
        await page.fill("#token", self.token)
        await page.click("button[type=submit]")
        await page.wait_for_url(re.compile(r".*/ui/oauth/consent\?.*"))
        self.page_text = await page.inner_text("main")
        for scope in self.untick:
            await page.uncheck(f"input[name=scopes][value='{scope}']")
        if self.agent:
            await page.fill("#agent", self.agent)
        await page.click(f"#{'approve' if self.decision == 'approve' else 'deny'}")
        await asyncio.wait_for(asyncio.shield(self.caught), 20)  # type: ignore[arg-type]

    async def callback_result(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        query = parse_qs(urlsplit(await self.caught).query)  # type: ignore[misc]
        if "error" in query:
            raise RuntimeError(f"authorization refused: {query['error'][0]}")
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()
                                         ).decode().rstrip("=")
    return verifier, challenge


class RawClient:
    """One dynamically registered client, spoken to with plain HTTP."""

    def __init__(self, base: str, redirect_uri: str, name: str = "raw test client"):
        self.base, self.redirect_uri = base, redirect_uri
        r = httpx.post(base + "/register", json={
            "client_name": name, "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"], "token_endpoint_auth_method": "client_secret_post"})
        assert r.status_code == 201, r.text
        self.info = r.json()

    @property
    def creds(self) -> dict[str, str]:
        return {"client_id": self.info["client_id"], "client_secret": self.info["client_secret"]}

    def authorize(self, challenge: str, redirect_uri: str | None = None,
                  scope: str = "memory:read memory:write memory:forget") -> httpx.Response:
        return httpx.get(self.base + "/authorize", params={
            "response_type": "code", "client_id": self.info["client_id"],
            "redirect_uri": redirect_uri or self.redirect_uri, "state": "st-1",
            "code_challenge": challenge, "code_challenge_method": "S256", "scope": scope,
            "resource": self.base + "/mcp"})

    def token(self, **data: str) -> httpx.Response:
        return httpx.post(self.base + "/token", data={**self.creds, **data})

    def exchange(self, code: str, verifier: str) -> httpx.Response:
        return self.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                          redirect_uri=self.redirect_uri, resource=self.base + "/mcp")

    def refresh(self, refresh_token: str) -> httpx.Response:
        return self.token(grant_type="refresh_token", refresh_token=refresh_token)

    def revoke(self, token: str) -> httpx.Response:
        return httpx.post(self.base + "/revoke", data={**self.creds, "token": token})


def consent_form(ui: Any, location: str, decision: str = "approve", agent: str = "",
                 scopes: tuple[str, ...] = ("memory:read", "memory:write"),
                 **override: str) -> httpx.Response:
    """Answer the consent page at `location` through a signed-in httpx client (`signed_in`),
    as its form does; `override` changes hidden fields (a tampered request)."""
    page = ui.get(location)
    assert page.status_code == 200, page.text[:400]
    hidden = {k: html.unescape(v) for k, v in re.findall(
        r'<input type="hidden" name="([a-z_]+)" value="([^"]*)"', page.text)}
    form: dict[str, Any] = {**hidden, **override, "decision": decision, "agent": agent,
                             "scopes": list(scopes)}
    return ui.post("/ui/oauth/consent", data=form)


def code_from(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def mcp_status(base: str, token: str) -> int:
    """The HTTP status of one stateless tools/list with `token`."""
    r = httpx.post(base + "/mcp", headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"},
        content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
    return r.status_code


def wait_until(predicate: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)
