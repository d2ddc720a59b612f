"""A fact that changed, end to end: a real `recall serve` (SQLite, and Postgres when
RECALL_TEST_PG_URL is set) with the default extractor, agents over MCP with the official
client, `recall history` on the same database. The later statement names no fact ("a new job
at Globex") or another subject ("The API runs on FastAPI now" after "We use Django for the
API"); the worker gives the extractor the facts already
known, so it takes their key and supersedes them, and the history keeps the old value."""

from __future__ import annotations

import asyncio
import json

import pytest

from recall_testkit.serverproc import token_in_process, Agent, ServerProcess, recall_cli

try:
    from recall_testkit.postgres import Schemas, pg_scratch, pg_url  # noqa: F401 - for the postgres param
except ImportError as exc:  # recall-postgres not installed
    _missing = str(exc)

    @pytest.fixture(scope="session")
    def pg_scratch():
        pytest.skip(f"recall-postgres is not installed ({_missing})")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request, tmp_path_factory):
    work = tmp_path_factory.mktemp("known")
    schemas = None
    if request.param == "sqlite":
        db = str(work / "recall.db")
    else:
        schemas = Schemas(request.getfixturevalue("pg_scratch"))
        db = asyncio.run(schemas.create())
    # The default install: BM25 and the dense ranker ("Where do I work?" shares no word with
    # "a new job at Globex").
    srv = ServerProcess(db, work, env={"RECALL_DISABLE_PLUGINS": ""}).start()
    yield srv
    srv.stop()
    if schemas is not None:
        asyncio.run(schemas.drop_all())


async def token(srv: ServerProcess, namespace: str) -> str:
    return await token_in_process(srv.db, namespace)


def history(srv: ServerProcess, namespace: str, attribute: str,
            entity: str = "user") -> list[tuple[str, bool]]:
    out = recall_cli("history", namespace, "--entity", entity, "--attribute", attribute,
                     "--db", srv.db, "--json", env=srv.env)
    return [(r["value"], r["active"]) for r in json.loads(out.stdout)]


async def said_then_changed(agent: Agent, first: str, later: str, question: str) -> list[dict]:
    await agent.ok("store_memory", text=first)
    await agent.wait_idle()
    await agent.ok("store_memory", text=later)
    await agent.wait_idle()
    return (await agent.ok("search_memories", query=question))["results"]


async def test_a_new_job_supersedes_the_old_employer(server):
    first, later = "I work at Acme Corp.", "I just started a new job at Globex."
    async with Agent(server.url, await token(server, "erin")) as erin:
        found = await said_then_changed(erin, first, later, "Where do I work?")
        assert found[0]["text"] == later
        assert first not in [r["text"] for r in found]  # superseded: history, not an answer
    assert history(server, "erin", "employer") == [("Acme Corp", False), ("Globex", True)]


async def test_a_value_said_without_its_fact_takes_the_known_key(server):
    # The rules alone read the later statement as the API's framework; the team's known
    # framework, whose memory names the API, gives it the team's key, so it supersedes.
    first, later = "We use Django for the API.", "The API runs on FastAPI now."
    async with Agent(server.url, await token(server, "finn")) as finn, \
            Agent(server.url, await token(server, "gail")) as gail:
        found = await said_then_changed(finn, first, later, "Which framework does the API use?")
        assert found[0]["text"] == later and first not in [r["text"] for r in found]
        # In a namespace that knows nothing, the same statement is the rules' own fact.
        await gail.ok("store_memory", text=later)
        await gail.wait_idle()
    assert history(server, "finn", "framework", "team") == [("Django", False), ("FastAPI", True)]
    assert history(server, "gail", "framework", "team") == []
    assert history(server, "gail", "framework", "api") == [("FastAPI", True)]
