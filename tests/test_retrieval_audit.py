"""The retrieval audit (issue 30): which memories an agent was given. Over real HTTP against a
`recall serve` process, on both backends: searches over MCP and A2A record the ids and scores
they returned under their tool-call record (never the query); the admin API and the inspector
show, for a memory, the recent searches that returned it and, for a call, what it returned;
another namespace sees none of it; forgetting a memory and erasing the namespace remove it."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from recall_testkit.a2a import A2A, artifact, data
from recall_testkit.inspector import (admin_token, backends, database, signed_in, start_server,
                                      store_all)
from recall_testkit.serverproc import Agent

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module", params=backends())
def srv(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"retrieval-{request.param}")
    db, cleanup = database(request.param, work)
    server = start_server(work, db)
    yield server
    server.stop()
    cleanup()


async def admin_get(srv, path: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=srv.base + "/admin", timeout=30, headers={
            "Authorization": f"Bearer {admin_token(srv)}"}) as c:
        return await c.get(path)


async def retrievals(srv, ns: str, memory_id: str) -> list[dict]:
    r = await admin_get(srv, f"/namespaces/{ns}/memories/{memory_id}/retrievals")
    assert r.status_code == 200, r.text
    return r.json()["retrievals"]


async def settle() -> None:
    await asyncio.sleep(0.6)  # audit rows are written in batches within 0.25 s of the answer


async def test_searches_record_what_they_returned(srv):
    token = srv.token("rita")
    await store_all(srv, token, ["I live in Lisbon.", "My favourite drink is green tea."])
    async with Agent(srv.url, token) as a:
        got = (await a.ok("search_memories", query="Where do I live?", limit=5))["results"]
        again = (await a.ok("search_memories", query="What do I drink?", limit=5))["results"]
    await settle()
    lisbon = next(r for r in got if "Lisbon" in r["text"])
    hits = await retrievals(srv, "rita", lisbon["id"])
    assert len(hits) == 1 + any(r["id"] == lisbon["id"] for r in again)
    first = hits[-1]  # newest first: the first search is the last row
    assert first["tool"] == "search_memories"
    assert first["rank"] == [r["id"] for r in got].index(lisbon["id"]) + 1
    assert first["score"] == pytest.approx(lisbon["score"])
    call = (await admin_get(srv, f"/namespaces/rita/calls/{first['call_id']}")).json()
    assert [i for i, _ in call["returned"]] == [r["id"] for r in got]  # the order it gave
    assert [s for _, s in call["returned"]] == pytest.approx([r["score"] for r in got])
    assert "Where do I live" not in str(call)  # only the arguments' hash, never the query
    # Another namespace: not its call, not its memory.
    other = await admin_get(srv, f"/namespaces/someone/calls/{first['call_id']}")
    assert other.status_code == 404 and other.json()["code"] == "NOT_FOUND"
    assert await retrievals(srv, "someone", lisbon["id"]) == []
    # The inspector: the memory's page lists the call; the call's page lists what it gave.
    ui = signed_in(srv, token)
    page = ui.get(f"/ui/memories/{lisbon['id']}").text
    assert "Recent searches that returned it" in page and f"/ui/calls/{first['call_id']}" in page
    call_page = ui.get(f"/ui/calls/{first['call_id']}")
    assert call_page.status_code == 200 and "Lisbon" in call_page.text
    assert ui.get("/ui/calls/nope").status_code == 404


async def test_a2a_searches_are_audited_too(srv):
    token = srv.token("sam")
    await store_all(srv, token, ["I work at Acme Corp as an engineer."])
    async with A2A(srv.base, token, streaming=False) as sam:
        task = await sam.send(data(skill="search_memories", query="Where do I work?"))
        results = artifact(task, "search_results")["results"]
    await settle()
    assert results
    hits = await retrievals(srv, "sam", results[0]["id"])
    assert [(h["tool"], h["rank"]) for h in hits] == [("a2a:search_memories", 1)]


async def test_forget_and_erase_remove_the_audit(srv):
    token = srv.token("una")
    await store_all(srv, token, ["I live in Porto.", "I have a dog named Rex."])
    async with Agent(srv.url, token) as a:
        got = (await a.ok("search_memories", query="Porto dog", limit=5))["results"]
        await settle()
        porto = next(r for r in got if "Porto" in r["text"])
        rex = next(r for r in got if "Rex" in r["text"])
        assert await retrievals(srv, "una", porto["id"])
        await a.ok("delete_memory", memory_id=porto["id"])
        assert await retrievals(srv, "una", porto["id"]) == []  # forgotten: gone from the audit
        call_id = (await retrievals(srv, "una", rex["id"]))[0]["call_id"]
        call = (await admin_get(srv, f"/namespaces/una/calls/{call_id}")).json()
        assert porto["id"] not in [i for i, _ in call["returned"]]
        await a.ok("delete_namespace_data", confirm="DELETE MY DATA")
    await settle()
    assert await retrievals(srv, "una", rex["id"]) == []
    assert (await admin_get(srv, f"/namespaces/una/calls/{call_id}")).status_code == 404
