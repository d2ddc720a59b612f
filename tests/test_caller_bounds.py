"""Bounded per caller, through the real HTTP server and the real MCP client: open sessions per
token are capped (the one idle longest is closed first; all busy: 429), idle sessions close
after limits.session_idle_timeout, a search query longer than limits.max_query_chars is
INVALID_PARAM naming the limit, and a client that hangs up mid-request is one log line."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from contextlib import AsyncExitStack

import httpx
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = [pytest.mark.asyncio(loop_scope="function")]

NAP = "recall_testkit.plugins.napping_tool"


def legacy_client(srv: ServerProcess, token: str) -> Client:
    """The MCP SDK's client on the older, stateful handshake (a session per client)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(srv.url, http_client=http), mode="legacy")


async def works(client: Client) -> bool:
    try:
        result = await client.call_tool("get_memory_stats", {})
    except Exception:  # noqa: BLE001 - the session was closed under it (404)
        return False
    return not result.is_error


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    work = tmp_path_factory.mktemp("capped")
    srv = ServerProcess(str(work / "r.db"), work, env={
        "RECALL_LIMITS__SESSIONS_PER_TOKEN": "3",
        "RECALL_LIMITS__MAX_QUERY_CHARS": "300", "RECALL_PLUGIN_MODULES": NAP}).start()
    yield srv
    srv.stop()


async def test_a_tokens_sessions_are_capped_oldest_idle_closed_first(capped):
    ann, bob = capped.token("ann"), capped.token("bob")
    async with AsyncExitStack() as stack:
        ann_clients = []
        for _ in range(3):
            c = await stack.enter_async_context(legacy_client(capped, ann))
            assert await works(c)
            ann_clients.append(c)
        assert await works(ann_clients[0])  # used last of the three: the second is idlest now
        fourth = await stack.enter_async_context(legacy_client(capped, ann))
        assert await works(fourth)
        assert [await works(c) for c in ann_clients] == [True, False, True]
        # Another token's sessions are its own: bob opens three beside ann's.
        for _ in range(3):
            assert await works(await stack.enter_async_context(legacy_client(capped, bob)))
        assert await works(fourth) and await works(ann_clients[2])


async def test_at_the_cap_with_every_session_busy_a_new_one_is_refused(capped):
    token = capped.token("cat")
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(legacy_client(capped, token))
                   for _ in range(3)]
        naps = [asyncio.create_task(c.call_tool("nap", {"seconds": 3})) for c in clients]
        await asyncio.sleep(0.8)
        async with httpx.AsyncClient() as http:
            r = await http.post(capped.url, headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream"}, json={
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}})
        assert r.status_code == 429, r.text
        assert "limits.sessions_per_token" in r.json()["error"]["message"]
        for nap in naps:
            assert not (await nap).is_error  # the busy sessions were left alone


async def raw_session(http: httpx.AsyncClient, srv: ServerProcess, token: str) -> dict:
    """A session opened by hand, as a load tool or a careless client does: initialize, and no
    GET stream (the SDK client keeps one open, which counts as in use while it lasts)."""
    init = await http.post(srv.url, headers={"Authorization": f"Bearer {token}"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}})
    assert init.status_code == 200, init.text
    headers = {"Authorization": f"Bearer {token}",
               "mcp-session-id": init.headers["mcp-session-id"]}
    await http.post(srv.url, headers=headers,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


async def raw_call(http: httpx.AsyncClient, srv: ServerProcess, headers: dict) -> int:
    r = await http.post(srv.url, headers=headers, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_memory_stats", "arguments": {}}})
    return r.status_code


async def test_raw_sessions_count_however_the_initialize_is_spelled(capped):
    token = capped.token("gil")
    spellings = [b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", %s}',
                 b'{"jsonrpc": "2.0", "id": 1, "method": "\\u0069nitialize", %s}',
                 b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", %s' + b" " * 100_000 + b"}"]
    params = (b'"params": {"protocolVersion": "2025-06-18", "capabilities": {}, '
              b'"clientInfo": {"name": "raw", "version": "0"}}')
    async with httpx.AsyncClient(headers={
            "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "Authorization": f"Bearer {token}"}) as http:
        sessions = []
        for i in range(6):
            r = await http.post(capped.url, content=spellings[i % 3] % params)
            assert r.status_code == 200, r.text
            sessions.append({"Authorization": f"Bearer {token}",
                             "mcp-session-id": r.headers["mcp-session-id"]})
        codes = [await raw_call(http, capped, h) for h in sessions]
        assert codes == [404, 404, 404, 200, 200, 200], codes  # cap 3: the oldest went


async def test_an_idle_session_is_closed_after_the_idle_timeout(tmp_path):
    srv = ServerProcess(str(tmp_path / "r.db"), tmp_path,
                        env={"RECALL_LIMITS__SESSION_IDLE_TIMEOUT": "3"}).start()
    try:
        token = srv.token("dan")
        async with httpx.AsyncClient(
                headers={"Accept": "application/json, text/event-stream"}) as http:
            session = await raw_session(http, srv, token)
            assert await raw_call(http, srv, session) == 200
            await asyncio.sleep(1.5)
            assert await raw_call(http, srv, session) == 200  # in use: kept
            await asyncio.sleep(5)
            assert await raw_call(http, srv, session) == 404  # idle past the timeout: closed
            again = await raw_session(http, srv, token)  # a new session is fine
            assert await raw_call(http, srv, again) == 200
    finally:
        srv.stop()


async def test_a_query_over_the_limit_is_invalid_param_naming_it(capped):
    token = capped.token("eve")
    async with Agent(capped.url, token) as a:
        assert (await a.ok("search_memories", query="q" * 300))["results"] == []
        env = await a.call("search_memories", query="q" * 301)
        assert env["code"] == "INVALID_PARAM"
        assert "301 characters" in env["error"] and "300" in env["error"]
        assert "limits.max_query_chars" in env["error"]
        big = await a.call("search_memories", query="word " * 200_000)  # 1 MB
        assert big["code"] == "INVALID_PARAM"


async def test_a_client_hanging_up_mid_request_is_one_log_line(capped):
    token = capped.token("fay")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode()
    log_before = capped.log_path.read_text(errors="replace")
    for headers in ("", "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
                        "Mcp-Name: nap\r\n"):
        with socket.create_connection(("127.0.0.1", capped.port)) as s:
            s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       f"Authorization: Bearer {token}\r\n"
                       f"Accept: application/json, text/event-stream\r\n"
                       f"Content-Type: application/json\r\nContent-Length: {len(body) + 5000}"
                       f"\r\n{headers}\r\n").encode() + body)
            time.sleep(0.3)
    await asyncio.sleep(1.0)
    new = capped.log_path.read_text(errors="replace")[len(log_before):]
    assert "Traceback" not in new, new
    assert new.count("a client hung up before its request was read") >= 1, new
