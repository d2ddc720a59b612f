"""`recall serve --workers 2` as a user runs it, on SQLite and Postgres: real processes behind
one port, the official MCP clients (2026-07-28 and the older stateful handshake), stores under
load extracted exactly once while a worker process is SIGKILLed (the supervisor restarts
it), a store through one process found by a search served by the other, inspector sign-in
on any process, /health and /metrics over the group, and SIGTERM draining every process."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
import uuid

import httpx
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from recall_testkit.backends import BACKENDS, PG_URL
from recall_testkit.serverproc import Agent, ServerProcess, free_port, token_in_process

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.slow]

NAP = "recall_testkit.plugins.napping_tool"


async def fresh_database(backend: str, tmp_path) -> str:
    if backend == "sqlite":
        return str(tmp_path / "r.db")
    import asyncpg
    from recall_testkit.postgres import with_search_path

    schema = f"workers_{uuid.uuid4().hex[:10]}"
    con = await asyncpg.connect(PG_URL)
    try:
        await con.execute(f'CREATE SCHEMA "{schema}"')
    finally:
        await con.close()
    return with_search_path(PG_URL, schema)


def group(srv: ServerProcess, token: str) -> list[dict]:
    """The processes /health reports (any process answers for all)."""
    body = httpx.get(srv.base + "/health", headers={"Authorization": f"Bearer {token}"},
                     timeout=5).json()
    return body["process"]["group"]


def wait_group(srv: ServerProcess, token: str, n: int = 2, timeout: float = 60) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        beats = group(srv, token)
        if len(beats) == n and all(b["answering"] for b in beats):
            return beats
        assert time.monotonic() < deadline, beats
        time.sleep(0.2)


def served_by(srv: ServerProcess, token: str, tries: int = 24) -> set[int]:
    """Which processes answer fresh connections (each request on a new TCP connection)."""
    seen = set()
    for _ in range(tries):
        with httpx.Client(timeout=5) as c:
            seen.add(c.get(srv.base + "/health",
                           headers={"Authorization": f"Bearer {token}"}).json()["process"]["index"])
    return seen


def legacy_client(srv: ServerProcess, token: str) -> Client:
    """The MCP SDK's client on the older, stateful handshake."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(srv.url, http_client=http), mode="legacy")


def stateless_client(srv: ServerProcess, token: str) -> Client:
    """The MCP SDK's client negotiating 2026-07-28 (stateless)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(srv.url, http_client=http))


def stateless_call(tool: str, **arguments) -> dict:
    """The 2026-07-28 stateless request, by hand (NOTES.md "MCP 2026-07-28")."""
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}}}


def stateless_headers(token: str, tool: str) -> dict:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}


def envelope(result) -> dict:
    return result.structured_content or json.loads(result.content[0].text)


@pytest.fixture(params=BACKENDS)
async def db(request, tmp_path):
    return await fresh_database(request.param, tmp_path)


async def test_two_processes_serve_both_handshakes_inspector_and_metrics(db, tmp_path):
    metrics_port = free_port()
    srv = ServerProcess(db, tmp_path, env={"RECALL_PLUGIN_MODULES": NAP},
                        args=("--workers", "2", "--metrics-port", str(metrics_port))).start()
    try:
        token = await token_in_process(db, "alice")
        wait_group(srv, token)
        assert served_by(srv, token) == {0, 1}, "SO_REUSEPORT spreads connections"
        # The 2026-07-28 client and the older handshake, many calls each, on fresh clients
        # (connections land on either process).
        for make in (stateless_client, legacy_client):
            for i in range(4):
                async with make(srv, token) as c:
                    stored = envelope(await c.call_tool(
                        "store_memory", {"text": f"Note {make.__name__} {i}: the pump runs.",
                                         "topic": "t"}))
                    assert stored["status"] == "ok" and stored["data"]["queued"], stored
                    for _ in range(3):
                        stats = envelope(await c.call_tool("get_memory_stats", {}))
                        assert stats["status"] == "ok", stats
        async with Agent(srv.url, token) as a:
            await a.wait_idle(60)
            assert (await a.ok("get_memory_stats"))["total"] == 8

        # Inspector: signed in on one process, signed in on every process; signed out on
        # one, signed out on every process.
        first = httpx.Client(base_url=srv.base, headers={"Origin": srv.base},
                             follow_redirects=False)
        r = first.post("/ui/signin", data={"token": token})
        assert r.status_code == 303, r.text[:300]
        cookie = re.search(r"recall_ui=([^;]+)", r.headers["set-cookie"]).group(1)

        def page() -> tuple[int, str]:
            with httpx.Client(base_url=srv.base, follow_redirects=False,
                              headers={"Cookie": f"recall_ui={cookie}"}) as c:
                got = c.get("/ui/memories")
                return got.status_code, got.text
        answers = [page() for _ in range(16)]
        assert {code for code, _ in answers} == {200}, [c for c, _ in answers]
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', answers[0][1]).group(1)
        with httpx.Client(base_url=srv.base, follow_redirects=False,
                          headers={"Cookie": f"recall_ui={cookie}", "Origin": srv.base}) as c:
            assert c.post("/ui/signout", data={"csrf": csrf}).status_code == 303
        assert {page()[0] for _ in range(16)} == {303}

        # /metrics sums every process's tool calls (prometheus-client multiprocess mode).
        text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
        calls = sum(float(m) for m in re.findall(
            r'^recall_tool_calls_total\{[^}]*tool="get_memory_stats"[^}]*\} (\S+)$', text, re.M))
        assert calls >= 24, calls

        # SIGTERM to the parent: a call in flight on a child finishes (the stateless request;
        # the fastmcp client's own session breaks on a stopping server with one process
        # too), every process exits, exit code 0.
        async with httpx.AsyncClient(timeout=30) as c:
            nap = asyncio.create_task(c.post(srv.url, json=stateless_call("nap", seconds=2.0),
                                             headers=stateless_headers(token, "nap")))
            await asyncio.sleep(0.5)
            srv.proc.send_signal(signal.SIGTERM)
            answer = await nap
        assert answer.status_code == 200
        assert answer.json()["result"]["structuredContent"]["status"] == "ok", answer.text
        assert await asyncio.to_thread(srv.proc.wait, 30) == 0
        pids = [b["pid"] for b in group_beats_from_log(srv)]
        for pid in pids:
            assert not os.path.exists(f"/proc/{pid}"), f"worker {pid} outlived the parent"
    finally:
        srv.stop()


def group_beats_from_log(srv: ServerProcess) -> list[dict]:
    """The children's pids, as the supervisor logged them."""
    return [{"pid": int(p)} for p in re.findall(r"started \(pid (\d+)\)", srv.log_path.read_text())]


async def test_killing_a_worker_process_under_load_loses_nothing_and_does_nothing_twice(
        db, tmp_path):
    env = {"RECALL_PLUGIN_MODULES": "recall_testkit.plugins.slow_extractor",
           "RECALL_EXTRACTOR": "slow", "SLOW_EXTRACTOR_DELAY": "0.05",
           "RECALL_WORKER__LEASE_SECONDS": "3", "RECALL_WORKER__POLL_INTERVAL": "0.05"}
    srv = ServerProcess(db, tmp_path, env=env, args=("--workers", "2")).start()
    n = 300
    texts = [f"Fact {i}: the build agent number {i} runs on host h{i}.example.lan."
             for i in range(n)]
    try:
        token = await token_in_process(db, "dave")
        before = wait_group(srv, token)
        victim = before[1]["pid"]
        acked: set[int] = set()

        async def put(i: int) -> None:
            # A store whose connection died with the killed process was never acknowledged:
            # the client retries it with the same key, as an agent would.
            for _ in range(20):
                try:
                    async with stateless_client(srv, token) as c:
                        env_ = envelope(await c.call_tool(
                            "store_memory", {"text": texts[i], "topic": "ops",
                                             "idempotency_key": f"job-{i}"}))
                    if env_["status"] == "ok":
                        acked.add(i)
                        return
                except Exception:  # noqa: BLE001 - the connection was on the killed process
                    pass
                await asyncio.sleep(0.2)

        sem = asyncio.Semaphore(8)

        async def limited(i: int) -> None:
            async with sem:
                await put(i)

        tasks = [asyncio.create_task(limited(i)) for i in range(n)]
        while len(acked) < n // 3:
            await asyncio.sleep(0.05)
        os.kill(victim, signal.SIGKILL)  # mid-load: stores still arriving, jobs running
        await asyncio.gather(*tasks)
        assert acked == set(range(n))

        after = wait_group(srv, token)
        assert after[1]["pid"] != victim, "the supervisor restarted the killed process"
        assert srv.proc.poll() is None
        async with Agent(srv.url, token) as a:
            await a.wait_idle(180)
            for i in range(0, n, 30):  # a retry after the crash queues nothing twice
                again = await a.ok("store_memory", text=texts[i], topic="ops",
                                   idempotency_key=f"job-{i}")
                assert again["queued"] is False
        await assert_each_job_once(db, "dave", texts)
    finally:
        srv.stop()


async def assert_each_job_once(db: str, namespace: str, texts: list[str]) -> None:
    from recall_core.cli.common import open_storage
    from recall_core.config import load_config

    storage = await open_storage(load_config(None, db=db))
    try:
        memories, total = await storage.list_memories(namespace, 10_000, 0)
        assert storage and total == len(texts)
        assert sorted(m.text for m in memories) == sorted(texts)
        per_job: dict[str, int] = {}
        for m in memories:
            per_job[m.source_job_id] = per_job.get(m.source_job_id, 0) + 1
        assert len(per_job) == len(texts) and set(per_job.values()) == {1}
        assert await storage.count_jobs(namespace, "done") == len(texts)
        assert await storage.count_jobs(namespace, "failed") == 0
    finally:
        await storage.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_store_through_one_process_is_found_by_a_search_on_the_other(backend, tmp_path):
    """With the dense ranker: each process caches the namespace's vectors; the change log
    keeps the other process's cache fresh. The query shares no word with the text, so only
    the vectors can find it."""
    pytest.importorskip("recall_embeddings")
    db = await fresh_database(backend, tmp_path)
    srv = ServerProcess(db, tmp_path, args=("--workers", "2"))
    srv.env.pop("RECALL_DISABLE_PLUGINS", None)
    srv.start(timeout=180)
    try:
        token = await token_in_process(db, "erin")
        wait_group(srv, token)

        async def search_everywhere(query: str) -> list[list[str]]:
            out = []
            for _ in range(12):  # fresh connections: both processes answer some
                async with Agent(srv.url, token) as a:
                    data = await a.ok("search_memories", query=query)
                    assert not data.get("degraded"), data
                    out.append([r["text"] for r in data["results"]])
            return out

        async with Agent(srv.url, token) as a:
            await a.ok("store_memory", text="The quarterly budget review is on Friday.",
                       topic="work")
            await a.wait_idle(60)
        deadline = time.monotonic() + 120
        while True:  # both processes warm: the model loaded and the namespace cached
            try:
                await search_everywhere("finance meeting")
                break
            except AssertionError:
                assert time.monotonic() < deadline
                await asyncio.sleep(1)
        assert served_by(srv, token) == {0, 1}
        async with Agent(srv.url, token) as a:
            await a.ok("store_memory", text="My cat Whiskers sleeps on the windowsill.",
                       topic="home")
            await a.wait_idle(60)
        for texts in await search_everywhere("feline pet"):
            assert "My cat Whiskers sleeps on the windowsill." in texts, texts
    finally:
        srv.stop()
