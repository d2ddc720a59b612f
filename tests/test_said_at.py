"""`store_memory(created_at=...)`: replaying a conversation that was said earlier.

An agent that hands Recall a past conversation through `store_memory` (a chat log, another
tool's history) can date each text. A real `recall serve` (worker running) is called over MCP
(fastmcp.Client, real HTTP): the memories carry the time they were said, the fact timeline
follows it whatever order the stores arrive in, `as_of` and time-named searches ("in May
2023") find them, and a bad or future time is a clear error that stores nothing.
"""

from __future__ import annotations

import pytest

from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("said_at")
    srv = ServerProcess(str(work / "recall.db"), work)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def agent(server):
    """An MCP client holding `namespace`'s token."""
    return lambda namespace: Agent(server.url, server.token(namespace))


async def test_stores_arriving_out_of_order_take_the_time_they_were_said(agent):
    async with agent("editor") as a:
        # The May switch is replayed first, the February statement after it.
        await a.ok("store_memory", text="I switched to VS Code.",
                   created_at="2026-05-02T18:30:00Z")
        await a.ok("store_memory", text="I use vim.", created_at="2026-02-10T09:00:00+00:00")
        await a.wait_idle()

        now = await a.ok("search_memories", query="what editor do I use?", mmr_lambda=1.0)
        texts = [r["text"] for r in now["results"]]
        assert texts[:1] == ["I switched to VS Code."], now
        assert "I use vim." not in texts  # history, not a second current value
        assert now["results"][0]["created_at"].startswith("2026-05-02T18:30:00")

        march = await a.ok("search_memories", query="what editor do I use?", as_of="2026-03-31")
        vim = march["results"][0]
        assert vim["text"] == "I use vim." and vim["created_at"].startswith("2026-02-10T09:00:00")
        assert vim["valid_until"].startswith("2026-05-02T18:30:00")


async def test_a_bare_date_is_the_start_of_that_day_utc(agent):
    async with agent("dates") as a:
        await a.ok("store_memory", text="We decided to deploy only on Tuesdays.",
                   created_at="2023-05-08")
        await a.wait_idle()
        found = await a.ok("search_memories", query="when do we deploy?")
        assert found["results"][0]["created_at"] == "2023-05-08T00:00:00+00:00"


async def test_a_search_naming_a_month_finds_what_was_said_then(agent):
    said = {
        "2023-05-20T10:00:00Z": "Caroline: I signed up for a pottery course at the community centre.",
        "2023-07-15T10:00:00Z": "Caroline: Last weekend I joined a watercolour workshop downtown.",
    }
    async with agent("months") as a:
        for when, text in said.items():
            await a.ok("store_memory", text=text, created_at=when)
        await a.wait_idle()
        may = await a.ok("search_memories", query="What did Caroline try in May 2023?",
                         mmr_lambda=1.0)
        july = await a.ok("search_memories", query="What did Caroline try in July 2023?",
                          mmr_lambda=1.0)
    assert "pottery" in may["results"][0]["text"], may
    assert "watercolour" in july["results"][0]["text"], july


@pytest.mark.parametrize("bad", ["2999-01-01", "yesterday", "2023-13-01", "2023-05-08T25:00",
                                 " ", "0001-01-01T00:00+05:00"])
async def test_a_bad_or_future_time_stores_nothing(agent, bad):
    async with agent("bad") as a:
        env = await a.call("store_memory", text="I like green tea.", created_at=bad,
                           idempotency_key=f"k-{bad}")
        assert env["status"] == "error" and env["code"] == "INVALID_PARAM", env
        assert "created_at" in env["error"] and "ISO 8601" in env["error"], env
        if bad == "2999-01-01":
            assert "future" in env["error"], env
        # Nothing was recorded under the key: a different text with it is a new store.
        ok = await a.ok("store_memory", text=f"I like black coffee ({bad}).",
                        idempotency_key=f"k-{bad}")
        assert ok["queued"] is True


async def test_a_retry_must_repeat_the_time(agent):
    async with agent("retry") as a:
        first = await a.ok("store_memory", text="I live in Lisbon.", created_at="2024-01-05",
                           idempotency_key="lisbon")
        again = await a.ok("store_memory", text="I live in Lisbon.", created_at="2024-01-05",
                           idempotency_key="lisbon")
        assert first["queued"] is True and again["cached"] is True
        assert again["job_id"] == first["job_id"]
        clash = await a.call("store_memory", text="I live in Lisbon.", created_at="2024-02-05",
                             idempotency_key="lisbon")
        assert clash["code"] == "INVALID_PARAM" and "created_at" in clash["error"], clash


async def test_created_at_is_documented_and_optional(agent):
    async with agent("schema") as a:
        tools = {t.name: t for t in await a.client.list_tools()}
    store = tools["store_memory"]
    assert "created_at" in store.input_schema["properties"]
    assert "created_at" not in store.input_schema.get("required", [])
    assert "created_at" in store.description


async def test_a2a_store_takes_created_at_and_an_older_statement_asks_nothing(server):
    from recall_testkit.a2a import A2A, COMPLETED, REJECTED, artifact, data, status_data

    tok = server.token("a2a")
    async with A2A(server.base, tok, streaming=False) as a:
        first = await a.send(data(skill="store_memories", text="I use vim."))
        assert first.status.state == COMPLETED
        vim = artifact(first, "memories")["stored"][0]
        # Said a year earlier: history of the current value, not a contradiction to decide
        # (a recent fact of similar importance would otherwise stop the task to ask).
        old = await a.send(data(skill="store_memories", text="I use nano.",
                                created_at="2025-06-01T08:00:00Z"))
        assert old.status.state == COMPLETED, old.status
        written = artifact(old, "memories")
        assert written["superseded_ids"] == [] and written["stored"] == []
        assert len(written["history_ids"]) == 1  # written, as history of vim
        bad = await a.send(data(skill="store_memories", text="I use Helix.",
                                created_at="2999-01-01"))
        assert bad.status.state == REJECTED
        assert status_data(bad)["code"] == "INVALID_PARAM"
    async with Agent(server.url, tok) as agent:
        now = await agent.ok("search_memories", query="which editor do I use?", mmr_lambda=1.0)
        texts = [r["text"] for r in now["results"]]
        assert texts[0] == "I use vim." and now["results"][0]["id"] == vim["id"]
        assert "I use nano." not in texts and "I use Helix." not in texts
        june = await agent.ok("search_memories", query="which editor do I use?",
                              as_of="2025-07-01")
        nano = june["results"][0]
        assert nano["text"] == "I use nano." and nano["id"] == written["history_ids"][0]
        assert nano["created_at"] == "2025-06-01T08:00:00+00:00"
        assert nano["valid_until"] == vim["created_at"]
