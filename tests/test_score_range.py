"""Every search score is within 0..1 (README "What a score means"; `score_threshold` is 0..1),
whatever the query and parameters: a property over MemoryService.search on SQLite and real
Postgres, with the product's rankers (BM25, the default dense model) plus a third-party ranker
that lists its hits twice.

Before the fix a memory first in every ranker, in the strongest session and of importance 1
scored ~1.2 (session locality multiplied relevance by up to 1.3).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import recall_extractors
import recall_sqlite
from recall_core import hookimpl
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.models import ScoredId
from recall_core.plugins import get_plugin_manager
from recall_core.memory.transfer import ImportLine, import_verbatim

from recall_testkit.backends import BACKENDS, PG_URL
from recall_core import Ranker

recall_embeddings = pytest.importorskip("recall_embeddings")

NOW = datetime.now(timezone.utc)
# (text, session, importance, days ago): sessions of several turns, loose memories, importance
# at both ends, fresh and old rows (recency 1 and ~0).
MEMORIES = [
    ("Caroline: I went to the LGBTQ support group yesterday.", "s1", 1.0, 0),
    ("Caroline: It was so powerful, everyone shared their stories.", "s1", 1.0, 0),
    ("Melanie: That sounds amazing, I'm proud of you!", "s1", 0.9, 0),
    ("Melanie: I painted a sunset over the lake last week.", "s2", 1.0, 3),
    ("Caroline: Your painting is beautiful, where was it?", "s2", 0.5, 3),
    ("Melanie: Lake Tahoe, we went camping with the kids.", "s2", 0.0, 3),
    ("The user prefers dark mode in every code editor.", None, 1.0, 0),
    ("Deploys to production are frozen on Fridays.", None, 0.2, 400),
    ("The team chose PostgreSQL for the billing service.", "s3", 1.0, 1),
    ("Billing runs on PostgreSQL 16 with nightly backups.", "s3", 1.0, 1),
]
TEXTS = [t for t, *_ in MEMORIES]


class EchoRanker(Ranker):
    """A careless third-party ranker: every memory whose text shares a word with the query,
    each listed twice."""
    name = "echo"

    def __init__(self, settings):
        pass

    async def rank(self, storage, namespace, query, limit):
        words = {w.lower() for w in query.split()}
        page, _ = await storage.list_memories(namespace, 50, 0)
        hits = [m.id for m in page if words & {w.lower() for w in m.text.split()}]
        return [ScoredId(id=i, score=1.0) for i in hits for _ in (0, 1)][:limit]

    async def rank_pool(self, query, memories, vectors, limit):
        words = {w.lower() for w in query.split()}
        hits = [m.id for m in memories if words & {w.lower() for w in m.text.split()}]
        return [ScoredId(id=i, score=1.0) for i in hits for _ in (0, 1)][:limit]


class EchoPlugin:
    @hookimpl
    def register_rankers(self, register):
        register("echo", EchoRanker, default_weight=1.0)


@pytest.fixture(scope="module", params=BACKENDS)
def searcher(request, tmp_path_factory):
    """(loop, runtime, namespace): one event loop for the module, since hypothesis drives a
    synchronous test."""
    loop = asyncio.new_event_loop()
    pm = get_plugin_manager(load_entrypoints=False)
    for mod, name in ((recall_sqlite, "sqlite"), (recall_extractors, "extractors"),
                      (recall_embeddings, "embeddings")):
        pm.register(mod, name=name)
    if request.param == "postgres":
        import recall_postgres
        pm.register(recall_postgres, name="postgres")
        db = PG_URL
    else:
        db = str(tmp_path_factory.mktemp("scores") / "r.db")
    pm.register(EchoPlugin(), name="echo")
    config = load_config(None, db=db, rankers={"bm25": 1.0, "dense": 0.7, "echo": 0.5})
    rt = loop.run_until_complete(build_runtime(config, pm, start_worker=False))
    assert rt.embedder.wait_ready(120), rt.embedder.status()
    ns = f"range-{uuid.uuid4().hex[:8]}"
    lines = [(i, ImportLine(text=t, session_id=s, importance=imp,
                            created_at=NOW - timedelta(days=ago)))
             for i, (t, s, imp, ago) in enumerate(MEMORIES, 1)]
    loop.run_until_complete(import_verbatim(rt.storage, ns, lines, rt.embedder))
    try:
        yield loop, rt, ns
    finally:
        loop.run_until_complete(rt.service.drain())
        loop.run_until_complete(rt.close())
        loop.close()


def _words(text: str) -> st.SearchStrategy[str]:
    words = text.split()
    return st.lists(st.sampled_from(words), min_size=1, max_size=len(words)).map(" ".join)


QUERIES = st.one_of(
    st.sampled_from(TEXTS),                                  # a stored memory, verbatim
    st.sampled_from(TEXTS).flatmap(_words),                  # some of its words
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=30).filter(str.strip),
    st.sampled_from(["What is the boiling point of mercury?", "Where did Melanie go camping?",
                     "what database does billing use"]),
)
UNIT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=QUERIES, recency_weight=UNIT, mmr_lambda=UNIT,
       limit=st.integers(min_value=1, max_value=50))
@example(query=TEXTS[0], recency_weight=0.0, mmr_lambda=1.0, limit=10)  # was ~1.2
@example(query=TEXTS[8], recency_weight=1.0, mmr_lambda=1.0, limit=10)
def test_no_search_scores_outside_0_to_1(searcher, query, recency_weight, mmr_lambda, limit):
    loop, rt, ns = searcher
    out = loop.run_until_complete(rt.service.search(
        ns, query, limit=limit, recency_weight=recency_weight, mmr_lambda=mmr_lambda))
    scores = [r["score"] for r in out["results"]]
    assert all(0.0 <= s <= 1.0 for s in scores), (query, scores)
    assert out["degraded"] == [], out["degraded"]  # every ranker, dense included, answered
