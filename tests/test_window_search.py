"""A query that names a time ranks what was said then, even when the rankers' candidates
over the whole namespace do not hold it (search.window_relevance, issue 14).

A real `recall serve` (BM25 only, 5 candidates per ranker so a small namespace shows what a
large one does) is called over MCP with fastmcp.Client on real HTTP. Eight lines about
movies said in March 2023 match "What movie did Joanna watch on 1 May, 2022?" better than the
answer said on 2 May 2022 ("... saw The Lord of the Rings last night"), which shares one word
with it: over the namespace it is no candidate at all, and only the time the query names
finds it.
"""

from __future__ import annotations

import pytest
import pytest_asyncio

from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

DISTRACTORS = [f"Joanna: We watched movie number {i} at the cinema, a movie worth the watch."
               for i in range(8)]
ANSWER = "Joanna: I took your tip and saw The Lord of the Rings trilogy last night."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("window")
    srv = ServerProcess(str(work / "recall.db"), work, env={"RECALL_SEARCH__CANDIDATES": "5"})
    srv.start()
    yield srv
    srv.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stored(server):
    async with Agent(server.url, server.token("joanna")) as a:
        for i, text in enumerate(DISTRACTORS):
            await a.ok("store_memory", text=text, created_at=f"2023-03-{10 + i:02d}T20:00:00Z")
        await a.ok("store_memory", text=ANSWER, created_at="2022-05-02T09:00:00Z")
        await a.wait_idle()
    return server


async def search(server, query: str, **args) -> list[str]:
    async with Agent(server.url, server.token("joanna")) as a:
        found = await a.ok("search_memories", query=query, limit=3, mmr_lambda=1.0, **args)
    return [r["text"] for r in found["results"]]


def answered(texts: list[str]) -> bool:
    return any("Lord of the Rings" in t for t in texts)


async def test_a_named_day_finds_what_was_said_then(stored):
    assert answered(await search(stored, "What movie did Joanna watch on 1 May, 2022?"))
    assert answered(await search(stored, "What movie did Joanna watch in May 2022?"))


async def test_without_the_time_or_with_another_it_is_no_candidate(stored):
    # The same words without a time, or naming a time nothing was said in: the window step
    # changes nothing, and the answer stays out of the rankers' five candidates.
    assert not answered(await search(stored, "What movie did Joanna watch?"))
    assert not answered(await search(stored, "What movie did Joanna watch on 1 May, 2021?"))


async def test_the_window_is_ranked_by_the_query_not_just_listed(stored):
    # A word no memory of the window holds finds nothing there: the window's memories are
    # ranked for the query, not returned for being in it.
    assert not answered(await search(stored, "What qwzx plmok did vbnrt see on 1 May, 2022?"))
    # A window holding every candidate tells nothing apart (all of March 2023): the same
    # results as without the time.
    assert await search(stored, "What movie did Joanna watch in March 2023?") == \
        await search(stored, "What movie did Joanna watch?")
