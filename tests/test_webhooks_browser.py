"""The inspector's Webhooks page in a real Chromium (Playwright), against a `recall serve`
process: the namespace owner subscribes a receiver (the secret shown once), sees a dead
delivery in the log and replays it with the page's button. Skipped where Chromium or
Playwright is missing."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from recall_testkit.inspector import CHROMIUM, chromium_missing, run, store_all
from recall_testkit.serverproc import ServerProcess
from recall_testkit.webhook_receiver import Receiver

FAST = {"retry_base": 0.2, "retry_max": 1.0, "poll_interval": 0.2, "timeout": 5.0}

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")


def test_owner_subscribes_and_replays_a_dead_delivery(tmp_path):
    from playwright.sync_api import sync_playwright

    receiver = Receiver("whsec_placeholder0000000000000000", answer=500).start()
    toml = "[webhooks]\nallow_private_targets = true\nmax_attempts = 2\n" + "".join(
        f"{k} = {v}\n" for k, v in FAST.items())
    (tmp_path / "recall.toml").write_text(toml)
    srv = ServerProcess(str(tmp_path / "recall.db"), tmp_path,
                        args=("--config", str(tmp_path / "recall.toml"))).start()
    shots = Path(os.environ.get("RECALL_SCREENSHOTS") or tmp_path)
    try:
        owner = srv.token("nina")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.on("dialog", lambda d: d.accept())
            page.goto(srv.base + "/ui/")
            page.get_by_label("Token").fill(owner)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_role("link", name="Webhooks").click()
            assert "No subscriptions." in page.inner_text("main")
            page.get_by_label("Receiver URL").fill(receiver.url)
            page.get_by_label("extraction.completed").check()
            page.get_by_role("button", name="Subscribe").click()
            secret = page.locator("#new-secret").input_value()
            assert secret.startswith("whsec_")
            receiver.secret = secret
            page.goto(srv.base + "/ui/webhooks")
            assert secret not in page.content()  # shown once
            run(store_all(srv, owner, ["I like sailing."]))
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not page.locator("tr.delivery.dead").count():
                time.sleep(0.3)
                page.reload()
            assert "500" in page.locator("tr.delivery.dead").inner_text()
            page.screenshot(path=str(shots / "webhooks.png"), full_page=True)
            receiver.answer = 204
            page.get_by_role("button", name="Replay delivery").click()
            assert "queued again" in page.inner_text("main")
            got = receiver.wait_for(1, "extraction.completed")
            assert got[0].data["namespace"] == "nina"
            browser.close()
    finally:
        srv.stop()
        receiver.stop()
