"""End to end over real HTTP with fastmcp.Client against a `recall serve` process."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid

import httpx
import pytest

from recall_testkit.serverproc import Agent

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def tokens(server):
    return {"alice": server.token("alice"), "bob": server.token("bob")}


async def test_store_then_search_finds_it(server, tokens):
    async with Agent(server.url, tokens["alice"]) as a:
        ack = await a.ok("store_memory", text="I prefer dark mode in every editor.",
                         topic="ui")
        assert ack["queued"] is True and ack["job_id"]
        await a.wait_idle()
        found = await a.ok("search_memories", query="which mode does the user prefer?")
        assert found["total"] >= 1
        top = found["results"][0]
        assert "dark mode" in top["text"]
        assert top["type"] == "preference"
        assert 0 <= top["score"] <= 1
        assert set(top) >= {"id", "text", "topic", "type", "importance", "created_at", "score"}


async def test_retry_with_same_key_writes_nothing_more(server, tokens):
    key = f"k-{uuid.uuid4()}"
    async with Agent(server.url, tokens["alice"]) as a:
        first = await a.ok("store_memory", text="Our staging server runs Debian 12.",
                           idempotency_key=key)
        await a.wait_idle()
        before = (await a.ok("inspect_memories", limit=50))["total"]
        again = await a.ok("store_memory", text="Our staging server runs Debian 12.",
                           idempotency_key=key)
        assert again == {"queued": False, "cached": True, "job_id": first["job_id"],
                         "status": "done", "idempotency_key": key}
        await a.wait_idle()
        assert (await a.ok("inspect_memories", limit=50))["total"] == before
        # Same key, different text: a client bug, refused without writing anything.
        clash = await a.call("store_memory", text="something else", idempotency_key=key)
        assert clash["code"] == "INVALID_PARAM" and "already used" in clash["error"]


async def test_concurrent_same_key_makes_one_operation(server, tokens):
    key = f"burst-{uuid.uuid4()}"
    async with Agent(server.url, tokens["alice"]) as a:
        acks = await asyncio.gather(*(a.ok("store_memory", text="The release train leaves on Thursdays.",
                                           idempotency_key=key) for _ in range(50)))
        job_ids = {ack["job_id"] for ack in acks}
        assert len(job_ids) == 1
        assert sum(1 for ack in acks if ack["queued"]) == 1
        await a.wait_idle()
        hits = await a.ok("search_memories", query="release train Thursdays", limit=50)
        assert sum("release train" in r["text"] for r in hits["results"]) == 1


async def test_namespaces_are_isolated(server, tokens):
    async with Agent(server.url, tokens["alice"]) as a, Agent(server.url, tokens["bob"]) as b:
        await a.ok("store_memory", text="My locker code is 4711.", topic="secrets")
        await a.wait_idle()
        mine = await a.ok("search_memories", query="locker code")
        assert mine["results"], "alice must find her own memory"
        memory_id = mine["results"][0]["id"]

        theirs = await b.ok("search_memories", query="locker code 4711")
        assert theirs["results"] == []
        page = await b.ok("inspect_memories", limit=50)
        assert all("4711" not in m["text"] for m in page["memories"])
        deleted = await b.call("delete_memory", memory_id=memory_id)
        assert deleted["code"] == "MEMORY_NOT_FOUND"
        assert "inspect_memories" in deleted["error"]
        stats_b = await b.ok("get_memory_stats")
        assert stats_b["total"] == page["total"]
        # Still there for alice.
        assert (await a.ok("search_memories", query="locker code"))["results"][0]["id"] == memory_id


async def test_inspect_pages_at_most_50(server):
    token = server.token(f"pager-{uuid.uuid4().hex[:8]}")
    async with Agent(server.url, token) as a:
        for i in range(55):
            await a.ok("store_memory", text=f"Project note number {i}: milestone {i} uses component C{i}.")
        await a.wait_idle(60)
        first = await a.ok("inspect_memories", limit=500)
        assert len(first["memories"]) == 50 and first["has_more"] is True
        assert first["total"] == 55 and first["next_offset"] == 50
        second = await a.ok("inspect_memories", limit=50, offset=first["next_offset"])
        assert len(second["memories"]) == 5 and second["has_more"] is False
        assert second["next_offset"] is None
        ids = [m["id"] for m in first["memories"] + second["memories"]]
        assert len(set(ids)) == 55
        capped = await a.ok("search_memories", query="project note milestone", limit=1000)
        assert capped["total"] <= 50


BAD_INPUTS = [
    ("store_memory", {"text": ""}, "INVALID_PARAM"),
    ("store_memory", {"text": "   \n "}, "INVALID_PARAM"),
    ("store_memory", {"text": "x" * (256 * 1024 + 1)}, "TEXT_TOO_LARGE"),
    ("store_memory", {"text": 42}, "INVALID_PARAM"),
    ("search_memories", {"query": ""}, "INVALID_PARAM"),
    ("search_memories", {"query": "   "}, "INVALID_PARAM"),
    ("search_memories", {"query": "x", "limit": -1}, "INVALID_PARAM"),
    ("search_memories", {"query": "x", "limit": 0}, "INVALID_PARAM"),
    ("search_memories", {"query": "x", "recency_weight": 1.5}, "INVALID_PARAM"),
    ("search_memories", {"query": "x", "mmr_lambda": -0.1}, "INVALID_PARAM"),
    ("search_memories", {"query": "x", "max_tokens": 0}, "INVALID_PARAM"),
    ("inspect_memories", {"offset": -1}, "INVALID_PARAM"),
    ("inspect_memories", {"limit": -1}, "INVALID_PARAM"),
    ("delete_memory", {"memory_id": "no-such-id"}, "MEMORY_NOT_FOUND"),
    ("delete_namespace_data", {"confirm": "yes"}, "CONFIRM_REQUIRED"),
    ("consolidate_memories", {"topic": "ui"}, "EMBEDDINGS_REQUIRED"),
]


@pytest.mark.parametrize(("tool", "args", "code"), BAD_INPUTS,
                         ids=[f"{t}-{c}-{i}" for i, (t, _, c) in enumerate(BAD_INPUTS)])
async def test_bad_input_gets_structured_error_and_changes_nothing(server, tool, args, code):
    token = server.token(f"bad-{uuid.uuid4().hex[:8]}")
    async with Agent(server.url, token) as a:
        env = await a.call(tool, **args)
        assert env["status"] == "error" and env["code"] == code and env["data"] is None
        assert len(env["error"]) > 30  # says what was wrong and what to do
        stats = await a.ok("get_memory_stats")
        assert stats["total"] == 0 and stats["pending_extractions"] == 0


async def test_blank_query_error_points_to_inspect(server, tokens):
    async with Agent(server.url, tokens["alice"]) as a:
        env = await a.call("search_memories", query=" ")
        assert "inspect_memories" in env["error"]


async def test_missing_or_bad_token_is_401_before_any_tool(server):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    r = httpx.post(server.url, json=body, headers=headers)
    assert r.status_code == 401
    # A reason a person can act on, and a bare Bearer challenge: no resource_metadata or
    # re-registration text that would send a client into OAuth discovery (Recall has none).
    assert r.headers["www-authenticate"] == 'Bearer realm="recall"'
    assert r.json()["error"] == "unauthorized"
    assert "Authorization: Bearer <token>" in r.json()["error_description"]
    assert "recall create-token" in r.json()["error_description"]
    r = httpx.post(server.url, json=body, headers={**headers, "Authorization": "Bearer rcl_nope"})
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == 'Bearer realm="recall", error="invalid_token"'
    assert r.json()["error"] == "invalid_token" and "revoked" in r.json()["error_description"]
    assert "register" not in r.text.lower() and "oauth" not in r.headers["www-authenticate"].lower()
    assert httpx.get(server.base + "/.well-known/oauth-protected-resource").status_code == 404


async def test_errors_carry_is_error_on_the_wire(server, tokens):
    # The raw JSON-RPC answer, as any client (not only fastmcp's) reads it.
    headers = {"Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {tokens['alice']}"}
    async with httpx.AsyncClient(headers=headers) as http:
        init = await http.post(server.url, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}})
        session = {"mcp-session-id": init.headers["mcp-session-id"]}
        await http.post(server.url, headers=session,
                        json={"jsonrpc": "2.0", "method": "notifications/initialized"})

        async def call(name, args):
            r = await http.post(server.url, headers=session, json={
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": name, "arguments": args}})
            return r.json()["result"]

        bad = await call("delete_memory", {"memory_id": "no-such-id"})
        assert bad["isError"] is True
        assert bad["structuredContent"]["code"] == "MEMORY_NOT_FOUND"
        assert json.loads(bad["content"][0]["text"])["status"] == "error"
        schema_bad = await call("search_memories", {"query": "x", "limit": "many"})
        assert schema_bad["isError"] is True
        assert schema_bad["structuredContent"]["code"] == "INVALID_PARAM"
        good = await call("get_memory_stats", {})
        assert good.get("isError", False) is False and good["structuredContent"]["status"] == "ok"


async def test_erasure_revokes_token(server):
    token = server.token(f"erase-{uuid.uuid4().hex[:8]}")
    async with Agent(server.url, token) as a:
        await a.ok("store_memory", text="I live in Lisbon.")
        await a.wait_idle()
        env = await a.ok("delete_namespace_data", confirm="DELETE MY DATA")
        assert env["memories_deleted"] >= 1 and env["tokens_revoked"] == 1
    r = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                   headers={"Accept": "application/json, text/event-stream",
                            "Authorization": f"Bearer {token}"})
    assert r.status_code == 401
    with pytest.raises(Exception):
        async with Agent(server.url, token) as a:
            await a.call("get_memory_stats")


async def test_audit_log_line_per_call(server, tokens):
    async with Agent(server.url, tokens["bob"]) as b:
        await b.call("delete_memory", memory_id="missing-for-audit")
    await asyncio.sleep(0.2)
    lines = [json.loads(line.split(": ", 1)[1]) for line in server.log().splitlines()
             if "recall.audit" in line and "tool_call" in line]
    from recall_core.server.mcp.default_middleware import namespace_hash
    assert all("namespace" not in r for r in lines)  # the log names tenants by hash only
    match = [r for r in lines if r["tool"] == "delete_memory" and r["namespace_hash"] == namespace_hash("bob")]
    assert match and match[-1]["status"] == "error" and match[-1]["code"] == "MEMORY_NOT_FOUND"
    assert match[-1]["duration_ms"] >= 0 and len(match[-1]["inputs_hash"]) == 64
    # and its tool_call_records row, written in a batch right after the answer
    rows: list = []
    for _ in range(50):
        with sqlite3.connect(server.db) as conn:
            rows = conn.execute(
                "SELECT status, code FROM tool_call_records WHERE tool = 'delete_memory' "
                "AND namespace = 'bob' AND inputs_hash = ?", (match[-1]["inputs_hash"],)).fetchall()
        if rows:
            break
        await asyncio.sleep(0.1)
    assert rows == [("error", "MEMORY_NOT_FOUND")]


async def test_tools_are_annotated_and_documented(server, tokens):
    async with Agent(server.url, tokens["alice"]) as a:
        tools = {t.name: t for t in await a.client.list_tools()}
    assert set(tools) == {"store_memory", "search_memories", "inspect_memories", "delete_memory",
                          "get_memory_stats", "consolidate_memories", "delete_namespace_data"}
    assert tools["search_memories"].annotations.read_only_hint is True
    assert tools["inspect_memories"].annotations.read_only_hint is True
    assert tools["delete_memory"].annotations.destructive_hint is True
    assert tools["delete_namespace_data"].annotations.destructive_hint is True
    # a store without an idempotency_key is a new job each time
    assert tools["store_memory"].annotations.idempotent_hint is False
    for t in tools.values():
        first = t.description.strip().splitlines()[0]
        assert any(w in first for w in ("ms", "millisecond", "seconds")), first


async def test_tool_schemas_are_typed_described_and_bounded(server, tokens):
    async with Agent(server.url, tokens["alice"]) as a:
        tools = {t.name: t for t in await a.client.list_tools()}
        info = a.client.server_info
    from recall_core import __version__
    assert (info.name, info.version) == ("recall", __version__)
    for t in tools.values():
        for name, prop in t.input_schema["properties"].items():
            assert len(prop.get("description", "")) > 20, (t.name, name)
        out = t.output_schema
        assert out["properties"]["status"]["enum"] == ["ok", "error"], t.name
        data = next(s for s in out["properties"]["data"]["anyOf"] if s.get("type") == "object")
        assert data["properties"], t.name  # a typed data object, not an untyped one
    search = tools["search_memories"].input_schema["properties"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, 50)
    for weight in ("recency_weight", "mmr_lambda", "score_threshold"):
        assert (search[weight]["minimum"], search[weight]["maximum"]) == (0, 1), weight
    assert search["max_tokens"]["anyOf"][0]["minimum"] == 1
    inspect = tools["inspect_memories"].input_schema["properties"]
    assert inspect["offset"]["minimum"] == 0 and inspect["offset"]["maximum"] == 2**53 - 1
    assert tools["consolidate_memories"].input_schema["properties"]["similarity_threshold"]["maximum"] == 1
    results = tools["search_memories"].output_schema["properties"]["data"]["anyOf"][0]
    assert "score" in results["properties"]["results"]["items"]["properties"]


SCHEMA_ERRORS = [
    ("search_memories", {"query": "x", "limit": "many"}, "limit"),
    ("search_memories", {"query": 5, "recency_weight": 2}, "recency_weight"),
    ("search_memories", {}, "query: required"),
    ("inspect_memories", {"offset": 2**63}, "offset"),
    ("consolidate_memories", {"topic": "ui", "similarity_threshold": "high"}, "similarity_threshold"),
]


@pytest.mark.parametrize(("tool", "args", "name"), SCHEMA_ERRORS)
async def test_schema_errors_read_plainly(server, tokens, tool, args, name):
    async with Agent(server.url, tokens["alice"]) as a:
        env = await a.call(tool, **args)
    assert env["code"] == "INVALID_PARAM" and name in env["error"]
    assert "pydantic" not in env["error"] and "http" not in env["error"], env["error"]


@pytest.mark.parametrize("field", ["memory_id", "idempotency_key", "agent_id", "session_id"])
async def test_nul_in_an_id_is_invalid_param(server, tokens, field):
    tool, args = (("delete_memory", {}) if field == "memory_id"
                  else ("store_memory", {"text": "I like tea"}))
    async with Agent(server.url, tokens["alice"]) as a:
        env = await a.call(tool, **{**args, field: "a\x00b"})
    assert env["code"] == "INVALID_PARAM"
    assert "NUL" in env["error"] or "not a memory id" in env["error"], env["error"]


async def test_search_total_counts_matches_beyond_the_limit(server):
    token = server.token(f"total-{uuid.uuid4().hex[:8]}")
    async with Agent(server.url, token) as a:
        for i in range(4):
            await a.ok("store_memory", text=f"The staging server number {i} runs Debian.")
        await a.wait_idle()
        one = await a.ok("search_memories", query="staging server Debian", limit=1)
    assert len(one["results"]) == 1 and one["total"] >= 4


@pytest.mark.slow
async def test_a_tool_call_does_not_list_every_tool_first(tmp_path):
    # The MCP SDK validates Mcp-Param-* headers against the called tool's schema; without the
    # by-name lookup app.py installs it ran the whole tools/list handler before each call.
    from recall_testkit.serverproc import ServerProcess

    env = {"RECALL_PLUGIN_MODULES": "recall_testkit.plugins.listing_counter"}
    srv = ServerProcess(str(tmp_path / "recall.db"), tmp_path, env=env).start()
    try:
        async with Agent(srv.url, srv.token("carol")) as a:
            # The client lists the tools once itself (to read their output schemas).
            await a.ok("search_memories", query="warm up", limit=5)
            before = await a.ok("count_tool_listings")
            for i in range(3):
                await a.ok("store_memory", text=f"Listing check number {i}.")
                await a.ok("search_memories", query="listing check", limit=5)
            assert await a.ok("count_tool_listings") == before
            assert [t.name for t in await a.client.list_tools()].count("search_memories") == 1
            assert await a.ok("count_tool_listings") == before + 1  # a real listing still counts
    finally:
        srv.stop()
