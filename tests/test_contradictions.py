"""Contradictions end to end: a real `recall serve` (SQLite, and Postgres when
RECALL_TEST_PG_URL is set), agents over MCP, `recall history` on the same database.

"I use vim", later "I switched to VS Code": search only ever returns VS Code, the history
keeps both (vim closed with valid_until). Saying the same thing again, or nearly the same
words, stores nothing new."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest

from recall_testkit.serverproc import token_in_process, Agent, ServerProcess, recall_cli

try:
    from recall_testkit.postgres import Schemas, pg_scratch, pg_url  # noqa: F401 - for the postgres param
except ImportError as exc:  # recall-postgres not installed
    _missing = str(exc)

    @pytest.fixture(scope="session")
    def pg_scratch():
        pytest.skip(f"recall-postgres is not installed ({_missing})")

VIM, VSCODE = "I use vim.", "I switched to VS Code."


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request, tmp_path_factory):
    work = tmp_path_factory.mktemp("contradictions")
    schemas = None
    if request.param == "sqlite":
        db = str(work / "recall.db")
    else:
        schemas = Schemas(request.getfixturevalue("pg_scratch"))
        db = asyncio.run(schemas.create())
    srv = ServerProcess(db, work).start()
    yield srv
    srv.stop()
    if schemas is not None:
        asyncio.run(schemas.drop_all())


async def token(srv: ServerProcess, namespace: str) -> str:
    return await token_in_process(srv.db, namespace)


def history(srv: ServerProcess, namespace: str) -> list[dict]:
    out = recall_cli("history", namespace, "--entity", "user", "--attribute", "editor",
                     "--db", srv.db, "--json", env=srv.env)
    return json.loads(out.stdout)


async def texts(agent: Agent, query: str) -> list[str]:
    return [r["text"] for r in (await agent.ok("search_memories", query=query))["results"]]


async def test_switching_editor_supersedes_and_history_keeps_both(server):
    async with Agent(server.url, await token(server, "alice")) as alice, \
            Agent(server.url, await token(server, "bob")) as bob:
        await alice.ok("store_memory", text=VIM, topic="tools")
        await bob.ok("store_memory", text=VIM, topic="tools")
        await alice.wait_idle()
        await bob.wait_idle()
        assert await texts(alice, "vim") == [VIM]

        await alice.ok("store_memory", text=VSCODE, topic="tools")
        await alice.wait_idle()
        # the old value is gone from every read path, even for a query naming it
        assert await texts(alice, "which editor does the user use, vim or VS Code?") == [VSCODE]
        assert await texts(alice, "vim") == []
        listed = (await alice.ok("inspect_memories"))["memories"]
        assert [(m["text"], m.get("attribute"), m.get("value")) for m in listed] == \
            [(VSCODE, "editor", "VS Code")]
        # another namespace's vim is untouched
        assert await texts(bob, "vim") == [VIM]

    rows = history(server, "alice")
    assert [(r["value"], r["active"]) for r in rows] == [("vim", False), ("VS Code", True)]
    vim, vscode = rows
    assert vim["valid_until"] is not None and vscode["valid_until"] is None
    until, since = vim["valid_until"], vscode["valid_from"]
    assert datetime.fromisoformat(until) >= datetime.fromisoformat(since)
    assert [r["value"] for r in history(server, "bob")] == ["vim"]


async def test_same_value_again_is_not_stored_twice(server):
    async with Agent(server.url, await token(server, "carol")) as carol:
        await carol.ok("store_memory", text=VIM, topic="tools")
        await carol.wait_idle()
        await carol.ok("store_memory", text=VSCODE, topic="tools")
        await carol.wait_idle()
        before = await carol.ok("get_memory_stats")
        # the same sentence again (a new idempotency key: a new job), and the same value in
        # other words: both refresh the existing memory
        await carol.ok("store_memory", text=VSCODE, topic="tools")
        await carol.ok("store_memory", text="I use VS Code.", topic="tools")
        after = await carol.wait_idle()
        assert after["total"] == before["total"] == 1
        assert await texts(carol, "VS Code") == [VSCODE]
    assert [(r["value"], r["active"]) for r in history(server, "carol")] == \
        [("vim", False), ("VS Code", True)]


async def test_near_duplicate_text_is_stored_once(server):
    first = "The deploy script lives in tools/deploy.sh and runs on Fridays."
    again = "The deploy script lives in tools/deploy.sh, and it runs on Fridays!"
    other = "The backup script lives in tools/backup.sh and runs nightly."
    async with Agent(server.url, await token(server, "dave")) as dave:
        await dave.ok("store_memory", text=first, topic="ops")
        await dave.wait_idle()
        await dave.ok("store_memory", text=again, topic="ops")
        await dave.ok("store_memory", text=other, topic="ops")
        stats = await dave.wait_idle()
        # each text makes two statements (where the script lives, when it runs); the second
        # text's are near duplicates of the first's and add nothing
        runs = "The deploy script runs on Fridays."
        assert stats["total"] == 4
        listed = {m["text"] for m in (await dave.ok("inspect_memories"))["memories"]}
        assert listed == {"The deploy script lives in tools/deploy.sh", runs,
                          "The backup script lives in tools/backup.sh",
                          "The backup script runs nightly."}
        found = await texts(dave, "when does the deploy script run?")
        assert found[0] == runs and found.count(runs) == 1 and \
            "The deploy script runs on Fridays!" not in found


async def test_someone_elses_change_leaves_the_users_fact(server):
    # issue 27's "no false merges": statements about other people or passing states, read
    # with the user's editor known, never end or replace it (each once did, offline)
    async with Agent(server.url, await token(server, "erin")) as erin:
        await erin.ok("store_memory", text=VIM, topic="tools")
        await erin.wait_idle()
        for text in ["They switched to VS Code.", "She dropped vim.",
                     "Someone on my team switched to Emacs.",
                     "I wrote a blog post about switching to Neovim."]:
            await erin.ok("store_memory", text=text, topic="tools")
        await erin.wait_idle()
        listed = (await erin.ok("inspect_memories"))["memories"]
        assert [(m.get("entity"), m.get("value")) for m in listed
                if m.get("attribute") == "editor"] == [("user", "vim")]
    assert [(r["value"], r["active"]) for r in history(server, "erin")] == [("vim", True)]
