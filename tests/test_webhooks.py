"""Signed webhooks end to end (issue 30): real `recall serve` processes with a static
subscription in recall.toml, a real receiver on loopback that verifies every delivery with
the Standard Webhooks library, agents over MCP, the admin API over HTTP.

Counts in the crash test: sent = changes committed (jobs done), delivered = distinct
webhook-ids the receiver accepted, duplicates = verified repeats of an accepted id, lost =
sent - delivered."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import httpx
import pytest
from standardwebhooks import Webhook

from recall_core.events.signing import new_secret
from recall_testkit.inspector import admin_token, backends, database
from recall_testkit.serverproc import Agent, ServerProcess, free_port
from recall_testkit.webhook_receiver import Receiver, config_toml

FAST = {"retry_base": 0.2, "retry_max": 1.0, "poll_interval": 0.2, "timeout": 5.0}


def serve(work: Path, db: str, toml: str, name: str = "recall.toml",
          args: tuple[str, ...] = ()) -> ServerProcess:
    path = work / name
    path.write_text(toml)
    flag = work / "fail"
    env = {"RECALL_PLUGIN_MODULES": "recall_testkit.plugins.switch_extractor",
           "RECALL_EXTRACTOR": "switch", "RECALL_TEST_FAIL_FILE": str(flag)}
    srv = ServerProcess(db, work, env=env, args=("--config", str(path), *args))
    srv.fail_flag = flag
    return srv.start()


@pytest.fixture(params=backends())
def db(request, tmp_path):
    url, cleanup = database(request.param, tmp_path)
    yield url
    cleanup()


@pytest.fixture
def receiver():
    r = Receiver(new_secret()).start()
    yield r
    r.stop()


async def store(srv: ServerProcess, token: str, *texts: str, wait: bool = True) -> list[str]:
    async with Agent(srv.url, token) as a:
        jobs = []
        for text in texts:
            env = await a.call("store_memory", text=text)
            assert env["status"] == "ok", env
            jobs.append(env["data"]["job_id"])
        if wait:
            for _ in range(600):
                stats = (await a.call("get_memory_stats"))["data"]
                if stats["pending_extractions"] == 0:
                    break
                await asyncio.sleep(0.05)
        return jobs


def test_each_change_arrives_once_signed_and_without_text(tmp_path, db, receiver):
    srv = serve(tmp_path, db, config_toml("alice", receiver.url, receiver.secret, **FAST))
    try:
        token = srv.token("alice")
        other = srv.token("bob")  # no subscription: nothing of bob's is sent
        # one after the other: Bergen's commit must find Oslo current to end it
        jobs = [*asyncio.run(store(srv, token, "I live in Oslo.")),
                *asyncio.run(store(srv, token, "I live in Bergen."))]
        asyncio.run(store(srv, other, "I live in Rome."))
        done = receiver.wait_for(2, "extraction.completed")
        assert [r.data["job_id"] for r in done] == jobs  # in order
        superseded = receiver.wait_for(1, "memory.superseded")
        first_ids = done[0].data["memory_ids"]
        assert superseded[0].data["memory_id"] in first_ids
        assert superseded[0].data["superseded_by"] in done[1].data["memory_ids"]
        assert done[1].data["superseded_ids"] == [superseded[0].data["memory_id"]]

        async def forget_and_fail() -> None:
            async with Agent(srv.url, token) as a:
                mid = done[1].data["memory_ids"][0]
                assert (await a.call("delete_memory", memory_id=mid))["status"] == "ok"
        asyncio.run(forget_and_fail())
        deleted = receiver.wait_for(1, "memory.deleted")
        assert done[1].data["memory_ids"][0] in deleted[0].data["forgotten_ids"]

        srv.fail_flag.write_text("x")
        failed_job = asyncio.run(store(srv, token, "I work at Acme."))[0]
        failed = receiver.wait_for(1, "extraction.failed")
        assert failed[0].data["job_id"] == failed_job and failed[0].data["attempts"] >= 1
        srv.fail_flag.unlink()

        admin = httpx.Client(base_url=srv.base + "/admin", timeout=30,
                             headers={"Authorization": f"Bearer {admin_token(srv)}"})
        assert admin.post("/namespaces/alice/erase", json={"confirm": "alice"}).status_code == 200
        erased = receiver.wait_for(1, "namespace.erased")
        assert set(erased[0].data) == {"namespace", "erased_at"}
        time.sleep(1.0)  # anything sent twice would have arrived by now
        bodies = b"".join(r.body for r in receiver.accepted)
        for text in (b"Oslo", b"Bergen", b"Acme", b"Rome"):
            assert text not in bodies  # ids and metadata only
        assert all(r.data["namespace"] == "alice" for r in receiver.accepted)
        assert len(receiver.verified) == len(set(receiver.verified))  # once per change
        types = sorted(r.type for r in receiver.accepted)
        assert types == sorted(["extraction.completed"] * 2 + ["memory.superseded",
                               "memory.deleted", "extraction.failed", "namespace.erased"])
        assert receiver.rejected == []
        assert receiver.secret not in srv.log()  # the secret is never logged
    finally:
        srv.stop()


def test_events_wait_for_a_receiver_that_is_down(tmp_path, db, receiver):
    receiver.stop()
    srv = serve(tmp_path, db, config_toml("carol", receiver.url, receiver.secret, **FAST))
    try:
        jobs = asyncio.run(store(srv, srv.token("carol"), "I like tea.", "I own a cat."))
        time.sleep(1.5)  # several attempts fail while it is down
        receiver.start()
        got = receiver.wait_for(2, "extraction.completed", timeout=30)
        assert sorted(r.data["job_id"] for r in got) == sorted(jobs)
    finally:
        srv.stop()


def test_sigkill_between_commit_and_delivery_loses_nothing(tmp_path, db, receiver):
    receiver.delay = 0.3  # slow: deliveries are in flight when the server dies
    srv = serve(tmp_path, db, config_toml("dave", receiver.url, receiver.secret, **FAST))
    token = srv.token("dave")
    texts = [f"Fact number {i} is that I own {i} books." for i in range(20)]
    jobs = asyncio.run(store(srv, token, *texts))
    srv.kill()  # committed, some delivered, some in flight, most still in the outbox
    arrived_before = len(receiver.accepted)
    srv.start()
    try:
        got = receiver.wait_for(len(jobs), "extraction.completed", timeout=90)
        ids = [r.data["job_id"] for r in got]
        sent, delivered = len(jobs), len(set(ids))
        duplicates = len(receiver.verified) - len(set(receiver.verified))
        lost = sent - delivered
        print(f"crash test: sent={sent} delivered={delivered} duplicates={duplicates} "
              f"lost={lost} (before the kill: {arrived_before})")
        assert lost == 0 and sorted(ids) == sorted(jobs)
        assert arrived_before < sent  # the kill did land between commit and delivery
    finally:
        srv.stop()


def test_receiver_rejects_tampered_replayed_and_wrongly_signed(tmp_path, db, receiver):
    srv = serve(tmp_path, db, config_toml("erin", receiver.url, receiver.secret, **FAST))
    try:
        asyncio.run(store(srv, srv.token("erin"), "I like jazz."))
        real = receiver.wait_for(1, "extraction.completed")[0]
    finally:
        srv.stop()
    headers = {k: v for k, v in real.headers.items()
               if k.startswith("webhook-") or k == "content-type"}
    assert headers["webhook-signature"].startswith("v1,")
    with httpx.Client() as c:
        replay = c.post(receiver.url, content=real.body, headers=headers)
        assert replay.status_code == 200 and replay.text == "already received"
        tampered = c.post(receiver.url, content=real.body.replace(b"job_id", b"job_iD"),
                          headers=headers)
        assert tampered.status_code == 400
        wrong = Webhook(new_secret()).sign(headers["webhook-id"], real_time(headers),
                                           real.body.decode())
        assert c.post(receiver.url, content=real.body,
                      headers={**headers, "webhook-signature": wrong}).status_code == 400
        old = {**headers, "webhook-timestamp": str(int(time.time()) - 600)}
        assert c.post(receiver.url, content=real.body, headers=old).status_code == 400
    assert len(receiver.rejected) == 3
    assert len(receiver.accepted) == 1


def real_time(headers: dict[str, str]):
    from datetime import datetime, timezone
    return datetime.fromtimestamp(int(headers["webhook-timestamp"]), tz=timezone.utc)


def test_admin_api_subscriptions_rotation_dead_and_replay(tmp_path, db, receiver):
    # No static subscription; loopback targets are refused until the operator allows them.
    strict = serve(tmp_path, db, "[webhooks]\nallow_private_targets = false\n", "strict.toml")
    try:
        admin = httpx.Client(base_url=strict.base + "/admin", timeout=30,
                             headers={"Authorization": f"Bearer {admin_token(strict)}"})
        r = admin.post("/namespaces/frank/webhooks", json={
            "url": receiver.url, "events": ["extraction.completed"]})
        assert r.status_code == 400 and "allow_private_targets" in r.json()["error"]
        # (the last: a DNS label over 63 characters, a 400 naming the host, never a 500)
        for url in ("http://169.254.169.254/latest", "http://[::1]/x",
                    "https://" + "a" * 70 + ".example.com/x"):
            assert admin.post("/namespaces/frank/webhooks", json={
                "url": url, "events": ["memory.deleted"]}).status_code == 400
        # Not http(s) at all: the schema says so (422, FastAPI's validation answer).
        assert admin.post("/namespaces/frank/webhooks", json={
            "url": "ftp://example.com/x", "events": ["memory.deleted"]}).status_code == 422
    finally:
        strict.stop()
    toml = config_toml("nobody", receiver.url, receiver.secret, max_attempts=2, **FAST)
    srv = serve(tmp_path, db, toml)
    try:
        admin = httpx.Client(base_url=srv.base + "/admin", timeout=30,
                             headers={"Authorization": f"Bearer {admin_token(srv)}"})
        r = admin.post("/namespaces/frank/webhooks", json={
            "url": receiver.url, "events": ["extraction.completed", "bogus"]})
        assert r.status_code == 422 and "bogus" in r.text  # event names are in the schema
        made = admin.post("/namespaces/frank/webhooks", json={
            "url": receiver.url, "events": ["extraction.completed"]}).json()
        assert made["secret"].startswith("whsec_") and made["secrets"] == 1
        listed = admin.get("/namespaces/frank/webhooks").json()["subscriptions"]
        assert [s["id"] for s in listed] == [made["id"]] and "secret" not in listed[0]
        assert made["secret"] not in json.dumps(admin.get("/audit").json())
        receiver.secret = made["secret"]
        receiver.answer = 410  # gone: two attempts, then dead
        job = asyncio.run(store(srv, srv.token("frank"), "I like chess."))[0]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            dead = admin.get("/namespaces/frank/webhook-deliveries?status=dead").json()
            if dead["deliveries"]:
                break
            time.sleep(0.2)
        d = dead["deliveries"][0]
        assert d["attempts"] == 2 and d["last_status"] == 410 and d["last_body"] == "not now"
        receiver.answer = 204
        # A rotation: both secrets sign during the overlap; a receiver on either verifies.
        rotated = admin.post(f"/namespaces/frank/webhooks/{made['id']}/rotate",
                             json={}).json()
        assert rotated["secrets"] == 2 and rotated["secret"] != made["secret"]
        receiver.secret = rotated["secret"]
        assert admin.post(f"/namespaces/frank/webhook-deliveries/{d['id']}/replay"
                          ).status_code == 200
        got = receiver.wait_for(1, "extraction.completed")
        assert got[0].data["job_id"] == job
        assert len(got[0].headers["webhook-signature"].split(" ")) == 2
        assert admin.post(f"/namespaces/frank/webhook-deliveries/{d['id']}/replay"
                          ).status_code == 404  # delivered now: no such dead delivery
        assert admin.delete(f"/namespaces/frank/webhooks/{made['id']}").status_code == 200
        assert admin.get("/namespaces/frank/webhooks").json()["subscriptions"] == []
        assert admin.delete(f"/namespaces/frank/webhooks/{made['id']}").status_code == 404
    finally:
        srv.stop()


@pytest.mark.skipif("postgres" not in backends(), reason="needs RECALL_TEST_PG_URL")
def test_two_servers_on_one_postgres_deliver_each_event_once(tmp_path, receiver):
    url, cleanup = database("postgres", tmp_path)
    toml = config_toml("gina", receiver.url, receiver.secret, **FAST)
    one = serve(tmp_path, url, toml)
    two = serve(tmp_path, url, toml, "recall2.toml")
    try:
        token = one.token("gina")

        async def both() -> list[str]:
            texts = [f"Item {i}: I have visited {i} countries." for i in range(30)]
            a, b = await asyncio.gather(store(one, token, *texts[:15]),
                                        store(two, token, *texts[15:]))
            return a + b
        jobs = asyncio.run(both())
        got = receiver.wait_for(len(jobs), "extraction.completed", timeout=60)
        time.sleep(1.0)
        ids = [r.data["job_id"] for r in got]
        assert sorted(ids) == sorted(jobs)
        repeats = len(receiver.verified) - len(set(receiver.verified))
        print(f"two processes: {len(jobs)} events, {repeats} repeats (same webhook-id)")
        # every repeat (at-least-once) carries the webhook-id of the one accepted delivery
        assert set(receiver.verified) == {r.id for r in receiver.accepted}
    finally:
        one.stop()
        two.stop()
        cleanup()


def test_cli_manages_subscriptions(tmp_path):
    from recall_testkit.serverproc import recall_cli

    db, toml = str(tmp_path / "recall.db"), tmp_path / "recall.toml"
    toml.write_text("[webhooks]\nallow_private_targets = true\n")
    recall_cli("create-token", "henry", "--db", db, "--create")
    common = ("--db", db, "--config", str(toml))
    made = json.loads(recall_cli("webhooks", "create", "henry", "http://127.0.0.1:9/hook",
                                 "extraction.completed", "memory.deleted", *common,
                                 "--json").stdout)
    assert made["secret"].startswith("whsec_") and made["events"] == [
        "extraction.completed", "memory.deleted"]
    listed = json.loads(recall_cli("webhooks", "list", "henry", *common, "--json").stdout)
    assert [s["id"] for s in listed] == [made["id"]] and made["secret"] not in json.dumps(listed)
    rotated = json.loads(recall_cli("webhooks", "rotate", "henry", made["id"], *common,
                                    "--json").stdout)
    assert rotated["secrets"] == 2 and rotated["secret"] != made["secret"]
    assert json.loads(recall_cli("webhooks", "deliveries", "henry", *common, "--json").stdout) == []
    bad = recall_cli("webhooks", "replay", "henry", "dlv_nope", *common, check=False)
    assert bad.returncode != 0 and "No dead delivery" in bad.stderr
    refused = recall_cli("webhooks", "create", "henry", "http://127.0.0.1:9/hook",
                         "memory.deleted", "--db", db, check=False)
    assert refused.returncode != 0 and "allow_private_targets" in refused.stderr
    recall_cli("webhooks", "delete", "henry", made["id"], *common)
    assert json.loads(recall_cli("webhooks", "list", "henry", *common, "--json").stdout) == []


def test_inspector_lists_deliveries_and_replays_a_dead_one(tmp_path, receiver):
    from recall_testkit.inspector import signed_in

    receiver.answer = 500
    toml = config_toml("ivy", receiver.url, receiver.secret, max_attempts=2, **FAST)
    srv = serve(tmp_path, str(tmp_path / "recall.db"), toml)
    try:
        owner = srv.token("ivy")
        job = asyncio.run(store(srv, owner, "I like opera."))[0]
        ui = signed_in(srv, owner)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            page = ui.get("/ui/webhooks").text
            if 'class="delivery dead"' in page:
                break
            time.sleep(0.2)
        assert receiver.url in page and "extraction.completed" in page and "500" in page
        assert receiver.secret not in page  # never shown after creation
        did = page.split('class="delivery dead" data-delivery="')[1].split('"')[0]
        # a form without the CSRF value is refused, and changes nothing
        assert ui.post("/ui/webhooks/replay", data={"delivery_id": did}).status_code == 403
        receiver.answer = 204
        r = ui.post("/ui/webhooks/replay", data={"csrf": ui.csrf, "delivery_id": did})
        assert r.status_code == 303 and "queued+again" in r.headers["location"]
        assert receiver.wait_for(1, "extraction.completed")[0].data["job_id"] == job
        # another namespace's token neither sees nor replays ivy's deliveries
        other = signed_in(srv, srv.token("jack"))
        assert receiver.url not in other.get("/ui/webhooks").text
        assert other.get("/ui/webhooks?ns=ivy").status_code == 404
    finally:
        srv.stop()


def test_the_readme_receiver_gets_signed_events_that_survive_a_crash(tmp_path):
    import os
    import re
    import subprocess
    import sys

    from recall_testkit.serverproc import free_port

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## Webhooks", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "receiver.py").write_text(code)
    secret, port = new_secret(), free_port()
    out = open(tmp_path / "receiver.out", "w")
    proc = subprocess.Popen([sys.executable, "-u", "-m", "uvicorn", "receiver:app", "--port",
                             str(port)], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                            env={**os.environ, "RECALL_WEBHOOK_SECRET": secret})
    url = f"http://127.0.0.1:{port}/recall"
    srv = serve(tmp_path, str(tmp_path / "recall.db"),
                config_toml("kim", url, secret, ["extraction.completed"], **FAST))
    try:
        token = srv.token("kim")
        asyncio.run(store(srv, token, "I like tea."))
        srv.kill()  # committed; delivered or not, it must arrive
        srv.start()
        asyncio.run(store(srv, token, "I like coffee."))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            printed = (tmp_path / "receiver.out").read_text()
            if printed.count("stored: kim") >= 2:
                break
            time.sleep(0.2)
        assert printed.count("stored: kim") == 2, printed
        assert "\" 400" not in printed  # every delivery verified (uvicorn access log)
    finally:
        srv.stop()
        proc.terminate()
        proc.wait(timeout=10)
        out.close()


def test_a_slow_receiver_delays_neither_tool_calls_nor_another_namespace(tmp_path):
    slow = Receiver(new_secret(), delay=2.0).start()
    fast = Receiver(new_secret()).start()
    toml = config_toml("slow", slow.url, slow.secret, ["extraction.completed"], **FAST)
    toml += config_toml("fast", fast.url, fast.secret, ["extraction.completed"]).split(
        "\n\n", 1)[1]
    srv = serve(tmp_path, str(tmp_path / "recall.db"), toml)
    try:
        slow_token, fast_token = srv.token("slow"), srv.token("fast")
        asyncio.run(store(srv, slow_token, *[f"I own {i} slow boats." for i in range(4)]))
        t = time.monotonic()
        asyncio.run(store(srv, fast_token, *[f"I own {i} fast cars." for i in range(4)]))
        stored_in = time.monotonic() - t  # four stores and their extraction
        fast.wait_for(4, "extraction.completed", timeout=10)
        fast_done = time.monotonic() - t
        assert len(slow.accepted) < 4  # the slow receiver is still working through its line
        assert stored_in < 3.0 and fast_done < 4.0, (stored_in, fast_done)
        slow.wait_for(4, "extraction.completed", timeout=30)
    finally:
        srv.stop()
        slow.stop()
        fast.stop()


def dead_deliveries(srv: ServerProcess, namespace: str, timeout: float = 30) -> list[dict]:
    admin = httpx.Client(base_url=srv.base + "/admin", timeout=30,
                         headers={"Authorization": f"Bearer {admin_token(srv)}"})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = admin.get(f"/namespaces/{namespace}/webhook-deliveries?status=dead").json()
        if dead["deliveries"]:
            return dead["deliveries"]
        time.sleep(0.2)
    raise AssertionError("no delivery died")


def test_connect_time_check_redirects_and_answer_cap(tmp_path, receiver):
    # A static subscription to loopback with private targets not allowed: stored (the file
    # says so), but every attempt is refused at connect time, and nothing reaches loopback.
    toml = config_toml("lee", receiver.url, receiver.secret, ["extraction.completed"],
                       allow_private=False, max_attempts=2, **FAST)
    srv = serve(tmp_path, str(tmp_path / "recall.db"), toml)
    try:
        asyncio.run(store(srv, srv.token("lee"), "I like rain."))
        dead = dead_deliveries(srv, "lee")[0]
        assert dead["last_status"] is None and "allow_private_targets" in dead["last_error"]
        assert receiver.verified == [] and receiver.rejected == []
    finally:
        srv.stop()
    # Redirects are not followed; a long answer is kept as a short prefix.
    elsewhere = Receiver(receiver.secret).start()
    receiver.answer, receiver.answer_headers = 307, {"location": elsewhere.url}
    receiver.answer_body = "x" * 100_000
    toml = config_toml("mia", receiver.url, receiver.secret, ["extraction.completed"],
                       max_attempts=2, **FAST)
    srv = serve(tmp_path, str(tmp_path / "recall.db"), toml)
    try:
        asyncio.run(store(srv, srv.token("mia"), "I like snow."))
        dead = dead_deliveries(srv, "mia")[0]
        assert dead["last_status"] == 307 and "redirects are not followed" in dead["last_error"]
        assert dead["last_body"] == "x" * 200
        assert len(receiver.verified) == 2 and elsewhere.verified == []
    finally:
        srv.stop()
        elsewhere.stop()


def test_include_text_adds_texts_to_extraction_events_only(tmp_path, receiver):
    srv = serve(tmp_path, str(tmp_path / "recall.db"),
                "[webhooks]\nallow_private_targets = true\n" + "".join(
                    f"{k} = {v}\n" for k, v in FAST.items()))
    try:
        admin = httpx.Client(base_url=srv.base + "/admin", timeout=30,
                             headers={"Authorization": f"Bearer {admin_token(srv)}"})
        made = admin.post("/namespaces/olga/webhooks", json={
            "url": receiver.url, "events": ["extraction.completed", "memory.deleted"],
            "include_text": True}).json()
        receiver.secret = made["secret"]
        token = srv.token("olga")
        asyncio.run(store(srv, token, "I live in Tallinn."))
        done = receiver.wait_for(1, "extraction.completed")[0].data
        assert list(done["texts"].values()) == ["I live in Tallinn."]
        assert set(done["texts"]) == set(done["memory_ids"])

        async def forget() -> None:
            async with Agent(srv.url, token) as a:
                await a.call("delete_memory", memory_id=done["memory_ids"][0])
        asyncio.run(forget())
        deleted = receiver.wait_for(1, "memory.deleted")[0]
        assert "texts" not in deleted.data and b"Tallinn" not in deleted.body
    finally:
        srv.stop()


def test_metrics_show_the_outbox_and_its_deliveries(tmp_path, receiver):
    """Prometheus: recall_webhook_deliveries{status} (the outbox's depth, read at scrape
    time), recall_webhook_attempts_total{outcome} and the commit-to-2xx latency histogram."""
    port = free_port()
    srv = serve(tmp_path, str(tmp_path / "m.db"),
                config_toml("mia", receiver.url, receiver.secret, **FAST),
                args=("--metrics-port", str(port)))
    try:
        asyncio.run(store(srv, srv.token("mia"), "I live in Oslo.", "I live in Bergen."))
        receiver.wait_for(2, "extraction.completed")
        receiver.wait_for(1, "memory.superseded")
        time.sleep(0.5)
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        values = {line.rpartition(" ")[0]: float(line.rpartition(" ")[2])
                  for line in text.splitlines() if line and not line.startswith("#")}
        assert values['recall_webhook_deliveries{status="delivered"}'] >= 3
        assert values.get('recall_webhook_deliveries{status="pending"}', 0) == 0
        assert values['recall_webhook_attempts_total{outcome="delivered"}'] >= 3
        assert values["recall_webhook_delivery_latency_seconds_count"] >= 3
    finally:
        srv.stop()
