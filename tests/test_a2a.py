"""A2A end to end: a real `recall serve` process, driven by the a2a-sdk client over HTTP.

The stub extractor keys "I use vim" and "I switched to VS Code" on the same (user, editor)
triple with the same importance, which is the contradiction the rules cannot settle.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
import pytest
from a2a.client import A2AClientError
from a2a.helpers import get_text_parts, new_text_part
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import A2AError, TaskNotFoundError
from google.protobuf.json_format import MessageToDict

from recall_core.memory.immediate import find_conflicts
from recall_core.models import ExtractedMemory, Memory, utcnow
from recall_testkit.a2a import (A2A, CANCELED, COMPLETED, INPUT_REQUIRED, REJECTED, artifact,
                                data, status_data)
from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = pytest.mark.asyncio(loop_scope="module")


def consolidate(text: str, topic: str = "profile") -> Any:
    return data(skill="consolidate_memories", text=text, topic=topic)


def wire_totals(bodies: list[bytes]) -> list[Any]:
    """The `total` of every search result the server wrote (JSON bodies, and the data lines of
    server-sent events), read with the stdlib json, so 2 stays an int and 2.0 a float."""
    docs = []
    for body in bodies:
        text = body.decode()
        if text.lstrip().startswith("{"):
            docs.append(json.loads(text))
        else:
            docs += [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    found: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if {"results", "total"} <= set(value):
                found.append(value["total"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
    walk(docs)
    return found


async def editors(agent_url: str, token: str) -> set[str]:
    async with Agent(agent_url, token) as a:
        page = await a.ok("inspect_memories", limit=50)
    return {m["value"] for m in page["memories"] if m.get("attribute") == "editor"}


async def texts(agent_url: str, token: str) -> list[str]:
    async with Agent(agent_url, token) as a:
        return [m["text"] for m in (await a.ok("inspect_memories", limit=50))["memories"]]


@pytest.fixture(scope="module")
def tokens(server):
    names = ("alice", "bob", "carol")
    with ThreadPoolExecutor(len(names)) as pool:  # one CLI process each; start-up dominates
        return dict(zip(names, pool.map(server.token, names)))


async def test_agent_card_is_public_and_describes_recall(server):
    r = httpx.get(server.base + "/.well-known/agent-card.json")
    assert r.status_code == 200
    card = r.json()
    assert {s["id"] for s in card["skills"]} == {"store_memories", "search_memories"}
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    endpoints = {(i["protocolBinding"], i["protocolVersion"]): i["url"]
                 for i in card["supportedInterfaces"]}
    assert endpoints == {("JSONRPC", "1.0"): server.base + "/a2a",
                         ("HTTP+JSON", "1.0"): server.base + "/a2a",
                         ("JSONRPC", "0.3"): server.base + "/a2a"}
    assert card["capabilities"]["streaming"] is True
    assert card["url"] == server.base + "/a2a"  # the 0.3 card field, for older clients


async def test_missing_or_unknown_token_is_401(server):
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    # No token: say it is missing (no error code in the challenge, RFC 6750), which header
    # is expected and where a token comes from.
    for headers in ({}, {"Authorization": "Basic x"}):
        r = httpx.post(server.base + "/a2a", json=body, headers=headers)
        assert r.status_code == 401, r.text
        assert r.headers["www-authenticate"] == 'Bearer realm="recall"'
        assert r.json()["error"] == "unauthorized"
        reason = r.json()["error_description"]
        assert reason.startswith("Missing bearer token") and "invalid" not in reason.lower()
        assert "Authorization: Bearer <token>" in reason and "recall create-token" in reason
    # A token that opens nothing: invalid_token.
    r = httpx.post(server.base + "/a2a", json=body, headers={"Authorization": "Bearer rcl_not-a-token"})
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == 'Bearer realm="recall", error="invalid_token"'
    assert r.json()["error"] == "invalid_token" and "revoked" in r.json()["error_description"]
    assert "recall create-token" in r.json()["error_description"]
    r = httpx.get(server.base + "/a2a/tasks")  # the REST binding too
    assert r.status_code == 401 and r.json()["error_description"].startswith("Missing bearer token")
    async with A2A(server.base, None) as anon:  # the card is public, the calls are not
        with pytest.raises(A2AClientError, match="401"):
            await anon.send(consolidate("I live in Paris."))


async def test_consolidate_completes_and_search_finds_it(server, tokens):
    async with A2A(server.base, tokens["alice"], streaming=False) as alice:
        task = await alice.send(consolidate("I live in Lisbon. We decided to deploy only on "
                                            "Tuesdays.", topic="ops"))
        assert task.status.state == COMPLETED
        stored = artifact(task, "memories")["stored"]
        assert {m["text"] for m in stored} == {"I live in Lisbon.",
                                               "We decided to deploy only on Tuesdays."}
        assert all(m["topic"] == "ops" for m in stored)
    assert set(await texts(server.url, tokens["alice"])) >= {m["text"] for m in stored}
    async with A2A(server.base, tokens["alice"]) as alice:  # streaming (message/stream)
        found = await alice.send(data(skill="search_memories", query="Lisbon", limit=5))
        assert found.status.state == COMPLETED
        results = artifact(found, "search_results")["results"]
        assert results and results[0]["text"] == "I live in Lisbon."
        # Plain text, no data part: consolidate_memories is the default skill.
        msg_task = await alice.send(new_text_part("I prefer tabs over spaces."))
        assert msg_task.status.state == COMPLETED


async def test_input_required_resumed_three_ways(server, tokens):
    tok = tokens["carol"]
    async with A2A(server.base, tok) as carol, \
            A2A(server.base, tok, binding="HTTP+JSON", streaming=False) as carol_rest:
        assert (await carol.send(consolidate("I use vim."))).status.state == COMPLETED

        # 1. keep_existing: the contradicting fact is dropped, the rest of the text is stored.
        task = await carol.send(consolidate("I switched to VS Code. I live in Oslo."))
        assert task.status.state == INPUT_REQUIRED
        (conflict,) = status_data(task)["conflicts"]
        assert (conflict["entity"], conflict["attribute"]) == ("user", "editor")
        assert [m["value"] for m in conflict["existing"]] == ["vim"]
        assert conflict["new"]["value"] == "VS Code"
        assert status_data(task)["options"] == ["keep_existing", "keep_new", "keep_both"]
        assert "I live in Oslo." not in await texts(server.url, tok)  # nothing stored yet
        task = await carol.send(new_text_part("maybe?"), task=task)
        assert task.status.state == INPUT_REQUIRED
        assert "not a decision" in get_text_parts(task.status.message.parts)[0]
        task = await carol.send(new_text_part("keep_existing"), task=task)
        assert task.status.state == COMPLETED
        assert [m["text"] for m in artifact(task, "memories")["stored"]] == ["I live in Oslo."]
        assert await editors(server.url, tok) == {"vim"}

        # 2. keep_new, over the REST binding: the old fact is superseded.
        task = await carol_rest.send(consolidate("I switched to VS Code."))
        assert task.status.state == INPUT_REQUIRED
        task = await carol_rest.send(data(decision="keep_new"), task=task)
        assert task.status.state == COMPLETED
        assert len(artifact(task, "memories")["superseded_ids"]) == 1
        assert await editors(server.url, tok) == {"VS Code"}

        # 3. keep_both: stored without superseding; the new statement is kept as a plain
        #    memory (no triple), so search finds both while the fact keeps one current value.
        task = await carol.send(consolidate("I use Emacs."))
        assert task.status.state == INPUT_REQUIRED
        task = await carol.send(new_text_part("Keep both"), task=task)
        assert task.status.state == COMPLETED
        assert artifact(task, "memories")["superseded_ids"] == []
        assert await editors(server.url, tok) == {"VS Code"}
        assert "I use Emacs." in await texts(server.url, tok)
        assert MessageToDict(task.metadata)["recall"] == {"pending": None, "decision": "keep_both"}


async def test_settled_contradiction_supersedes_without_asking(server, tokens):
    tok = tokens["alice"]  # no editor fact of hers yet
    async with A2A(server.base, tok) as alice:
        first = await alice.send(consolidate("I use vim."))
        vim_id = artifact(first, "memories")["stored"][0]["id"]
        # Importance 0.95 against 0.55: the rules settle it, newer wins as in the worker.
        task = await alice.send(consolidate("Important: I always use Emacs for everything, "
                                           "remember that!"))
        assert task.status.state == COMPLETED
        assert artifact(task, "memories")["superseded_ids"] == [vim_id]
    assert await editors(server.url, tok) == {"Emacs"}


async def test_tasks_are_invisible_to_other_namespaces(server, tokens):
    async with A2A(server.base, tokens["bob"]) as bob, A2A(server.base, tokens["alice"]) as alice:
        await bob.send(consolidate("I use nano."))
        task = await bob.send(consolidate("I switched to Helix."))
        assert task.status.state == INPUT_REQUIRED

        with pytest.raises(TaskNotFoundError):
            await alice.get(task.id)
        with pytest.raises(TaskNotFoundError):
            await alice.send(new_text_part("keep_new"), task=task)
        with pytest.raises(TaskNotFoundError):
            await alice.client.cancel_task(CancelTaskRequest(id=task.id))
        with pytest.raises(A2AError):
            async for _ in alice.client.subscribe(SubscribeToTaskRequest(id=task.id)):
                pass
        assert task.id not in await alice.task_ids()
        assert task.id in await bob.task_ids()

        # Still bob's, untouched: he cancels it, and nothing of it was stored.
        assert (await bob.get(task.id)).status.state == INPUT_REQUIRED
        cancelled = await bob.client.cancel_task(CancelTaskRequest(id=task.id))
        assert cancelled.status.state == CANCELED
    assert await editors(server.url, tokens["bob"]) == {"nano"}


async def test_invalid_input_is_rejected_with_the_tool_error_code(server, tokens):
    async with A2A(server.base, tokens["alice"]) as alice:
        task = await alice.send(consolidate("   "))
        assert task.status.state == REJECTED
        assert status_data(task)["code"] == "INVALID_PARAM"
        task = await alice.send(data(skill="forget_everything", text="x"))
        assert task.status.state == REJECTED
        assert "Unknown skill" in status_data(task)["error"]


async def test_counts_are_json_integers_on_the_wire(server):
    # A data part is a protobuf Value, whose numbers are doubles: the SDK wrote "total": 2.0,
    # which a client decoding into an integer field refuses. The MCP tools write 2.
    token = server.token("wire")
    async with A2A(server.base, token, streaming=False) as caller:
        await caller.send(consolidate("I live in Porto. We decided to ship on Fridays.",
                                      topic="wire"))
    for binding in ("JSONRPC", "HTTP+JSON"):
        for streaming in (False, True):
            wire: list[bytes] = []
            async with A2A(server.base, token, streaming=streaming, binding=binding,
                           wire=wire) as caller:
                task = await caller.send(data(skill="search_memories", query="Porto Fridays"))
                await caller.get(task.id)
            # The SDK client parses into protobuf again: every number a double (its docs say so).
            total = artifact(task, "search_results")["total"]
            assert total >= 1 and total.is_integer()
            totals = wire_totals(wire)
            assert len(totals) >= 2, (binding, streaming)  # the send's answer and the get's
            assert all(type(t) is int and t == total for t in totals), (binding, streaming, totals)


async def test_a2a_tasks_are_audited_like_tool_calls(server):
    async with A2A(server.base, server.token("auditee")) as caller:
        await caller.send(data(skill="search_memories", query="editor"))
        await caller.send(consolidate("   "))
        # A skill that is not one (any JSON value: a list was an INTERNAL TypeError) is
        # rejected, and audited under one label, not under whatever the client sent.
        for odd in (["store_memories"], "drop tables"):
            task = await caller.send(data(skill=odd, text="x"))
            assert task.status.state == REJECTED and status_data(task)["code"] == "INVALID_PARAM"
    rows: list = []
    for _ in range(50):
        with sqlite3.connect(server.db) as conn:
            rows = conn.execute(
                "SELECT tool, status, code FROM tool_call_records WHERE namespace = 'auditee' "
                "ORDER BY rowid").fetchall()
        if len(rows) >= 4:
            break
        await asyncio.sleep(0.1)
    assert rows == [("a2a:search_memories", "ok", None),
                    ("a2a:consolidate_memories", "error", "INVALID_PARAM"),
                    ("a2a:unknown", "error", "INVALID_PARAM"),
                    ("a2a:unknown", "error", "INVALID_PARAM")]
    lines = [line for line in server.log().splitlines() if '"tool": "a2a:' in line]
    from recall_core.server.mcp.default_middleware import namespace_hash  # logs name tenants by hash only
    assert any(f'"namespace_hash": "{namespace_hash("auditee")}"' in line for line in lines)


@pytest.mark.parametrize("age_days, importance, asks", [
    (1, 0.55, True),    # recent, same importance: the caller decides
    (1, 0.70, True),    # |0.55 - 0.70| < 0.2 still counts as "about as important"
    (1, 0.80, False),   # clearly less important than the new fact: newer wins
    (40, 0.55, False),  # an old fact: newer wins
])
async def test_rules_ask_only_about_recent_facts_of_similar_importance(
        tmp_path, age_days, importance, asks):
    from recall_sqlite.storage import SQLiteStorage

    storage = SQLiteStorage(str(tmp_path / "rules.db"))
    await storage.open()
    try:
        now = utcnow()
        await storage.insert_memories([Memory(
            namespace="n", text="I use vim.", entity="user", attribute="editor", value="vim",
            importance=importance, valid_from=now - timedelta(days=age_days),
            created_at=now - timedelta(days=age_days))])
        new = ExtractedMemory(text="I use Helix.", entity="User", attribute="Editor",
                              value="Helix", importance=0.55)
        assert bool(await find_conflicts(storage, "n", [new], now)) is asks
        assert await find_conflicts(storage, "other", [new], now) == []  # namespaces apart
        same = new.model_copy(update={"value": "VIM"})  # a re-statement is no contradiction
        assert await find_conflicts(storage, "n", [same], now) == []
    finally:
        await storage.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request, tmp_path):
    """A fresh database for one server: SQLite, or a throwaway schema on RECALL_TEST_PG_URL."""
    if request.param == "sqlite":
        yield str(tmp_path / "r.db")
        return
    url = os.environ.get("RECALL_TEST_PG_URL")
    if not url:
        pytest.skip("RECALL_TEST_PG_URL is not set "
                    "(e.g. postgresql://postgres@127.0.0.1:5432/test)")
    import asyncpg

    schema = f"a2a_{uuid.uuid4().hex[:10]}"
    con = await asyncpg.connect(url)
    try:
        await con.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in url else "?"
        yield f"{url}{sep}search_path={schema}"
    finally:
        await con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await con.close()


@pytest.mark.slow
async def test_tasks_survive_restart_and_input_required_resumes(tmp_path, database):
    srv = ServerProcess(database, tmp_path).start()
    try:
        tok = srv.token("erin")
        async with A2A(srv.base, tok) as erin:
            done = await erin.send(consolidate("I use vim."))
            waiting = await erin.send(consolidate("I switched to VS Code."))
            assert waiting.status.state == INPUT_REQUIRED
        srv.stop()
        srv.start()
        async with A2A(srv.base, tok, streaming=False) as erin:
            assert (await erin.get(done.id)).artifacts == done.artifacts
            again = await erin.get(waiting.id)
            assert again.status.state == INPUT_REQUIRED
            assert status_data(again)["conflicts"] == status_data(waiting)["conflicts"]
            assert await erin.task_ids() >= {done.id, waiting.id}
            task = await erin.send(new_text_part("keep_new"), task=again)
            assert task.status.state == COMPLETED
        assert await editors(srv.url, tok) == {"VS Code"}
    finally:
        srv.stop()


@pytest.mark.slow
async def test_an_erase_while_a_store_task_runs_is_not_undone(tmp_path):
    # Issue 13 #9: a store task in flight used to write its memories into the namespace
    # erased meanwhile. Now its operation record is erased with the namespace, the commit
    # finds it gone, writes nothing, and the task ends failed with NAMESPACE_ERASED.
    db = str(tmp_path / "r.db")
    srv = ServerProcess(db, tmp_path, env={
        "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.slow_extractor", "RECALL_EXTRACTOR": "slow",
        "SLOW_EXTRACTOR_DELAY": "4.0"}).start()
    try:
        tok = srv.token("erin")
        async with A2A(srv.base, tok, streaming=False) as erin:
            sending = asyncio.create_task(erin.send(data(skill="store_memories", topic="home",
                                                         text="I live in Reykjavik.")))
            for _ in range(200):  # until the task's operation record exists: it is extracting
                con = sqlite3.connect(db)
                try:
                    if con.execute("SELECT count(*) FROM operations WHERE kind = 'a2a'").fetchone()[0]:
                        break
                finally:
                    con.close()
                await asyncio.sleep(0.02)
            async with Agent(srv.url, tok) as agent:
                await agent.ok("get_memory_stats")  # the session is fully set up first
                await agent.ok("delete_namespace_data", confirm="DELETE MY DATA")
            try:
                task = await sending
                assert task.status.state == TaskState.TASK_STATE_FAILED
            except (A2AClientError, A2AError):
                pass  # the token was revoked: the client may no longer read the task
        con = sqlite3.connect(db)
        try:
            assert con.execute("SELECT count(*) FROM memories WHERE namespace = 'erin'"
                               ).fetchone()[0] == 0
            for table in ("operations", "a2a_tasks", "tool_call_records"):
                assert con.execute(f"SELECT count(*) FROM {table} WHERE namespace = 'erin'"
                                   ).fetchone()[0] == 0, table
        finally:
            con.close()
    finally:
        srv.stop()


@pytest.mark.slow
async def test_a2a_obeys_the_size_limit_and_the_tool_timeout(tmp_path):
    # Issue 15: A2A accepted a 20 MiB message (MCP answers 413) and a skill ran far past
    # limits.tool_timeout. Now an oversized body is 413 before any task exists, and a skill
    # that takes too long ends failed with TOOL_TIMEOUT, having stored nothing.
    db = str(tmp_path / "r.db")
    srv = ServerProcess(db, tmp_path, env={
        "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.slow_extractor", "RECALL_EXTRACTOR": "slow",
        "SLOW_EXTRACTOR_DELAY": "3.0", "RECALL_LIMITS__TOOL_TIMEOUT": "1"}).start()
    try:
        tok = srv.token("tina")
        big = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
               "params": {"message": {"role": "ROLE_USER", "messageId": "m1",
                                      "parts": [{"text": "x" * (20 * 1024 * 1024)}]}}}
        r = httpx.post(srv.base + "/a2a", json=big, timeout=60,
                       headers={"Authorization": f"Bearer {tok}", "A2A-Version": "1.0"})
        assert r.status_code == 413 and r.json()["error"] == "payload_too_large"
        async with A2A(srv.base, tok, streaming=False) as tina:
            assert await tina.task_ids() == set()  # nothing was kept of the big message
            task = await tina.send(data(skill="store_memories", topic="home",
                                        text="I live in Tromso."))
            assert task.status.state == TaskState.TASK_STATE_FAILED
            assert status_data(task)["code"] == "TOOL_TIMEOUT"
        await asyncio.sleep(3.5)  # the stopped extraction would have finished by now
        con = sqlite3.connect(db)
        try:
            assert con.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        finally:
            con.close()
    finally:
        srv.stop()


@pytest.mark.slow
async def test_list_tasks_pages_like_the_sdk_from_the_database(tmp_path, database):
    # Issue 15: ListTasks loaded and parsed every task of the namespace and paged in Python;
    # storage now filters, orders and pages. What a client sees is a2a-sdk's own behaviour:
    # the same tasks through the SDK's InMemoryTaskStore give the same pages and tokens.
    from a2a.server.context import ServerCallContext
    from a2a.server.tasks import InMemoryTaskStore

    srv = ServerProcess(database, tmp_path).start()
    try:
        tok = srv.token("lena")
        async with A2A(srv.base, tok, streaming=False) as lena:
            made = []
            for i in range(7):
                msg = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()),
                              context_id="ctx-a" if i % 3 == 0 else "ctx-b",
                              parts=[data(skill="search_memories", query=f"q{i}" if i != 4 else " ")])
                async for event in lena.client.send_message(SendMessageRequest(message=msg)):
                    if event.WhichOneof("payload") == "task":
                        made.append(event.task.id)
            assert len(set(made)) == 7
            tasks = [await lena.get(t) for t in made]
            assert sum(t.status.state == REJECTED for t in tasks) == 1  # the blank query
            reference, ctx = InMemoryTaskStore(), ServerCallContext()
            for t in tasks:
                await reference.save(t, ctx)

            async def both(**params: Any) -> list[str]:
                got = await lena.client.list_tasks(ListTasksRequest(**params))
                want = await reference.list(ListTasksRequest(**params), ctx)
                assert [t.id for t in got.tasks] == [t.id for t in want.tasks], params
                assert (got.next_page_token, got.total_size, got.page_size) == (
                    want.next_page_token, want.total_size, want.page_size), params
                return [t.id for t in got.tasks], got.next_page_token

            seen, token = [], ""
            while True:  # a walk through every page
                ids, token = await both(page_size=3, page_token=token)
                seen += ids
                if not token:
                    break
            assert sorted(seen) == sorted(made) and len(seen) == 7
            await both()  # the default page size
            await both(context_id="ctx-a", page_size=2)
            ids, token = await both(context_id="ctx-b", page_size=2)
            await both(context_id="ctx-b", page_size=2, page_token=token)
            assert len((await both(status=REJECTED))[0]) == 1
            await both(status=COMPLETED, page_size=4)
            after = sorted(t.status.timestamp.ToNanoseconds() for t in tasks)[3]
            stamp = tasks[0].status.timestamp.__class__()
            stamp.FromNanoseconds(after)
            assert len((await both(status_timestamp_after=stamp))[0]) == 4
            await both(context_id="nobody")
            for bad in ("not-a-token", "eyJ0cyI6OTk5OTk5OTk5OTk5OTk5OTk5OTk5OSwiaWQiOiJ4In0"):
                with pytest.raises((A2AClientError, A2AError), match="(?i)page token"):
                    await lena.client.list_tasks(ListTasksRequest(page_token=bad))
        async with A2A(srv.base, srv.token("other"), streaming=False) as other:
            assert await other.task_ids() == set()  # still one namespace's tasks only
    finally:
        srv.stop()


@pytest.mark.slow
async def test_nul_in_any_a2a_input_is_refused_and_nothing_is_stored(tmp_path, database):
    # Issue 15: a text part with NUL was kept in the task history: SQLite stored it, Postgres'
    # jsonb refused it (an internal error). Now both refuse it as MCP does, before any task.
    srv = ServerProcess(database, tmp_path).start()
    try:
        tok = srv.token("nina")
        headers = {"Authorization": f"Bearer {tok}", "A2A-Version": "1.0"}

        def rpc(method: str, params: dict) -> dict:
            r = httpx.post(srv.base + "/a2a", headers=headers, timeout=30,
                           json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
            assert r.status_code == 200, r.text
            return r.json()

        def message(*parts: dict, **extra: Any) -> dict:
            return {"message": {"role": "ROLE_USER", "messageId": str(uuid.uuid4()),
                                "parts": list(parts), **extra}}

        for method, params, where in [
            ("SendMessage", message({"text": "I live in Oslo.\x00"}), "params.message.parts[0].text"),
            ("SendStreamingMessage", message({"text": "a\x00b"}), "params.message.parts[0].text"),
            ("SendMessage", message({"data": {"skill": "store_memories", "text": "x",
                                              "topic": "t\x00"}}), "params.message.parts[0].data.topic"),
            ("SendMessage", message({"text": "ok"}, metadata={"k\x00": 1}), "params.message.metadata.k\\x00"),
            ("SendMessage", message({"text": "ok"}, contextId="c\x00"), "params.message.contextId"),
            ("GetTask", {"id": "t\x00"}, "params.id"),
            ("ListTasks", {"contextId": "\x00"}, "params.contextId"),
            ("message/send", message({"kind": "text", "text": "\x00"}), "params.message.parts[0].text"),
        ]:
            reply = rpc(method, params)
            assert reply["id"] == 7 and reply["error"]["code"] == -32602, (method, reply)
            assert reply["error"]["message"] == (
                f"{where} contains a NUL character (\\x00), which cannot be stored. "
                f"Remove it and retry."), reply
            assert reply["error"]["data"][0]["metadata"] == {"code": "INVALID_PARAM"}
        # NaN and Infinity are not JSON: the SDK parsed them, then failed to answer (-32603)
        for value, spelled in ((float("nan"), "NaN"), (float("-inf"), "-Infinity")):
            body = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "SendMessage", "params": message(
                {"data": {"skill": "search_memories", "query": "tea", "limit": value}})})
            reply = httpx.post(srv.base + "/a2a", headers=headers, content=body).json()
            assert reply["error"]["code"] == -32602 and reply["error"]["message"] == (
                f"params.message.parts[0].data.limit is {spelled}, which is not a JSON number. "
                f"Send a finite number, or omit the field."), reply
        # the REST binding: body, path and query
        r = httpx.post(srv.base + "/a2a/message:send", headers=headers,
                       json=message({"text": "I live in Oslo.\x00"}))
        assert r.status_code == 400 and r.json()["error"]["status"] == "INVALID_ARGUMENT", r.text
        assert "NUL" in r.json()["error"]["message"]
        for url in ("/a2a/tasks/t%00", "/a2a/tasks?contextId=%00"):
            r = httpx.get(srv.base + url, headers=headers)
            assert r.status_code == 400 and "NUL" in r.json()["error"]["message"], (url, r.text)
        # an escaped backslash is not a NUL: stored as sent
        ok = rpc("SendMessage", message({"data": {"skill": "store_memories", "topic": "paths",
                                                  "text": "My notes live in C:\\u0000notes."}}))
        assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", ok
        listed = rpc("ListTasks", {})["result"]
        assert listed["totalSize"] == 1 and listed["tasks"][0]["id"] == ok["result"]["task"]["id"]
        assert "Traceback" not in srv.log()
    finally:
        srv.stop()
