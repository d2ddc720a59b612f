"""Scopes in the inspector, in a real Chromium (Playwright): an operator makes a read-only
token for a dashboard agent with the token form, and a person signed in with it browses the
namespace without a way to change or forget anything. Skipped where Chromium is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recall_testkit.inspector import CHROMIUM, admin_token, chromium_missing, run, start_server, store_all
from recall_testkit.serverproc import Agent

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("scopes-ui"))
    server.owner = server.token("dana")
    server.admin = admin_token(server)
    run(store_all(server, server.owner, ["I prefer dark mode in every editor."]))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def sign_in(browser, srv, token: str):
    page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    page.goto(srv.base + "/ui/signin")
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    return page


def test_a_read_only_dashboard_token_from_the_form_browses_only(browser, srv, tmp_path):
    shots = Path(os.environ.get("RECALL_SCREENSHOTS") or tmp_path)
    ops = sign_in(browser, srv, srv.admin)
    ops.goto(srv.base + "/ui/admin/namespace?ns=dana")
    ops.get_by_label("Agent").fill("dashboard")
    ops.get_by_label("memory:write").uncheck()
    ops.get_by_label("memory:forget").uncheck()
    ops.get_by_role("button", name="Create a token").click()
    token = ops.get_by_label("Token for agent dashboard in dana (memory:read)").input_value()
    assert token.startswith("rcl_")
    ops.screenshot(path=str(shots / "admin-scoped-token.png"), full_page=True)
    row = ops.locator("table.tokens tr", has_text="dashboard")
    assert row.count() == 1 and "memory:read" in row.inner_text()
    assert "memory:write" not in row.inner_text()

    async def tools() -> set[str]:
        async with Agent(srv.url, token) as a:
            return {t.name for t in await a.client.list_tools()}
    assert run(tools()) == {"search_memories", "inspect_memories", "get_memory_stats"}

    page = sign_in(browser, srv, token)
    assert page.url.endswith("/ui/memories")
    assert "agent dashboard" in page.locator("header").inner_text()
    page.get_by_role("link", name="I prefer dark mode in every editor.").click()
    page.wait_for_load_state()
    for name in ("Forget", "Pin", "Save correction"):
        assert page.get_by_role("button", name=name).count() == 0, name
    page.screenshot(path=str(shots / "memory-read-only.png"), full_page=True)
    page.goto(srv.base + "/ui/search?query=editor")
    assert "dark mode" in page.locator("main").inner_text()
