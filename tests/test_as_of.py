"""`search_memories(as_of=...)`: answering from the facts valid at a past moment.

A user's history is imported through the extraction path with the times it was said
(`recall import --extract`, created_at per line), then a real `recall serve` is asked over MCP
(fastmcp.Client, real HTTP) and over A2A: "what editor did I use in March?" finds vim, which
VS Code replaced in May; the same question without as_of finds VS Code.
"""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from recall_testkit.serverproc import Agent, ServerProcess, recall_cli
from recall_testkit.a2a import A2A, COMPLETED, REJECTED, artifact, data, status_data

pytestmark = pytest.mark.asyncio(loop_scope="module")

HISTORY = [
    {"text": "I use vim.", "created_at": "2026-02-10T09:00:00Z"},
    {"text": "We decided to deploy only on Tuesdays.", "created_at": "2026-04-01T12:00:00Z"},
    {"text": "I switched to VS Code.", "created_at": "2026-05-02T18:30:00Z"},
]
QUESTION = "what editor did I use?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("as_of")
    db = str(work / "recall.db")
    src = work / "history.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in HISTORY))
    srv = ServerProcess(db, work)
    out = json.loads(recall_cli("import", str(src), "--namespace", "alice", "--extract",
                                "--db", db, "--create", "--quiet", env=srv.env).stdout)
    assert out["failed_jobs"] == 0 and out["queued"] == 3, out
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def token(server):
    return server.token("alice")


async def search(agent: Agent, **args):
    return await agent.ok("search_memories", query=QUESTION, mmr_lambda=1.0, **args)


async def test_what_editor_did_i_use_in_march(server, token):
    async with Agent(server.url, token) as alice:
        now = await search(alice)
        assert [r["text"] for r in now["results"]][:1] == ["I switched to VS Code."]
        assert "I use vim." not in [r["text"] for r in now["results"]]
        assert all("valid_from" not in r for r in now["results"])  # default shape unchanged

        march = await search(alice, as_of="2026-03-31")
        texts = [r["text"] for r in march["results"]]
        assert texts[0] == "I use vim.", march
        assert "I switched to VS Code." not in texts
        # the Tuesday decision was made in April: not yet known at the end of March
        assert "We decided to deploy only on Tuesdays." not in texts
        vim = march["results"][0]
        assert vim["value"] == "vim"
        assert vim["valid_from"].startswith("2026-02-10T09:00:00")
        assert vim["valid_until"].startswith("2026-05-02T18:30:00")  # replaced by VS Code

        # A bare date is the end of that day: the switch on May 2 is in, on May 1 not yet.
        may2 = await search(alice, as_of="2026-05-02")
        assert may2["results"][0]["text"] == "I switched to VS Code."
        assert may2["results"][0]["valid_until"] is None
        may1 = await search(alice, as_of="2026-05-01T23:59:59+00:00")
        assert may1["results"][0]["text"] == "I use vim."
        # An offset is honoured: 2026-05-02T20:00+02:00 is 18:00 UTC, before the switch.
        before = await search(alice, as_of="2026-05-02T20:00:00+02:00")
        assert before["results"][0]["text"] == "I use vim."

        april = await alice.ok("search_memories", query="when do we deploy?",
                               as_of="2026-04-15")
        assert [r["text"] for r in april["results"]][:1] == [
            "We decided to deploy only on Tuesdays."]
        assert (await alice.ok("search_memories", query="when do we deploy?",
                               as_of="2026-03-31"))["results"] == []

        # Before anything was said there is nothing to find.
        assert (await search(alice, as_of="2026-01-01"))["results"] == []


async def test_a_bad_time_is_invalid_param(server, token):
    async with Agent(server.url, token) as alice:
        for bad in ("last March", "2026-13-01", "2026-03-31T25:00", " "):
            env = await alice.call("search_memories", query=QUESTION, as_of=bad)
            assert env["status"] == "error" and env["code"] == "INVALID_PARAM", env
            assert "as_of" in env["error"] and "ISO 8601" in env["error"], env


async def test_as_of_is_documented_in_the_tool_schema(server, token):
    async with Agent(server.url, token) as alice:
        tools = {t.name: t for t in await alice.client.list_tools()}
    tool = tools["search_memories"]
    assert tool.description.splitlines()[0].startswith("Find memories relevant to a question")
    assert "as_of" in tool.description
    assert "as_of" in tool.input_schema["properties"]
    assert "as_of" not in tool.input_schema.get("required", [])


async def test_a2a_search_takes_as_of_too(server, token):
    async with A2A(server.base, token, streaming=False) as alice:
        task = await alice.send(data(skill="search_memories", query=QUESTION,
                                     as_of="2026-03-31", mmr_lambda=1.0))
        assert task.status.state == COMPLETED
        results = artifact(task, "search_results")["results"]
        assert results[0]["text"] == "I use vim."
        assert results[0]["valid_until"].startswith("2026-05-02")
        task = await alice.send(data(skill="search_memories", query=QUESTION, as_of="March"))
        assert task.status.state == REJECTED
        assert status_data(task)["code"] == "INVALID_PARAM"


# -- the dense ranker over a past pool (service API, the torch-free packaged model) -------------
MORE = ["The user's cat is called Miso.", "The user runs 10 km every Sunday morning.",
        "The user is allergic to peanuts.", "The user's sister lives in Lyon."]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def dense_runtime(tmp_path_factory):
    recall_embeddings = pytest.importorskip("recall_embeddings")
    import asyncio

    import recall_extractors
    import recall_sqlite
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config
    from recall_core.plugins import get_plugin_manager
    from recall_core.memory.transfer import ImportLine, import_verbatim

    pm = get_plugin_manager(load_entrypoints=False)
    for mod, name in ((recall_sqlite, "sqlite"), (recall_extractors, "extractors"),
                      (recall_embeddings, "embeddings")):
        pm.register(mod, name=name)
    db = tmp_path_factory.mktemp("as_of_dense") / "r.db"
    rt = await build_runtime(load_config(None, db=str(db)), pm, start_worker=False)
    assert await asyncio.to_thread(rt.embedder.wait_ready, 120), rt.embedder.status()
    lines = [ImportLine(text="I use vim.", entity="user", attribute="editor", value="vim",
                        created_at="2026-02-10T09:00:00Z"),
             ImportLine(text="I switched to VS Code.", entity="user", attribute="editor",
                        value="VS Code", created_at="2026-05-02T18:30:00Z")]
    lines += [ImportLine(text=t, created_at="2026-01-15T08:00:00Z") for t in MORE]
    await import_verbatim(rt.storage, "u", list(enumerate(lines, 1)), rt.embedder)
    yield rt
    await rt.close()


async def test_dense_ranks_the_past_pool_and_scores_keep_their_meaning(dense_runtime):
    from recall_core.search.scoring import SCORE_THRESHOLD_NONSENSE

    service = dense_runtime.service
    # No word in common with "I use vim.": only the dense ranker can find it.
    past = await service.search("u", "which program do I write code in?", as_of="2026-03-31",
                                score_threshold=SCORE_THRESHOLD_NONSENSE, explain=True)
    assert past["degraded"] == []
    hits = {r["name"]: r["hits"] for r in past["explain"].rankers}
    assert hits["dense"] > 0
    assert [r["text"] for r in past["results"]][:1] == ["I use vim."], past["results"]
    assert "I switched to VS Code." not in [r["text"] for r in past["results"]]
    # Gibberish finds nothing above the documented threshold in the past either.
    for query in ("qwzx plmok vbnrt", "zzkq vlorp"):
        res = await service.search("u", query, as_of="2026-03-31",
                                   score_threshold=SCORE_THRESHOLD_NONSENSE)
        assert res["results"] == [], res
    # After the last change, as_of answers like a search of the present.
    now = await service.search("u", "which program do I write code in?", mmr_lambda=1.0)
    later = await service.search("u", "which program do I write code in?", mmr_lambda=1.0,
                                 as_of="2027-01-01")
    assert [r["id"] for r in later["results"]][:3] == [r["id"] for r in now["results"]][:3]
