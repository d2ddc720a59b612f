"""The inspector in a real Chromium (Debian's package, driven by Playwright's Python API):
what a person and an operator do on /ui, end to end against a `recall serve` process.

Skipped, saying why, where Chromium or Playwright is missing (.ci/run installs both).
Screenshots go to RECALL_SCREENSHOTS (a directory) when set, else to the test's tmp dir.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import httpx
import pytest

from recall_testkit.inspector import (CHROMIUM, admin_token, chromium_missing, run, search,
                               start_server, store_all)
from recall_testkit.serverproc import Agent

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = start_server(tmp_path_factory.mktemp("inspector"))
    server.alice = server.token("alice")
    server.admin = admin_token(server)
    run(store_all(server, server.alice, [
        "I prefer dark mode in every editor.",
        "I live in Berlin.",
        "Our team uses Postgres 16 for production.",
        "I moved to Lisbon.",
    ], session_id="s1", agent_id="claude-code"))
    run(store_all(server, server.alice, ["Deploys happen on Thursdays."], topic="ops"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    where = os.environ.get("RECALL_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    pg = context.new_page()
    pg.on("dialog", lambda d: d.accept())  # the confirm() before destructive forms
    yield pg
    context.close()


def sign_in(page, srv, token: str) -> None:
    page.goto(srv.base + "/ui/")
    assert page.url.endswith("/ui/signin")
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    assert token not in page.url


def test_sign_in_list_and_filter(page, srv, shots):
    sign_in(page, srv, srv.alice)
    assert page.url.endswith("/ui/memories")
    cookie, = [c for c in page.context.cookies() if c["name"] == "recall_ui"]
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
    rows = page.locator("table.memories tbody tr")
    assert rows.count() == 4  # Berlin was superseded by Lisbon
    assert "Deploys happen on Thursdays." in rows.first.inner_text()  # newest first
    page.screenshot(path=str(shots / "memories.png"), full_page=True)

    page.get_by_label("Type").select_option("preference")
    page.get_by_role("button", name="Filter").click()
    assert [t.strip() for t in page.locator("table.memories tbody tr td:first-child a").all_inner_texts()] \
        == ["I prefer dark mode in every editor."]
    page.get_by_label("Type").select_option("")
    page.get_by_label("Topic").fill("ops")
    page.get_by_role("button", name="Filter").click()
    assert page.locator("table.memories tbody tr").count() == 1
    page.get_by_label("Topic").fill("")
    page.get_by_label("State").select_option("superseded")
    page.get_by_role("button", name="Filter").click()
    assert "I live in Berlin." in page.locator("table.memories").inner_text()
    page.get_by_label("State").select_option("all")
    page.get_by_label("Text contains").fill("POSTGRES")
    page.get_by_role("button", name="Filter").click()
    assert page.locator("table.memories tbody tr").count() == 1


def test_search_explained(page, srv, shots):
    sign_in(page, srv, srv.alice)
    page.get_by_role("link", name="Search").click()
    page.get_by_label("Query").fill("which database does the team use in production?")
    page.get_by_role("button", name="Search").click()
    table = page.locator("table.explain")
    first = table.locator("tbody tr").first
    assert "Postgres 16" in first.inner_text() and "returned" in first.inner_text()
    assert "bm25 #1" in first.inner_text()
    page.get_by_text("How a score is made").click()
    assert page.get_by_text("drops every candidate whose final score is below it").is_visible()
    page.screenshot(path=str(shots / "search-explained.png"), full_page=True)
    # A threshold just above a result's score: the same candidate, now shown as dropped by it.
    page.get_by_label("Query").fill("when do deploys happen?")
    page.get_by_role("button", name="Search").click()
    row = page.locator("table.explain tbody tr", has_text="Deploys happen")
    score = float(row.locator("td").last.inner_text())
    page.get_by_label("score_threshold").fill(f"{score + 0.001:.3f}")
    page.get_by_role("button", name="Search").click()
    dropped = page.locator("tr.outcome-below_threshold", has_text="Deploys happen")
    assert "below score_threshold" in dropped.inner_text()
    assert "Deploys" not in page.locator("tr.outcome-returned").all_inner_texts().__str__()


def test_timeline_after_contradiction(page, srv, shots):
    sign_in(page, srv, srv.alice)
    page.get_by_role("link", name="I moved to Lisbon.").click()
    timeline = page.locator("ol.timeline li")
    assert timeline.count() == 2
    assert "Berlin" in timeline.nth(0).inner_text() and "superseded by" in timeline.nth(0).inner_text()
    assert "now (active)" in timeline.nth(1).inner_text()
    assert "claude-code" in page.locator("text=Provenance").locator("..").inner_text()
    page.screenshot(path=str(shots / "memory-timeline.png"), full_page=True)
    page.get_by_role("link", name="I live in Berlin.").click()
    assert "superseded" in page.locator("dl.facts").first.inner_text()
    page.get_by_role("link", name="its successor").click()
    assert page.locator("h1").inner_text() == "I moved to Lisbon."


def test_forget_then_gone_from_search(page, srv):
    assert any("dark mode" in t for t in run(search(srv, srv.alice, "dark mode editor")))
    sign_in(page, srv, srv.alice)
    page.get_by_role("link", name="I prefer dark mode in every editor.").click()
    page.get_by_role("button", name="Forget").click()
    assert page.get_by_role("status").inner_text() == "Memory forgotten."  # no history
    assert "dark mode" not in page.locator("main").inner_text()
    assert not any("dark mode" in t for t in run(search(srv, srv.alice, "dark mode editor")))


def test_edit_stores_a_correction_and_keeps_history(page, srv):
    sign_in(page, srv, srv.alice)
    page.get_by_role("link", name="Our team uses Postgres 16 for production.").click()
    page.get_by_text("Edit", exact=True).click()
    page.get_by_label("Text").fill("Our team uses Postgres 17 for production.")
    page.get_by_label("Importance (0–1)").fill("0.9")
    page.get_by_role("button", name="Save correction").click()
    assert "kept as superseded" in page.get_by_role("status").inner_text()
    assert page.locator("h1").inner_text() == "Our team uses Postgres 17 for production."
    assert "0.900" in page.locator("dl.facts").first.inner_text()
    # The old version is history, not overwritten; search finds only the correction.
    page.get_by_role("link", name="← All memories").click()
    page.get_by_label("State").select_option("superseded")
    page.get_by_role("button", name="Filter").click()
    assert "Postgres 16" in page.locator("table.memories").inner_text()
    found = run(search(srv, srv.alice, "Postgres production"))
    assert any("Postgres 17" in t for t in found) and not any("Postgres 16" in t for t in found)


def test_pin(page, srv):
    sign_in(page, srv, srv.alice)
    page.get_by_role("link", name="Deploys happen on Thursdays.").click()
    page.get_by_role("button", name="Pin", exact=True).click()
    assert "never lower" in page.get_by_role("status").inner_text()
    assert page.get_by_role("button", name="Unpin").is_visible()
    page.get_by_role("link", name="← All memories").click()
    row = page.locator("table.memories tr", has_text="Deploys happen on Thursdays.")
    assert "pinned" in row.inner_text()

    async def pinned_in_tool_results() -> bool:
        async with Agent(srv.url, srv.alice) as a:
            hits = (await a.ok("search_memories", query="when do deploys happen"))["results"]
        return next(h for h in hits if "Deploys" in h["text"]).get("pinned") is True
    assert run(pinned_in_tool_results())


def test_retry_a_failed_job(page, srv, shots):
    srv.fail_flag.write_text("on")
    try:
        run(store_all(srv, srv.alice, ["The build server is called hopper."]))
    finally:
        srv.fail_flag.unlink()
    sign_in(page, srv, srv.alice)
    page.get_by_role("link", name="Queue & health").click()
    assert "failed (1)" in page.locator("nav.tabs").inner_text()
    assert "switched off" in page.locator("table").inner_text()
    server = page.locator("dl.facts").inner_text()
    assert "Storage" in server and "Worker\nrunning: " in server and "0 restarts" in server
    page.screenshot(path=str(shots / "queue.png"), full_page=True)
    page.get_by_role("button", name=re.compile("Retry job")).click()
    assert page.get_by_role("status").inner_text() == "Job queued again."
    for _ in range(50):
        if any("hopper" in t for t in run(search(srv, srv.alice, "build server hopper"))):
            break
        page.wait_for_timeout(100)
    else:
        raise AssertionError("the retried job did not store its memory")


def test_admin_manages_namespaces_and_tokens(page, srv, shots):
    sign_in(page, srv, srv.admin)
    assert page.url.endswith("/ui/admin")
    row = page.locator("table.namespaces tr", has_text="alice")
    assert row.count() == 1 and "4" in row.inner_text()
    page.screenshot(path=str(shots / "admin-namespaces.png"), full_page=True)

    page.get_by_role("textbox", name="Namespace").fill("zoe")
    page.get_by_role("button", name="Open").click()
    page.get_by_role("button", name="Create a token").click()
    token = page.get_by_label("Token for zoe").input_value()
    assert token.startswith("rcl_") and token not in page.url
    page.screenshot(path=str(shots / "admin-new-token.png"), full_page=True)
    run(store_all(srv, token, ["Zoe likes green tea."]))
    page.goto(srv.base + "/ui/admin/namespace?ns=zoe")  # shown once: not on the next visit
    assert token not in page.content()
    token_id = hashlib.sha256(token.encode()).hexdigest()[:16]
    page.get_by_role("button", name=f"Revoke token {token_id}").click()
    assert "revoked" in page.get_by_role("status").inner_text()
    mcp = httpx.post(srv.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                     headers={"Authorization": f"Bearer {token}",
                              "Accept": "application/json, text/event-stream"})
    assert mcp.status_code == 401

    page.get_by_label("Type zoe to confirm").fill("zoe")
    page.get_by_role("button", name="Erase namespace").click()
    assert "Namespace zoe erased: 1 memories" in page.get_by_role("status").inner_text()
    assert page.locator("table.namespaces tr", has_text="zoe").count() == 0
    page.get_by_role("link", name="Audit log").click()
    audit = page.locator("table").inner_text()
    assert "erase_namespace" in audit and "revoke_token" in audit and "admin:ops" in audit
    assert token not in page.content()


def test_admin_browses_a_namespace(page, srv):
    sign_in(page, srv, srv.admin)
    page.get_by_role("link", name="alice", exact=True).click()
    assert "ns=alice" in page.url
    assert page.locator("table.memories tbody tr").count() >= 3
    page.get_by_role("link", name="Search").click()
    assert "ns=alice" in page.url


UNLABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
    .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
    .map(el => el.outerHTML)"""


def test_keyboard_and_labels(page, srv):
    sign_in(page, srv, srv.admin)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    for path in ("/ui/admin", "/ui/admin/namespace?ns=alice", "/ui/memories?ns=alice",
                 "/ui/search?ns=alice&query=team", "/ui/queue?ns=alice", "/ui/admin/audit"):
        page.goto(srv.base + path)
        assert page.evaluate(UNLABELLED) == [], path
    # Forms work from the keyboard alone: type a filter, press Enter.
    page.goto(srv.base + "/ui/memories?ns=alice")
    page.get_by_label("Text contains").focus()
    page.keyboard.type("Lisbon")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=Lisbon**")
    assert page.locator("table.memories tbody tr").count() == 1


def test_admin_exports_a_namespace(page, srv):
    sign_in(page, srv, srv.admin)
    page.goto(srv.base + "/ui/admin/namespace?ns=alice")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export as JSON lines").click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert download.value.suggested_filename == "alice.jsonl"
    assert any("Lisbon" in line for line in lines) and len(lines) >= 3
    page.goto(srv.base + "/ui/admin/audit")
    assert "export_namespace" in page.locator("table").inner_text()


def test_phone_layout(browser, srv, shots):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    sign_in(page, srv, srv.alice)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    page.screenshot(path=str(shots / "phone-memories.png"), full_page=True)
    context.close()


def test_tokens_never_reach_urls_or_the_log(srv):
    log = srv.log_path.read_text(errors="replace")
    for token in (srv.alice, srv.admin):
        assert token not in log


def test_forget_a_fact_forgets_its_history(page, srv):
    sign_in(page, srv, srv.alice)
    page.get_by_role("link", name="I moved to Lisbon.").click()
    page.get_by_role("button", name="Forget").click()
    assert page.get_by_role("status").inner_text() == "Memory forgotten with its history (2 versions)."
    page.get_by_label("State").select_option("all")
    page.get_by_role("button", name="Filter").click()
    listed = page.locator("main").inner_text()
    assert "Lisbon" not in listed and "Berlin" not in listed
    assert not any("Lisbon" in t or "Berlin" in t
                   for t in run(search(srv, srv.alice, "where does the user live")))
