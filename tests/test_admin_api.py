"""The admin API over real HTTP against a `recall serve` process, and the same operations
from the CLI: permission levels, tokens, erasure, export/import, the queue, the audit log."""

from __future__ import annotations

import hashlib
import json
import time

import httpx
import pytest

from recall_testkit.inspector import backends, database, start_server
from recall_testkit.serverproc import Agent, ServerProcess, recall_cli


@pytest.fixture(scope="module", params=backends())
def srv(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"admin-{request.param}")
    db, cleanup = database(request.param, work)
    server = start_server(work, db)
    yield server
    server.stop()
    cleanup()


def admin_token(srv: ServerProcess, name: str = "ops") -> str:
    out = recall_cli("create-token", "--admin", "--name", name, "--db", srv.db, "--json",
                     env=srv.env)
    data = json.loads(out.stdout)
    assert data["admin"] == name and data["token"].startswith("rcla_")
    return data["token"]


@pytest.fixture(scope="module")
def admin(srv):
    return httpx.Client(base_url=srv.base + "/admin",
                        headers={"Authorization": f"Bearer {admin_token(srv)}"}, timeout=30)


def mcp_status(srv: ServerProcess, token: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    return httpx.post(srv.url, json=body, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}).status_code


def test_permission_levels_are_separate(srv, admin):
    ns_token = srv.token("alice")
    adm = admin.headers["Authorization"].split()[1]
    url = srv.base + "/admin/namespaces"
    missing = httpx.get(url)
    assert missing.status_code == 401 and missing.json()["code"] == "UNAUTHORIZED"
    assert missing.headers["www-authenticate"] == "Bearer"
    assert httpx.get(url, headers={"Authorization": "Bearer rcla_nope"}).status_code == 401
    forbidden = httpx.get(url, headers={"Authorization": f"Bearer {ns_token}"})
    assert forbidden.status_code == 403 and "admin token" in forbidden.json()["error"]
    assert admin.get("/namespaces").status_code == 200
    # An admin token is no MCP or A2A token; a namespace token is.
    assert mcp_status(srv, adm) == 401
    assert mcp_status(srv, ns_token) == 200
    a2a = httpx.post(srv.base + "/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks",
                                             "params": {}},
                     headers={"Authorization": f"Bearer {adm}"})
    assert a2a.status_code == 401


def test_every_admin_route_refuses_other_credentials(srv, admin):
    """Loop over every operation of the OpenAPI document: no token 401, a namespace token 403,
    an unknown token 401; and nothing changed."""
    ns_token = srv.token("henry")
    doc = httpx.get(srv.base + "/admin/openapi.json").json()
    before = admin.get("/namespaces").json()
    for path, ops in doc["paths"].items():
        url = srv.base + "/admin" + path.format(namespace="henry", token_id="0" * 16,
                                                job_id="nope", memory_id="nope",
                                                call_id="nope", grant_id="0" * 16, sub_id="nope",
                                                delivery_id="nope")
        for method in ops:
            body = {"confirm": "henry"} if path.endswith("/erase") else \
                {"memories": [{"text": "x"}]} if path.endswith("/import") else None
            for token, status in ((None, 401), (ns_token, 403), ("rcla_unknown", 401)):
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                r = httpx.request(method.upper(), url, json=body, headers=headers)
                assert r.status_code == status, (method, path, token and token[:5], r.text)
    assert admin.get("/namespaces").json() == before
    assert mcp_status(srv, ns_token) == 200  # henry was not erased


def test_openapi_document_describes_every_route(srv, admin):
    doc = httpx.get(srv.base + "/admin/openapi.json").json()  # public: carries no data
    assert doc["servers"] == [{"url": "/admin"}]
    paths = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert paths == {("GET", "/namespaces"), ("GET", "/namespaces/{namespace}/tokens"),
                     ("POST", "/namespaces/{namespace}/tokens"),
                     ("DELETE", "/namespaces/{namespace}/tokens/{token_id}"),
                     ("POST", "/namespaces/{namespace}/erase"),
                     ("GET", "/namespaces/{namespace}/export"),
                     ("POST", "/namespaces/{namespace}/import"), ("GET", "/jobs"),
                     ("POST", "/jobs/{job_id}/retry"), ("GET", "/audit"),
                     ("GET", "/namespaces/{namespace}/memories/{memory_id}/retrievals"),
                     ("GET", "/namespaces/{namespace}/calls/{call_id}"),
                     ("GET", "/namespaces/{namespace}/oauth-grants"),
                     ("DELETE", "/namespaces/{namespace}/oauth-grants/{grant_id}"),
                     # webhooks (issue 30): tests/test_webhooks.py
                     ("GET", "/namespaces/{namespace}/webhooks"),
                     ("POST", "/namespaces/{namespace}/webhooks"),
                     ("DELETE", "/namespaces/{namespace}/webhooks/{sub_id}"),
                     ("POST", "/namespaces/{namespace}/webhooks/{sub_id}/rotate"),
                     ("GET", "/namespaces/{namespace}/webhook-deliveries"),
                     ("POST", "/namespaces/{namespace}/webhook-deliveries/{delivery_id}/replay")}
    assert doc["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


async def test_token_lifecycle_and_audit(srv, admin):
    made = admin.post("/namespaces/carol/tokens")
    assert made.status_code == 201
    token, tid = made.json()["token"], made.json()["token_id"]
    async with Agent(srv.url, token) as a:
        await a.ok("store_memory", text="Carol's team ships on Fridays.")
    listed = admin.get("/namespaces/carol/tokens").json()["tokens"]
    assert [t["token_id"] for t in listed] == [tid] and listed[0]["revoked_at"] is None
    names = {n["namespace"]: n for n in admin.get("/namespaces").json()["namespaces"]}
    assert names["carol"]["active_tokens"] == 1 and names["carol"]["last_activity"]

    assert admin.delete(f"/namespaces/carol/tokens/{tid}").json() == {"revoked": tid}
    assert mcp_status(srv, token) == 401
    again = admin.delete(f"/namespaces/carol/tokens/{tid}")
    assert again.status_code == 404 and again.json()["code"] == "NOT_FOUND"

    actions = admin.get("/audit", params={"limit": 10}).json()["actions"]
    mine = [a for a in actions if a["namespace"] == "carol"]
    assert [(a["action"], a["result"]) for a in mine] == [
        ("revoke_token", "error"), ("revoke_token", "ok"), ("create_token", "ok")]
    assert all(a["actor"] == "admin:ops" for a in mine)
    assert mine[2]["detail"]["token_id"] == tid
    assert token not in json.dumps(actions), "a raw token must never reach the audit log"


async def test_erase_needs_the_name_typed(srv, admin):
    token = admin.post("/namespaces/dave/tokens").json()["token"]
    async with Agent(srv.url, token) as a:
        await a.ok("store_memory", text="Dave prefers tea over coffee.")
        await a.wait_idle()
    wrong = admin.post("/namespaces/dave/erase", json={"confirm": "DELETE MY DATA"})
    assert wrong.status_code == 400 and wrong.json()["code"] == "CONFIRM_REQUIRED"
    done = admin.post("/namespaces/dave/erase", json={"confirm": "dave"})
    assert done.status_code == 200 and done.json()["tokens_revoked"] == 1
    assert done.json()["memories_deleted"] >= 1
    assert "dave" not in {n["namespace"] for n in admin.get("/namespaces").json()["namespaces"]}
    assert mcp_status(srv, token) == 401
    # The audit keeps what happened and the receipt's digest, but no longer names the erased
    # namespace, not even by a hash of its name (a guess could be checked against that).
    receipt = done.json()["receipt"]
    assert receipt["namespace"] == "dave" and receipt["deleted"]["memories"] >= 1
    actions = admin.get("/audit", params={"limit": 200}).json()["actions"]
    label = "erased:" + receipt["digest"][:16]
    mine = [a for a in actions if a["namespace"] == label]
    assert [a["action"] for a in mine][:3] == ["erase_namespace", "erase_namespace", "create_token"]
    assert mine[0]["detail"]["receipt_digest"] == receipt["digest"]
    assert mine[0]["actor"] == "admin:ops"
    assert '"dave"' not in json.dumps(actions)
    assert hashlib.sha256(b"dave").hexdigest()[:16] not in json.dumps(actions)


async def test_an_erase_by_the_tool_also_anonymises_the_audit(srv, admin):
    token = admin.post("/namespaces/ivy/tokens").json()["token"]
    async with Agent(srv.url, token) as a:
        await a.ok("store_memory", text="Ivy waters the plants on Mondays.")  # (lists the tools)
        erased = await a.ok("delete_namespace_data", confirm="DELETE MY DATA")
    receipt = erased["receipt"]
    assert receipt["namespace"] == "ivy" and receipt["tokens_revoked"] == 1
    assert mcp_status(srv, token) == 401  # kept by hash only: still refused
    deadline = time.monotonic() + 5
    while '"ivy"' in json.dumps(admin.get("/audit", params={"limit": 200}).json()):
        assert time.monotonic() < deadline, "audit rows still name the erased namespace"
        time.sleep(0.1)
    actions = admin.get("/audit", params={"limit": 200}).json()["actions"]
    (row,) = [a for a in actions if a["detail"].get("receipt_digest") == receipt["digest"]]
    assert row["action"] == "erase_namespace" and row["namespace"] == "erased:" + receipt["digest"][:16]


def test_import_then_export(srv, admin):
    lines = [{"text": "Eve's laptop runs Fedora 41.", "type": "fact", "topic": "it"},
             {"text": "Eve prefers vim keybindings.", "type": "preference", "importance": 0.8}]
    bad = admin.post("/namespaces/eve/import", json={"memories": [{"text": " "}]})
    assert bad.status_code == 422
    assert admin.post("/namespaces/eve/import", json={"memories": lines}).json() == \
        {"lines": 2, "imported": 2}
    exported = admin.get("/namespaces/eve/export")
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    rows = [json.loads(x) for x in exported.text.splitlines()]
    assert sorted(r["text"] for r in rows) == sorted(x["text"] for x in lines)
    assert {r["importance"] for r in rows} == {0.5, 0.8}


def test_import_refuses_values_of_the_wrong_json_type(srv, admin):
    # The OpenAPI document says pinned is a boolean, importance a number, times strings;
    # pydantic's lax parsing used to take 0 as false, true as 1.0 and 0 as 1970-01-01.
    for wrong in ({"pinned": 0}, {"pinned": "yes"}, {"importance": True}, {"access_count": False},
                  {"created_at": 0}, {"last_accessed_at": 1.5},
                  # a time at the calendar's edge whose UTC instant falls before year 1 (the
                  # schema test found it: it answered 500 after nothing was checked)
                  {"valid_from": "0001-01-01T00:00:01.0+00:03"}):
        bad = admin.post("/namespaces/wendy/import",
                         json={"memories": [{"text": "Wendy keeps bees.", **wrong}]})
        assert bad.status_code == 422, (wrong, bad.text)
        assert next(iter(wrong)) in json.dumps(bad.json()["detail"])
    assert admin.get("/namespaces/wendy/export").text == ""  # nothing was imported
    good = admin.post("/namespaces/wendy/import", json={"memories": [
        {"text": "Wendy keeps bees.", "pinned": True, "importance": 1, "access_count": 2,
         "created_at": "2025-05-01T10:00:00Z"}]})
    assert good.json() == {"lines": 1, "imported": 1}
    (row,) = [json.loads(x) for x in admin.get("/namespaces/wendy/export").text.splitlines()]
    assert row["pinned"] is True and row["importance"] == 1.0


async def test_failed_job_is_listed_and_retried(srv, admin):
    token = srv.token("frank")
    srv.fail_flag.write_text("on")
    try:
        async with Agent(srv.url, token) as a:
            job = (await a.ok("store_memory", text="Frank's build server is called hopper."))["job_id"]
            await a.wait_idle()
    finally:
        srv.fail_flag.unlink()
    failed = admin.get("/jobs", params={"namespace": "frank", "status": "failed"}).json()
    assert [j["id"] for j in failed["jobs"]] == [job]
    assert failed["jobs"][0]["error"] == "the extraction service is switched off (test)"
    assert failed["counts"]["failed"] == 1
    assert admin.post(f"/jobs/{job}/retry").json() == {"retried": job}
    assert admin.post(f"/jobs/{job}/retry").status_code == 404  # no longer failed
    async with Agent(srv.url, token) as a:
        await a.wait_idle()
        found = await a.ok("search_memories", query="build server hopper")
    assert found["results"] and "hopper" in found["results"][0]["text"]
    done = admin.get("/jobs", params={"namespace": "frank", "status": "done"}).json()
    assert [j["id"] for j in done["jobs"]] == [job] and done["jobs"][0]["attempts"] == 1


def test_bad_input_is_a_clear_4xx(admin):
    for resp in (admin.get("/namespaces", params={"limit": 0}),
                 admin.get("/namespaces", params={"limit": "ten"}),
                 admin.get("/jobs", params={"status": "stuck"}),
                 admin.delete("/namespaces/alice/tokens/not-hex"),
                 admin.post("/namespaces/alice/erase", json={}),
                 admin.post("/namespaces/alice/import", content=b"{not json",
                            headers={"content-type": "application/json"})):
        assert resp.status_code == 422, resp.text
        assert resp.json()["detail"]
    assert admin.post("/namespaces/%20x/tokens").status_code == 422


@pytest.mark.slow
def test_cli_has_the_same_operations(srv):
    db = ("--db", srv.db)
    token = json.loads(recall_cli("create-token", "gina", *db, "--json", env=srv.env).stdout)["token"]
    names = json.loads(recall_cli("admin", "namespaces", *db, "--json", env=srv.env).stdout)
    assert "gina" in {n["namespace"] for n in names["namespaces"]}
    tokens = json.loads(recall_cli("admin", "tokens", "gina", *db, "--json", env=srv.env).stdout)
    (tid,) = [t["token_id"] for t in tokens["tokens"]]
    recall_cli("admin", "revoke", "gina", tid, *db, env=srv.env)
    assert mcp_status(srv, token) == 401
    refused = recall_cli("admin", "erase", "gina", "--confirm", "nope", *db, env=srv.env,
                         check=False)
    assert refused.returncode == 1 and "CONFIRM_REQUIRED" in refused.stderr
    erased = json.loads(recall_cli("admin", "erase", "gina", "--confirm", "gina", *db, "--json",
                                   env=srv.env).stdout)
    jobs = json.loads(recall_cli("admin", "jobs", "--status", "done", *db, "--json",
                                 env=srv.env).stdout)
    assert set(jobs["counts"]) == {"queued", "running", "done", "failed"}
    audit = json.loads(recall_cli("admin", "audit", *db, "--json", env=srv.env).stdout)
    latest = audit["actions"][0]
    assert latest["action"] == "erase_namespace"
    assert latest["namespace"] == "erased:" + erased["receipt"]["digest"][:16]
    assert latest["actor"].startswith("cli") and latest["result"] == "ok"
    # create-token goes through the same service: audited like the API's, never the token
    gina = [(a["action"], a["actor"].split(":")[0]) for a in audit["actions"]
            if a["namespace"] == latest["namespace"]]
    assert gina == [("erase_namespace", "cli"), ("erase_namespace", "cli"),
                    ("revoke_token", "cli"), ("create_token", "cli")], gina
    assert token not in json.dumps(audit)
    # An admin token can be revoked like any other.
    adm = admin_token(srv, "temp")
    recall_cli("revoke-token", adm, *db, env=srv.env)
    deadline = time.monotonic() + 5
    while httpx.get(srv.base + "/admin/audit", headers={"Authorization": f"Bearer {adm}"}).status_code != 401:
        assert time.monotonic() < deadline
        time.sleep(0.1)
