from __future__ import annotations

import recall_extractors
import recall_ranker_newest
import recall_sqlite
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.plugins import get_plugin_manager
from recall_core.memory.transfer import ImportLine, import_verbatim


async def test_newest_ranks_recent_memories_first_and_is_fused(tmp_path):
    pm = get_plugin_manager(load_entrypoints=False)
    for mod, name in ((recall_sqlite, "sqlite"), (recall_extractors, "extractors"),
                      (recall_ranker_newest, "newest")):
        pm.register(mod, name=name)
    config = load_config(None, db=str(tmp_path / "r.db"), rankers={"bm25": 1.0, "newest": 0.3},
                         plugins={"newest": {"window": 2}})
    rt = await build_runtime(config, pm, start_worker=False)
    try:
        rows = [(i, ImportLine(text=t, created_at=f"2024-01-0{i}T00:00:00+00:00"))
                for i, t in enumerate(["apples are red", "bananas are yellow", "cherries are dark"], 1)]
        await import_verbatim(rt.storage, "ns", rows)
        ranked = await rt.rankers[1].ranker.rank(rt.storage, "ns", "anything", 10)
        texts = [m.text for m in await rt.storage.get_memories("ns", [h.id for h in ranked])]
        assert len(ranked) == 2 and set(texts) == {"cherries are dark", "bananas are yellow"}
        # A query no keyword matches still gets the newest memory through fusion.
        res = await rt.service.search("ns", "zebra", limit=5)
        assert res["results"][0]["text"] == "cherries are dark"
        assert (await rt.storage.get_memories("other", [h.id for h in ranked])) == []
    finally:
        await rt.close()
