"""Scopes over MCP, end to end: a `recall serve` process (SQLite, and Postgres when
RECALL_TEST_PG_URL is set), tokens made with `recall create-token --agent/--scopes`, and the
MCP client over real HTTP. A call outside a token's scopes is FORBIDDEN naming the scope and
changes nothing; tools/list shows only what the token may call; tokens made without --scopes
(as every token made before scopes existed) keep every power."""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_core import hookimpl
from recall_core.access.principal import FORGET, READ, SCOPE_ORDER, WRITE
from recall_core.access.tool_scopes import OPERATION_SCOPES
from recall_testkit.inspector import backends, database, start_server
from recall_testkit.serverproc import Agent, ServerProcess, recall_cli

in_module_loop = pytest.mark.asyncio(loop_scope="module")

#: Every MCP tool, with arguments that pass its scope check and change nothing lasting: a
#: call that is allowed answers ok or an error of its own (never FORBIDDEN).
CALLS: dict[str, dict[str, Any]] = {
    "search_memories": {"query": "editor"},
    "inspect_memories": {"limit": 5},
    "get_memory_stats": {},
    "store_memory": {"text": "A note stored by the scope property test.", "topic": "prop"},
    "consolidate_memories": {"topic": "prop", "dry_run": True},
    "delete_memory": {"memory_id": "00000000-0000-4000-8000-000000000000"},
    "delete_namespace_data": {"confirm": "not the phrase"},
}
TOOLS_OF = {scope: {t for t in CALLS if OPERATION_SCOPES[t] == scope}
            for scope in SCOPE_ORDER}
SUBSETS = [frozenset(c) for n in (1, 2, 3) for c in itertools.combinations(SCOPE_ORDER, n)]


@pytest.fixture(scope="module", params=backends())
def srv(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"scopes-{request.param}")
    db, cleanup = database(request.param, work)
    server = start_server(work, db)
    yield server
    server.stop()
    cleanup()


def make_token(srv: ServerProcess, namespace: str, *, agent: str | None = None,
               scopes: str | None = None) -> str:
    """`recall create-token` as an owner runs it; checks what it says it made."""
    args = ["create-token", namespace, "--db", srv.db, "--json"]
    args += ["--agent", agent] if agent else []
    args += ["--scopes", scopes] if scopes is not None else []
    made = json.loads(recall_cli(*args, env=srv.env).stdout)
    expected = [s for s in SCOPE_ORDER if scopes is None or s in scopes.split(",")]
    assert (made["namespace"], made["agent"], made["scopes"]) == (namespace, agent, expected)
    return made["token"]


@pytest.fixture(scope="module")
def ns(srv):
    """A namespace with one stored memory, its owner's token (no --scopes) and a read-only
    dashboard token, and a write-only agent's token."""
    name = f"scoped-{uuid.uuid4().hex[:8]}"
    owner = make_token(srv, name)

    async def seed() -> str:
        async with Agent(srv.url, owner) as a:
            await a.ok("store_memory", text="I prefer the Helix editor.", topic="editor")
            await a.wait_idle()
            return (await a.ok("inspect_memories"))["memories"][0]["id"]
    memory_id = asyncio.run(seed())
    return {"name": name, "owner": owner, "memory_id": memory_id,
            "reader": make_token(srv, name, agent="dashboard", scopes="memory:read"),
            "writer": make_token(srv, name, agent="scribe", scopes="memory:write")}


async def listed(srv: ServerProcess, token: str) -> set[str]:
    async with Agent(srv.url, token) as a:
        return {t.name for t in await a.client.list_tools()}


def assert_forbidden(env: dict[str, Any], tool: str, scope: str) -> None:
    assert env["status"] == "error" and env["code"] == "FORBIDDEN", env
    assert tool in env["error"] and scope in env["error"], env["error"]
    assert "recall create-token" in env["error"] and "Nothing was done" in env["error"]


@in_module_loop
async def test_a_read_only_token_reads_and_changes_nothing(srv, ns):
    async with Agent(srv.url, ns["reader"]) as r:
        found = await r.ok("search_memories", query="which editor?")
        assert [m["id"] for m in found["results"]] == [ns["memory_id"]]
        assert (await r.ok("inspect_memories"))["total"] == 1
        assert (await r.ok("get_memory_stats"))["total"] == 1
        assert_forbidden(await r.call("store_memory", text="I switched to Vim."),
                         "store_memory", WRITE)
        assert_forbidden(await r.call("consolidate_memories", topic="editor"),
                         "consolidate_memories", WRITE)
        assert_forbidden(await r.call("delete_memory", memory_id=ns["memory_id"]),
                         "delete_memory", FORGET)
        assert_forbidden(await r.call("delete_namespace_data", confirm="DELETE MY DATA"),
                         "delete_namespace_data", FORGET)
        # Refused before its arguments are read: no hint about what a valid call looks like.
        assert_forbidden(await r.call("store_memory", text=""), "store_memory", WRITE)
    async with Agent(srv.url, ns["owner"]) as o:  # nothing changed, the token still works
        page = await o.ok("inspect_memories")
        assert [m["id"] for m in page["memories"]] == [ns["memory_id"]]
        assert (await o.ok("get_memory_stats"))["pending_extractions"] == 0
    assert await listed(srv, ns["reader"]) == TOOLS_OF[READ]


@in_module_loop
async def test_a_write_only_token_stores_but_cannot_search(srv, ns):
    async with Agent(srv.url, ns["writer"]) as w:
        ack = await w.ok("store_memory", text="Our standup is at 9:30.", topic="team")
        assert ack["queued"] is True
        assert_forbidden(await w.call("search_memories", query="standup"), "search_memories", READ)
        assert_forbidden(await w.call("inspect_memories"), "inspect_memories", READ)
        assert_forbidden(await w.call("get_memory_stats"), "get_memory_stats", READ)
        assert_forbidden(await w.call("delete_memory", memory_id=ns["memory_id"]),
                         "delete_memory", FORGET)
    assert await listed(srv, ns["writer"]) == TOOLS_OF[WRITE]
    async with Agent(srv.url, ns["owner"]) as o:
        await o.wait_idle()
        assert any("standup" in m["text"] for m in (await o.ok("inspect_memories"))["memories"])


@in_module_loop
async def test_a_token_made_without_scopes_keeps_every_power(srv):
    name = f"plain-{uuid.uuid4().hex[:8]}"
    token = srv.token(name)  # `recall create-token NAME`, as before scopes existed
    assert await listed(srv, token) == set(CALLS)
    async with Agent(srv.url, token) as a:
        await a.ok("store_memory", text="I live in Lisbon.")
        await a.wait_idle()
        (memory,) = (await a.ok("inspect_memories"))["memories"]
        assert (await a.ok("delete_memory", memory_id=memory["id"]))["deleted"] == memory["id"]
        erased = await a.ok("delete_namespace_data", confirm="DELETE MY DATA")
        assert erased["tokens_revoked"] == 1


@in_module_loop
async def test_a_forget_only_token_deletes_but_cannot_store(srv):
    name = f"forget-{uuid.uuid4().hex[:8]}"
    owner = make_token(srv, name)
    async with Agent(srv.url, owner) as o:
        await o.ok("store_memory", text="My locker code is 4711.")
        await o.wait_idle()
        (memory,) = (await o.ok("inspect_memories"))["memories"]
    # The owner's token (no agent): an agent may forget only its own private memories
    # (tests/test_agent_isolation.py), whatever its scopes.
    janitor = make_token(srv, name, scopes="memory:forget")
    assert await listed(srv, janitor) == TOOLS_OF[FORGET]
    async with Agent(srv.url, janitor) as j:
        assert_forbidden(await j.call("store_memory", text="x"), "store_memory", WRITE)
        assert (await j.ok("delete_memory", memory_id=memory["id"]))["deleted"] == memory["id"]
    async with Agent(srv.url, owner) as o:
        assert (await o.ok("inspect_memories"))["total"] == 0


@in_module_loop
async def test_annotations_agree_with_the_scopes(srv, ns):
    """Read tools say they are read-only, forget tools that they are destructive, and no
    tool that needs memory:write or memory:forget claims to be read-only."""
    async with Agent(srv.url, ns["owner"]) as a:
        tools = {t.name: t for t in await a.client.list_tools()}
    assert set(tools) == set(CALLS) == {t for t, s in OPERATION_SCOPES.items()
                                        if t in tools}
    for name, tool in tools.items():
        hints = tool.annotations
        if OPERATION_SCOPES[name] == READ:
            assert hints.read_only_hint is True and hints.destructive_hint is False, name
        else:
            assert hints.read_only_hint is False, name
        if OPERATION_SCOPES[name] == FORGET:
            assert hints.destructive_hint is True, name


@pytest.fixture(scope="module")
def subset_tokens(srv):
    """One token per non-empty subset of the scopes, in one namespace."""
    name = f"subsets-{uuid.uuid4().hex[:8]}"
    return {s: make_token(srv, name, agent=f"a{i}", scopes=",".join(sorted(s)))
            for i, s in enumerate(SUBSETS)}


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(granted=st.sampled_from(SUBSETS), tools=st.lists(st.sampled_from(sorted(CALLS)),
                                                         min_size=1, max_size=4))
def test_a_call_passes_iff_the_token_has_the_tools_scope(srv, subset_tokens, granted, tools):
    async def calls() -> tuple[set[str], list[tuple[str, dict[str, Any]]]]:
        async with Agent(srv.url, subset_tokens[granted]) as a:
            shown = {t.name for t in await a.client.list_tools()}
            return shown, [(t, await a.call(t, **CALLS[t])) for t in tools]

    shown, answers = asyncio.run(calls())
    assert shown == {t for t in CALLS if OPERATION_SCOPES[t] in granted}
    for tool, env in answers:
        if OPERATION_SCOPES[tool] in granted:
            assert env["code"] != "FORBIDDEN", (tool, granted, env)
        else:
            assert_forbidden(env, tool, OPERATION_SCOPES[tool])


class PluginTools:
    """A plugin's tools: their scope follows from their annotations."""

    @hookimpl
    def register_tools(self, register):
        async def _total(namespace):
            return (await register.service.stats(namespace))["total"]

        @register.tool(annotations={"readOnlyHint": True})
        async def count_memories() -> dict:
            """Count this user's memories; milliseconds."""
            return await register.answer(_total)

        @register.tool(annotations={"readOnlyHint": False, "destructiveHint": False})
        async def tag_memories() -> dict:
            """Tag memories; milliseconds."""
            return await register.answer(_total)

        @register.tool
        async def prune_memories() -> dict:
            """Prune memories; milliseconds."""
            return await register.answer(_total)


@in_module_loop
async def test_plugin_tools_and_stdio_sessions_follow_the_same_rules(tmp_path):
    """Over stdio (RECALL_TOKEN's principal) the scopes bind as over HTTP, and a plugin's
    tool needs the scope its annotations imply: read-only -> memory:read, not destructive ->
    memory:write, unsaid (the MCP default for a tool that is not read-only) -> memory:forget."""
    from fastmcp import Client

    import recall_extractors
    import recall_sqlite
    from recall_core.access.principal import Principal
    from recall_core.config import load_config
    from recall_core.plugins import get_plugin_manager
    from recall_core.server.auth import set_stdio_namespace
    from recall_core.server.mcp.server import build_mcp
    from recall_core.server.runtime import build_runtime

    pm = get_plugin_manager(load_entrypoints=False)
    for plugin, name in ((recall_sqlite, "sqlite"), (recall_extractors, "extractors"),
                         (PluginTools(), "tools")):
        pm.register(plugin, name=name)
    rt = await build_runtime(load_config(None, db=str(tmp_path / "r.db")), pm,
                             start_worker=False)
    plugin_scopes = {"count_memories": READ, "tag_memories": WRITE, "prune_memories": FORGET}
    try:
        mcp = await build_mcp(rt, auth=False)
        for granted in SUBSETS:
            set_stdio_namespace("stdio-ns", principal=Principal("stdio-ns", None, granted))
            async with Client(mcp) as client:
                shown = {t.name for t in await client.list_tools()}
                assert shown == {t for t, s in {**OPERATION_SCOPES, **plugin_scopes}.items()
                                 if s in granted and (t in CALLS or t in plugin_scopes)}
                for tool, scope in plugin_scopes.items():
                    env = (await client.call_tool(tool, {}, raise_on_error=False)).structured_content
                    if scope in granted:
                        assert env["status"] == "ok", (tool, granted, env)
                    else:
                        assert_forbidden(env, tool, scope)
    finally:
        await rt.close()
