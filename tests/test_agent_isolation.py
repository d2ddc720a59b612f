"""Per-agent visibility (README "Agents and visibility"), end to end over real HTTP with the
official MCP client against a `recall serve` process, on SQLite and Postgres, with the real
extraction worker (the stub extractor).

The cast: the owner of namespace N, agents "planner" (A) and "writer" (B) of N, and the owner
of another namespace (X). Every cell of store / search / inspect / stats / delete / erase /
consolidate is asserted for each of them."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import httpx
import pytest

from recall_testkit.serverproc import token_in_process, Agent, ServerProcess, recall_cli

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

# One distinctive word per memory: a search for it finds exactly that memory or nothing.
OWNER = "Team note: the shared codeword is alphaowner."
A_PRIVATE = "Planner note: my private codeword is bravoplan."
A_SHARED = "Planner memo for everyone: the codeword is charlieshared."
B_PRIVATE = "Writer note: my private codeword is deltawrite."
X_OWN = "Other team note: the codeword is echoother."
WORDS = {OWNER: "alphaowner", A_PRIVATE: "bravoplan", A_SHARED: "charlieshared",
         B_PRIVATE: "deltawrite", X_OWN: "echoother"}


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request, tmp_path):
    """A fresh database: SQLite, or a throwaway schema on RECALL_TEST_PG_URL."""
    if request.param == "sqlite":
        yield str(tmp_path / "r.db")
        return
    url = os.environ.get("RECALL_TEST_PG_URL")
    if not url:
        pytest.skip("RECALL_TEST_PG_URL is not set: the Postgres half of this test")
    import asyncpg

    schema = f"agents_{uuid.uuid4().hex[:10]}"
    con = await asyncpg.connect(url)
    try:
        await con.execute(f'CREATE SCHEMA "{schema}"')
        sep = "&" if "?" in url else "?"
        yield f"{url}{sep}search_path={schema}"
    finally:
        await con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await con.close()


async def agent_token(db: str, namespace: str, agent: str) -> str:
    """An agent's token, made with the same function the CLI and admin API use."""
    return await token_in_process(db, namespace, agent=agent)


def words_of(texts: Any) -> set[str]:
    return {w for t in texts for text, w in WORDS.items() if w in t}


async def sees(agent: Agent) -> dict[str, Any]:
    """What a caller sees: by search (each codeword), by inspect and by stats."""
    found = {w for w in WORDS.values()
             if any(w in r["text"] for r in (await agent.ok("search_memories", query=w))["results"])}
    page = await agent.ok("inspect_memories", limit=50)
    stats = await agent.ok("get_memory_stats")
    return {"search": found, "inspect": words_of(m["text"] for m in page["memories"]),
            "total": stats["total"], "memories": page["memories"]}


async def wait_all(*agents: Agent) -> None:
    for agent in agents:
        await agent.wait_idle(60)


def start(database: str, tmp_path: Any, embeddings: bool = False) -> ServerProcess:
    env = {"RECALL_DISABLE_PLUGINS": ""} if embeddings else None
    return ServerProcess(database, tmp_path, env=env).start(timeout=120)


async def test_isolation_matrix_store_search_inspect_stats_delete_erase(database, tmp_path):
    srv = start(database, tmp_path)
    try:
        ns, other = f"acme-{uuid.uuid4().hex[:6]}", f"other-{uuid.uuid4().hex[:6]}"
        tok = {"owner": srv.token(ns), "A": await agent_token(srv.db, ns, "planner"),
               "B": await agent_token(srv.db, ns, "writer"), "X": srv.token(other)}
        async with Agent(srv.url, tok["owner"]) as owner, Agent(srv.url, tok["A"]) as a, \
                Agent(srv.url, tok["B"]) as b, Agent(srv.url, tok["X"]) as x:
            # -- store: defaults and the visibility argument
            await owner.ok("store_memory", text=OWNER)
            await a.ok("store_memory", text=A_PRIVATE)
            await a.ok("store_memory", text=A_SHARED, visibility="shared")
            # agent_id is informational: B naming the planner still stores B's own memory
            await b.ok("store_memory", text=B_PRIVATE, agent_id="planner")
            await x.ok("store_memory", text=X_OWN)
            refused = await owner.call("store_memory", text="x", visibility="private")
            assert refused["code"] == "INVALID_PARAM" and "agents" in refused["error"]
            bad = await a.call("store_memory", text="x", visibility="everyone")
            assert bad["code"] == "INVALID_PARAM"
            await wait_all(owner, a, b, x)

            # -- search / inspect / stats: who sees what
            want = {"owner": {"alphaowner", "bravoplan", "charlieshared", "deltawrite"},
                    "A": {"alphaowner", "bravoplan", "charlieshared"},
                    "B": {"alphaowner", "charlieshared", "deltawrite"},
                    "X": {"echoother"}}
            seen = {"owner": await sees(owner), "A": await sees(a), "B": await sees(b),
                    "X": await sees(x)}
            for who, words in want.items():
                assert seen[who]["search"] == words, who
                assert seen[who]["inspect"] == words, who
                assert seen[who]["total"] == len(words), who
            # each memory says whose it is
            by_word = {w: m for m in seen["owner"]["memories"] for w in words_of([m["text"]])}
            assert by_word["alphaowner"]["visibility"] == "shared"
            assert by_word["charlieshared"]["visibility"] == "shared"
            assert by_word["bravoplan"]["visibility"] == "private"
            assert by_word["bravoplan"]["private_to"] == "planner"
            assert by_word["deltawrite"]["private_to"] == "writer"
            assert by_word["deltawrite"]["agent_id"] == "planner"  # recorded, not obeyed
            hit = (await a.ok("search_memories", query="bravoplan"))["results"][0]
            assert hit["visibility"] == "private" and hit["private_to"] == "planner"

            # -- delete: every cell
            ids = {w: m["id"] for w, m in by_word.items()}
            assert (await b.call("delete_memory", memory_id=ids["bravoplan"]))["code"] \
                == "MEMORY_NOT_FOUND"   # another agent's private memory does not exist for B
            assert (await x.call("delete_memory", memory_id=ids["alphaowner"]))["code"] \
                == "MEMORY_NOT_FOUND"   # nor another namespace's
            forbidden = await a.call("delete_memory", memory_id=ids["alphaowner"])
            assert forbidden["code"] == "FORBIDDEN" and "shared" in forbidden["error"]
            forbidden = await a.call("delete_memory", memory_id=ids["charlieshared"])
            assert forbidden["code"] == "FORBIDDEN"  # even the shared one A stored
            assert (await a.ok("delete_memory", memory_id=ids["bravoplan"]))["deleted"] \
                == ids["bravoplan"]
            assert (await owner.ok("delete_memory", memory_id=ids["deltawrite"]))["deleted"] \
                == ids["deltawrite"]
            assert (await sees(owner))["inspect"] == {"alphaowner", "charlieshared"}
            assert (await sees(a))["inspect"] == {"alphaowner", "charlieshared"}
            assert (await sees(b))["inspect"] == {"alphaowner", "charlieshared"}

            # -- erase: an agent erases its private memories only; the owner everything
            await a.ok("store_memory", text=A_PRIVATE)
            await b.ok("store_memory", text=B_PRIVATE)
            await wait_all(a, b)
            erased = await a.ok("delete_namespace_data", confirm="DELETE MY DATA")
            assert erased["memories_deleted"] == 1 and erased["tokens_revoked"] == 0
            assert (await sees(a))["inspect"] == {"alphaowner", "charlieshared"}  # A still works
            assert (await sees(b))["inspect"] == {"alphaowner", "charlieshared", "deltawrite"}
            assert (await sees(owner))["inspect"] == {"alphaowner", "charlieshared", "deltawrite"}
            assert (await sees(x))["inspect"] == {"echoother"}
            erased = await owner.ok("delete_namespace_data", confirm="DELETE MY DATA")
            assert erased["memories_deleted"] == 3 and erased["tokens_revoked"] == 3
            assert (await sees(x))["inspect"] == {"echoother"}  # the other namespace stays
        for who in ("owner", "A", "B"):  # every token of the namespace stopped working
            r = httpx.post(srv.url, headers={"Authorization": f"Bearer {tok[who]}"}, json={})
            assert r.status_code == 401, who
    finally:
        srv.stop()


async def test_a_private_fact_never_supersedes_the_shared_one(database, tmp_path):
    # With the embeddings: search's "newer on the same topic first" compares vectors.
    srv = start(database, tmp_path, embeddings=True)
    try:
        ns = f"facts-{uuid.uuid4().hex[:6]}"
        owner_tok = srv.token(ns)
        a_tok = await agent_token(srv.db, ns, "planner")
        b_tok = await agent_token(srv.db, ns, "writer")
        async with Agent(srv.url, owner_tok) as owner, Agent(srv.url, a_tok) as a, \
                Agent(srv.url, b_tok) as b:
            await owner.ok("store_memory", text="I work at Acme.")
            await wait_all(owner)
            await a.ok("store_memory", text="I work at Globex.")
            await wait_all(a)

            async def employers(agent: Agent) -> list[tuple[str, str]]:
                hits = (await agent.ok("search_memories", query="where do I work?"))["results"]
                return [(r["value"], r["visibility"]) for r in hits
                        if r.get("attribute") == "employer"]

            # each visibility has its own current value; a search that sees both returns both
            assert sorted((v.lower(), vis) for v, vis in await employers(owner)) == [
                ("acme", "shared"), ("globex", "private")]
            assert sorted(v.lower() for v, _ in await employers(a)) == ["acme", "globex"]
            assert [v.lower() for v, _ in await employers(b)] == ["acme"]
            # newer first: the agent's newer private value comes before the older shared one
            assert (await employers(a))[0][0].lower() == "globex"
            # A's later private change supersedes its own private value, not the shared one
            await a.ok("store_memory", text="I work at Initech now.")
            await wait_all(a)
            assert sorted(v.lower() for v, _ in await employers(a)) == ["acme", "initech"]
            assert [v.lower() for v, _ in await employers(b)] == ["acme"]
            assert sorted(v.lower() for v, _ in await employers(owner)) == ["acme", "initech"]
            page = await owner.ok("inspect_memories", limit=50)
            assert sum("Globex" in m["text"] for m in page["memories"]) == 0  # history only
    finally:
        srv.stop()


DUPES = ["Deploy checklist: run the database migrations before each deploy.",
         "Deploy checklist: run database migrations before every deploy."]


async def test_consolidation_never_merges_across_visibilities(database, tmp_path):
    srv = start(database, tmp_path, embeddings=True)
    try:
        ns, other = f"cons-{uuid.uuid4().hex[:6]}", f"conx-{uuid.uuid4().hex[:6]}"
        owner_tok, x_tok = srv.token(ns), srv.token(other)
        a_tok = await agent_token(srv.db, ns, "planner")
        b_tok = await agent_token(srv.db, ns, "writer")
        async with Agent(srv.url, owner_tok) as owner, Agent(srv.url, a_tok) as a, \
                Agent(srv.url, b_tok) as b, Agent(srv.url, x_tok) as x:
            for agent in (owner, a, b):
                for text in DUPES:
                    await agent.ok("store_memory", text=text, topic="deploy")
            await wait_all(owner, a, b)
            assert (await owner.ok("get_memory_stats"))["total"] == 6

            done = await x.ok("consolidate_memories", topic="deploy", similarity_threshold=0.5)
            assert done["memories_consolidated"] == 0  # another namespace: nothing to merge
            done = await a.ok("consolidate_memories", topic="deploy", similarity_threshold=0.5)
            assert done["memories_consolidated"] == 2 and done["memories_created"] == 1
            mine = (await a.ok("inspect_memories", limit=50))["memories"]
            assert sorted(m["visibility"] for m in mine) == ["private", "shared", "shared"]
            assert len((await b.ok("inspect_memories", limit=50))["memories"]) == 4  # untouched
            # the owner consolidates each partition on its own: the shared pair and B's pair
            done = await owner.ok("consolidate_memories", topic="deploy",
                                  similarity_threshold=0.5)
            assert done["memories_consolidated"] == 4 and done["memories_created"] == 2
            rows = (await owner.ok("inspect_memories", limit=50))["memories"]
            assert sorted((m["visibility"], m.get("private_to")) for m in rows) == [
                ("private", "planner"), ("private", "writer"), ("shared", None)]
    finally:
        srv.stop()


async def test_a2a_store_search_and_tasks_per_agent(database, tmp_path):
    srv = start(database, tmp_path)
    try:
        ns = f"a2a-{uuid.uuid4().hex[:6]}"
        tok = {"owner": srv.token(ns), "A": await agent_token(srv.db, ns, "planner"),
               "B": await agent_token(srv.db, ns, "writer")}

        def rpc(who: str, method: str, params: dict) -> dict:
            r = httpx.post(srv.base + "/a2a", timeout=30, json={
                "jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                headers={"Authorization": f"Bearer {tok[who]}", "A2A-Version": "1.0"})
            assert r.status_code == 200, r.text
            return r.json()

        def send(who: str, data: dict) -> dict:
            reply = rpc(who, "SendMessage", {"message": {
                "role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"data": data}]}})
            assert "result" in reply, reply
            return reply["result"]["task"]

        def found(who: str, query: str) -> set[str]:
            task = send(who, {"skill": "search_memories", "query": query})
            results = task["artifacts"][0]["parts"][0]["data"]["results"]
            return words_of(r["text"] for r in results)

        stored = send("A", {"skill": "store_memories", "text": A_PRIVATE})
        assert stored["status"]["state"] == "TASK_STATE_COMPLETED", stored
        send("A", {"skill": "store_memories", "text": A_SHARED, "visibility": "shared"})
        send("owner", {"skill": "store_memories", "text": OWNER})
        refused = send("owner", {"skill": "store_memories", "text": "x", "visibility": "private"})
        assert refused["status"]["state"] == "TASK_STATE_REJECTED"
        assert found("A", "bravoplan") == {"bravoplan"}
        assert found("B", "bravoplan") == set()
        assert found("B", "charlieshared") == {"charlieshared"}
        assert found("owner", "bravoplan") == {"bravoplan"}
        # tasks are per caller: B cannot read, and does not list, A's task
        missing = rpc("B", "GetTask", {"id": stored["id"]})
        assert "error" in missing, missing
        assert rpc("A", "GetTask", {"id": stored["id"]})["result"]["id"] == stored["id"]
        listed_b = rpc("B", "ListTasks", {})["result"]
        assert stored["id"] not in {t["id"] for t in listed_b.get("tasks", [])}
        listed_owner = rpc("owner", "ListTasks", {})["result"]
        assert stored["id"] not in {t["id"] for t in listed_owner.get("tasks", [])}
    finally:
        srv.stop()


async def test_export_says_whose_each_line_is_and_import_puts_it_back(database, tmp_path):
    srv = start(database, tmp_path)
    try:
        ns = f"exp-{uuid.uuid4().hex[:6]}"
        owner_tok, a_tok = srv.token(ns), await agent_token(srv.db, ns, "planner")
        async with Agent(srv.url, owner_tok) as owner, Agent(srv.url, a_tok) as a:
            await owner.ok("store_memory", text=OWNER)
            await a.ok("store_memory", text=A_PRIVATE)
            await wait_all(owner, a)
        out = recall_cli("export", ns, "--db", srv.db, env=srv.env).stdout
        lines = [json.loads(line) for line in out.splitlines() if line.strip()]
        whose = {words_of([d["text"]]).pop(): (d["visibility"], d.get("private_to"))
                 for d in lines}
        assert whose == {"alphaowner": ("shared", None), "bravoplan": ("private", "planner")}
        copy = f"copy-{uuid.uuid4().hex[:6]}"
        path = tmp_path / "export.jsonl"
        path.write_text(out)
        recall_cli("import", str(path), "--namespace", copy, "--db", srv.db, "--no-embed",
                   "--quiet", env=srv.env)
        copy_owner, copy_a = srv.token(copy), await agent_token(srv.db, copy, "planner")
        copy_b = await agent_token(srv.db, copy, "writer")
        async with Agent(srv.url, copy_owner) as o, Agent(srv.url, copy_a) as ca, \
                Agent(srv.url, copy_b) as cb:
            assert (await sees(o))["inspect"] == {"alphaowner", "bravoplan"}
            assert (await sees(ca))["inspect"] == {"alphaowner", "bravoplan"}
            assert (await sees(cb))["inspect"] == {"alphaowner"}
    finally:
        srv.stop()


async def test_inspector_pages_show_what_each_token_sees(database, tmp_path):
    from recall_testkit.inspector import signed_in

    srv = start(database, tmp_path)
    try:
        ns = f"ui-{uuid.uuid4().hex[:6]}"
        tok = {"owner": srv.token(ns), "A": await agent_token(srv.db, ns, "planner"),
               "B": await agent_token(srv.db, ns, "writer")}
        async with Agent(srv.url, tok["owner"]) as owner, Agent(srv.url, tok["A"]) as a, \
                Agent(srv.url, tok["B"]) as b:
            await owner.ok("store_memory", text=OWNER)
            await a.ok("store_memory", text=A_PRIVATE)
            await b.ok("store_memory", text=B_PRIVATE)
            await wait_all(owner, a, b)
            ids = {w: m["id"] for m in (await owner.ok("inspect_memories"))["memories"]
                   for w in words_of([m["text"]])}
        pages = {who: signed_in(srv, t) for who, t in tok.items()}
        listed = {who: words_of([c.get("/ui/memories", params={"state": "all"}).text])
                  for who, c in pages.items()}
        assert listed == {"owner": {"alphaowner", "bravoplan", "deltawrite"},
                          "A": {"alphaowner", "bravoplan"}, "B": {"alphaowner", "deltawrite"}}
        assert "private to planner" in pages["owner"].get("/ui/memories").text
        searched = words_of([pages["B"].get("/ui/search",
                                            params={"query": "my private codeword"}).text])
        assert "deltawrite" in searched and "bravoplan" not in searched, searched
        # another agent's memory page does not exist; a shared one cannot be forgotten by A
        assert pages["B"].get(f"/ui/memories/{ids['bravoplan']}").status_code == 404
        r = pages["A"].post(f"/ui/memories/{ids['alphaowner']}/forget",
                            data={"csrf": pages["A"].csrf})
        assert r.status_code in (400, 403) and "shared" in r.text
        assert pages["A"].get("/ui/queue").status_code == 404  # the owner's page
        assert "alphaowner" in pages["owner"].get(f"/ui/memories/{ids['alphaowner']}").text
    finally:
        srv.stop()
