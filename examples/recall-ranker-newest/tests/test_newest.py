from __future__ import annotations

import pytest_asyncio

import recall_extractors
import recall_ranker_newest
import recall_sqlite
from recall_core import load_config
from recall_core.memory.transfer import ImportLine, import_verbatim
from recall_core.server.runtime import build_runtime
from recall_core.testing import RankerContract, plugin_manager
from recall_ranker_newest import NewestRanker, NewestSettings


class TestNewestRankerContract(RankerContract):
    """The example passes the conformance suite every ranker runs."""

    def make_ranker(self):
        return NewestRanker(NewestSettings())

    @pytest_asyncio.fixture
    async def storage(self, tmp_path):
        storage = recall_sqlite.make_storage(f"sqlite:///{tmp_path / 'r.db'}")
        await storage.open()
        yield storage
        await storage.close()


async def runtime(tmp_path):
    pm = plugin_manager(recall_sqlite, recall_extractors, recall_ranker_newest,
                        names=["sqlite", "extractors", "newest"])
    config = load_config(None, db=str(tmp_path / "r.db"), rankers={"bm25": 1.0, "newest": 0.3},
                         plugins={"newest": {"window": 2}})
    return await build_runtime(config, pm, start_worker=False)


async def test_newest_ranks_recent_memories_first_and_is_fused(tmp_path):
    rt = await runtime(tmp_path)
    try:
        rows = [(i, ImportLine(text=t, created_at=f"2024-01-0{i}T00:00:00+00:00"))
                for i, t in enumerate(["apples are red", "bananas are yellow", "cherries are dark"], 1)]
        await import_verbatim(rt.storage, "ns", rows)
        ranked = await rt.rankers[1].ranker.rank(rt.storage, "ns", "anything", 10)
        texts = [m.text for m in await rt.storage.get_memories("ns", [h.id for h in ranked])]
        assert len(ranked) == 2 and set(texts) == {"cherries are dark", "bananas are yellow"}
        # A query no keyword matches still gets the newest memory through fusion: in a plain
        # search, in a search of the past (as_of: rank_pool over the rows valid then) and in
        # an explained one (the inspector's), where the trace names the ranker.
        res = await rt.service.search("ns", "zebra", limit=5)
        assert res["results"][0]["text"] == "cherries are dark"
        past = await rt.service.search("ns", "zebra", limit=5, as_of="2024-01-02")
        assert [r["text"] for r in past["results"]][:1] == ["bananas are yellow"]
        assert past["degraded"] == []
        explained = await rt.service.search("ns", "zebra", limit=5, explain=True)
        assert explained["results"][0]["text"] == "cherries are dark"
        assert [r["name"] for r in explained["explain"].rankers] == ["bm25", "newest"]
        assert (await rt.storage.get_memories("other", [h.id for h in ranked])) == []
    finally:
        await rt.close()
