"""Scopes beyond the MCP tools, against a `recall serve` process on SQLite and (with
RECALL_TEST_PG_URL) Postgres: A2A skills check the same scopes; the admin API, the CLI and the
inspector's token form make tokens with an agent and scopes and list them; an inspector
sign-in with a read-only token can browse but not change or forget anything."""

from __future__ import annotations

import json
import re
import uuid

import httpx
import pytest

from recall_core.access.tool_scopes import forbidden_message
from recall_testkit.a2a import (A2A, COMPLETED, INPUT_REQUIRED, REJECTED, artifact, data,
                                status_data)
from recall_testkit.inspector import (admin_token, backends, database, run, signed_in,
                                      start_server, store_all)
from recall_testkit.serverproc import Agent, ServerProcess, recall_cli

in_module_loop = pytest.mark.asyncio(loop_scope="module")
READ_TOOLS = {"search_memories", "inspect_memories", "get_memory_stats"}


@pytest.fixture(scope="module", params=backends())
def srv(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"scope-edges-{request.param}")
    db, cleanup = database(request.param, work)
    server = start_server(work, db)
    server.admin = admin_token(server)
    yield server
    server.stop()
    cleanup()


@pytest.fixture(scope="module")
def admin(srv):
    return httpx.Client(base_url=srv.base + "/admin",
                        headers={"Authorization": f"Bearer {srv.admin}"}, timeout=30)


def token(srv: ServerProcess, namespace: str, *extra: str) -> str:
    out = recall_cli("create-token", namespace, "--db", srv.db, "--json", *extra, env=srv.env)
    return json.loads(out.stdout)["token"]


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def texts(srv: ServerProcess, owner: str) -> list[str]:
    async with Agent(srv.url, owner) as a:
        return [m["text"] for m in (await a.ok("inspect_memories", limit=50))["memories"]]


# -- A2A ------------------------------------------------------------------------------------
@in_module_loop
async def test_a2a_skills_need_the_scope_of_the_tool_they_mirror(srv):
    ns = fresh("a2a")
    owner = token(srv, ns)
    reader = token(srv, ns, "--agent", "dashboard", "--scopes", "memory:read")
    writer = token(srv, ns, "--scopes", "memory:write")
    async with A2A(srv.base, owner) as o:
        assert (await o.send(data(text="I live in Oslo."))).status.state == COMPLETED
    async with A2A(srv.base, reader) as r:
        task = await r.send(data(skill="store_memories", text="I moved to Rome."))
        assert task.status.state == REJECTED
        refusal = status_data(task)
        assert refusal["code"] == "FORBIDDEN"
        # The same words as the MCP tools' refusal, naming the skill and the missing scope.
        assert refusal["error"] == forbidden_message("the store_memories skill", "memory:write",
                                                     {"memory:read"})
        found = await r.send(data(skill="search_memories", query="Oslo"))
        assert found.status.state == COMPLETED
        assert artifact(found, "search_results")["total"] == 1
    async with A2A(srv.base, writer) as w:
        task = await w.send(data(skill="search_memories", query="Oslo"))
        assert task.status.state == REJECTED and status_data(task)["code"] == "FORBIDDEN"
        assert "memory:read" in status_data(task)["error"]
    assert await texts(srv, owner) == ["I live in Oslo."]  # the refused store left nothing


@in_module_loop
async def test_a2a_reply_that_would_store_needs_memory_write(srv):
    ns = fresh("a2a-reply")
    owner = token(srv, ns)
    reader = token(srv, ns, "--scopes", "memory:read")
    async with A2A(srv.base, owner) as o, A2A(srv.base, reader) as r:
        assert (await o.send(data(text="I use vim."))).status.state == COMPLETED
        task = await o.send(data(text="I switched to VS Code."))
        assert task.status.state == INPUT_REQUIRED
        task = await r.send(data(decision="keep_new"), task=task)
        assert task.status.state == REJECTED and status_data(task)["code"] == "FORBIDDEN"
        assert "memory:write" in status_data(task)["error"]
    assert await texts(srv, owner) == ["I use vim."]


# -- admin API and CLI ---------------------------------------------------------------------
@in_module_loop
async def test_admin_api_creates_scoped_agent_tokens_and_lists_them(srv, admin):
    ns = fresh("api")
    made = admin.post(f"/namespaces/{ns}/tokens",
                      json={"agent": "dashboard", "scopes": ["memory:read"]})
    assert made.status_code == 201, made.text
    body = made.json()
    assert (body["agent"], body["scopes"]) == ("dashboard", ["memory:read"])
    plain = admin.post(f"/namespaces/{ns}/tokens").json()  # no body: the owner, all scopes
    assert (plain["agent"], plain["scopes"]) == (None, ["memory:read", "memory:write",
                                                         "memory:forget"])
    listed = {t["token_id"]: t for t in admin.get(f"/namespaces/{ns}/tokens").json()["tokens"]}
    assert (listed[body["token_id"]]["agent"], listed[body["token_id"]]["scopes"]) == (
        "dashboard", ["memory:read"])
    assert listed[plain["token_id"]]["scopes"] == plain["scopes"]
    async with Agent(srv.url, body["token"]) as a:
        assert {t.name for t in await a.client.list_tools()} == READ_TOOLS
    audit = admin.get("/audit", params={"limit": 10}).json()["actions"]
    row = next(a for a in audit if a["action"] == "create_token"
               and a["detail"].get("token_id") == body["token_id"])
    assert (row["detail"]["agent"], row["detail"]["scopes"]) == ("dashboard", ["memory:read"])
    assert body["token"] not in json.dumps(audit)
    # The CLI lists the same.
    out = recall_cli("admin", "tokens", ns, "--db", srv.db, env=srv.env).stdout
    line = next(line for line in out.splitlines() if line.startswith(body["token_id"]))
    assert "agent dashboard" in line and line.endswith("memory:read")


@pytest.mark.parametrize("body, where", [
    ({"scopes": ["memory:delete"]}, "scopes"),
    ({"scopes": []}, "scopes"),
    ({"scopes": "memory:read"}, "scopes"),
    ({"agent": "two words"}, "agent"),
    ({"agent": ""}, "agent"),
    ({"agent": "x" * 65}, "agent"),
    ({"namespace": "other"}, "namespace"),
])
def test_admin_api_refuses_bad_token_requests(srv, admin, body, where):
    ns = fresh("bad")
    r = admin.post(f"/namespaces/{ns}/tokens", json=body)
    assert r.status_code == 422, r.text
    assert where in json.dumps(r.json()["detail"])
    assert admin.get(f"/namespaces/{ns}/tokens").json()["tokens"] == []


def test_cli_refuses_scopes_on_an_admin_token_and_unknown_scopes(srv):
    bad = recall_cli("create-token", "--admin", "--scopes", "memory:read", "--db", srv.db,
                     env=srv.env, check=False)
    assert bad.returncode != 0 and "namespace tokens" in bad.stderr
    bad = recall_cli("create-token", "x", "--scopes", "memory:all", "--db", srv.db,
                     env=srv.env, check=False)
    assert bad.returncode != 0 and "memory:read, memory:write, memory:forget" in bad.stderr
    out = recall_cli("create-token", "x", "--agent", "planner", "--scopes",
                     "memory:write,memory:read", "--db", srv.db, env=srv.env).stdout
    assert "agent 'planner' in namespace 'x', scopes memory:read, memory:write" in out


# -- inspector ------------------------------------------------------------------------------
def test_inspector_read_only_sign_in_browses_but_cannot_change(srv):
    ns = fresh("ui")
    owner = token(srv, ns)
    run(store_all(srv, owner, ["My locker code is 4711."]))
    reader = signed_in(srv, token(srv, ns, "--agent", "dash", "--scopes", "memory:read"))
    page = reader.get("/ui/memories")
    assert page.status_code == 200 and "4711" in page.text
    (memory_id,) = set(re.findall(r"/ui/memories/([0-9a-f-]{36})", page.text))
    detail = reader.get(f"/ui/memories/{memory_id}")
    assert detail.status_code == 200 and "agent dash" in detail.text
    assert "/forget" not in detail.text and "/pin" not in detail.text  # forms it may not send
    assert reader.get("/ui/search", params={"query": "locker"}).status_code == 200
    for action, scope in (("forget", "memory:forget"), ("pin", "memory:write"),
                          ("edit", "memory:write")):
        r = reader.post(f"/ui/memories/{memory_id}/{action}",
                        data={"csrf": reader.csrf, "pinned": "1", "text": "changed"})
        assert r.status_code == 403 and scope in r.text, (action, r.status_code)
    assert run(texts(srv, owner)) == ["My locker code is 4711."]
    writer = signed_in(srv, token(srv, ns, "--scopes", "memory:write"))
    refused = writer.get("/ui/memories")
    assert refused.status_code == 403 and "memory:read" in refused.text
    forgetter = signed_in(srv, token(srv, ns, "--scopes", "memory:read,memory:forget"))
    assert "/forget" in forgetter.get(f"/ui/memories/{memory_id}").text
    done = forgetter.post(f"/ui/memories/{memory_id}/forget", data={"csrf": forgetter.csrf})
    assert done.status_code == 303
    assert run(texts(srv, owner)) == []


def test_inspector_token_form_takes_agent_and_scopes(srv):
    ns = fresh("form")
    ops = signed_in(srv, srv.admin)
    form = ops.get("/ui/admin/namespace", params={"ns": ns}).text
    assert 'name="agent"' in form and all(f'name="{s}"' in form for s in
                                          ("memory:read", "memory:write", "memory:forget"))
    made = ops.post("/ui/admin/tokens", data={"csrf": ops.csrf, "ns": ns, "agent": "planner",
                                              "memory:read": "1", "memory:write": "1"})
    assert made.status_code == 200
    assert "agent planner in " in made.text and "memory:read, memory:write" in made.text
    raw = re.search(r'id="new-token" class="token" readonly value="([^"]+)"', made.text).group(1)

    async def tools() -> set[str]:
        async with Agent(srv.url, raw) as a:
            return {t.name for t in await a.client.list_tools()}
    assert run(tools()) == READ_TOOLS | {"store_memory", "consolidate_memories"}
    none = ops.post("/ui/admin/tokens", data={"csrf": ops.csrf, "ns": ns, "agent": ""})
    assert none.status_code == 400 and "scopes is empty" in none.text
    bad = ops.post("/ui/admin/tokens", data={"csrf": ops.csrf, "ns": ns, "agent": "a b",
                                             "memory:read": "1"})
    assert bad.status_code == 400 and "not a plain name" in bad.text
    listing = ops.get("/ui/admin/namespace", params={"ns": ns}).text
    assert listing.count("<td>planner</td>") == 1
