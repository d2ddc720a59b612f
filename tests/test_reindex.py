"""`recall reindex` after an embedding model change, through the CLI, on SQLite, while a
real `recall serve` answers searches over MCP.

Both packaged torch-free models make 384-wide vectors, so only the recorded model id keeps
them apart: memories imported with MiniLM are left out of the e5 server's semantic search
(and data.degraded says so) until `recall reindex` re-embeds them; it shows a progress bar,
stops at --limit and continues on the next run.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from recall_testkit.serverproc import Agent, ServerProcess, recall_cli

pytest.importorskip("recall_embeddings")
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

E5 = {"RECALL_DISABLE_PLUGINS": "", "RECALL_PLUGIN_DENSE_MODEL": "multilingual-e5-small-q4"}
MINILM = {"RECALL_DISABLE_PLUGINS": "", "RECALL_PLUGIN_DENSE_MODEL": "all-MiniLM-L6-v2-int8"}
TOPICS = ["astronomy", "baking", "chess", "diving", "embroidery", "fencing", "gardening",
          "hiking", "juggling", "karate", "knitting", "origami", "painting", "rowing", "sailing",
          "tennis", "violin", "woodworking", "yoga", "archery"]
LINES = ([{"text": f"The user took up {t} last year and practises it weekly."} for t in TOPICS]
         + [{"text": f"Turn {i} of a talk about the user's trip to Japan.", "session_id": "trip"}
            for i in range(10)])


def reindex(srv: ServerProcess, *args: str) -> tuple[dict, str]:
    out = recall_cli("reindex", *args, "--db", srv.db, env={**srv.env, **E5}, timeout=300)
    return json.loads(out.stdout), out.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("reindex")
    db = str(work / "recall.db")
    src = work / "memories.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    srv = ServerProcess(db, work, env=E5)
    out = json.loads(recall_cli("import", str(src), "--namespace", "alice", "--db", db, "--create",
                                "--quiet", env={**srv.env, **MINILM}, timeout=300).stdout)
    assert out["embedded"] is True and out["imported"] == len(LINES), out
    srv.start()
    yield srv
    srv.stop()


async def search(agent: Agent) -> dict:
    return await agent.ok("search_memories", query="which hobby involves stars and telescopes?")


async def wait_dense_ready(agent: Agent) -> dict:
    for _ in range(600):
        res = await search(agent)
        if not any("warming up" in d or "loading" in d for d in res["degraded"]):
            return res
        await asyncio.sleep(0.1)
    raise AssertionError(f"the dense ranker never became ready: {res['degraded']}")


def other_model_note(res: dict) -> str:
    notes = [d for d in res["degraded"] if "another embedding model" in d]
    return notes[0] if notes else ""


async def test_reindex_after_a_model_change_while_the_server_answers(server):
    status = json.loads(recall_cli("status", "--db", server.db, "--json", env=server.env).stdout)
    assert status["vectors"] == {"sentence-transformers/all-MiniLM-L6-v2": len(LINES)}

    async with Agent(server.url, server.token("alice")) as alice:
        before = await wait_dense_ready(alice)
        note = other_model_note(before)
        assert f"{len(LINES)} memories" in note and "recall reindex" in note, before["degraded"]
        assert "multilingual-e5-small-q4" in note
        # The query shares no word with any memory: only vectors could answer, and MiniLM's
        # are not compared with an e5 query (same width, another space).
        assert before["results"] == [], before["results"]

        # A first, limited run, with searches answered all along.
        answered = 0
        run = asyncio.create_task(asyncio.to_thread(reindex, server, "alice", "--batch", "4",
                                                    "--limit", "12"))
        while not run.done():
            await search(alice)  # ok: the server answers while the batches land
            answered += 1
            await asyncio.sleep(0.05)
        first, progress = await run
        assert answered >= 1
        assert first["reindexed"] == 12 and first["remaining"] == len(LINES) - 12, first
        assert first["model"] == "intfloat/multilingual-e5-small-q4"
        assert "reindexing" in progress and "12/12" in progress, progress  # the bar

        middle = await search(alice)
        assert f"{len(LINES) - 12} memories" in other_model_note(middle), middle["degraded"]

        # Run again (every namespace): it continues with what is left, then has nothing to do.
        second, _ = reindex(server, "--quiet")
        assert second["reindexed"] == len(LINES) - 12 and second["remaining"] == 0, second
        third, _ = reindex(server, "--quiet")
        assert third["reindexed"] == 0 and third["remaining"] == 0, third

        after = await search(alice)
        assert after["degraded"] == [], after["degraded"]
        assert "astronomy" in after["results"][0]["text"], after["results"][:3]

    status = json.loads(recall_cli("status", "--db", server.db, "--json", env=server.env).stdout)
    assert status["vectors"] == {"intfloat/multilingual-e5-small-q4": len(LINES)}


async def test_reindex_refuses_bad_arguments_and_a_missing_model(server):
    for bad in (["--batch", "0"], ["--limit", "-3"], ["--batch", "x"]):
        proc = recall_cli("reindex", *bad, "--db", server.db, env={**server.env, **E5},
                          check=False)
        assert proc.returncode == 2 and "at least 1" in proc.stderr, proc.stderr
    proc = recall_cli("reindex", "--db", server.db, check=False,
                      env={**server.env, "RECALL_DISABLE_PLUGINS": "embeddings"})
    assert proc.returncode == 2 and "no embedding model is configured" in proc.stderr, proc.stderr
