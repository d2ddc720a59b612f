"""Session neighbours in search (search.apply_neighbours): what answers a question is often
said next to what matches it, so a candidate gains a share of its stronger neighbour's
relevance."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from recall_core.search import steps
from recall_core.models import Memory, ScoredId
from recall_core.contracts import RankerSlot
from recall_core.search.steps import NEIGHBOUR_WEIGHT, apply_neighbours, pool_neighbours
from recall_core.memory.transfer import ImportLine, import_verbatim
from recall_core import Ranker

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def test_a_memory_gains_a_share_of_its_stronger_neighbour():
    rel = {"q": 1.0, "reply": 0.2, "far": 0.5, "alone": 0.4}
    near = {"q": (None, "reply"), "reply": ("q", "far"), "far": ("reply", None)}
    out = apply_neighbours(rel, near)
    w = NEIGHBOUR_WEIGHT
    assert out["q"] == pytest.approx(1.0)  # the best match keeps its relevance: no shrinking
    assert out["reply"] == pytest.approx(0.2 + w * 1.0 * 0.8)  # the stronger neighbour counts
    assert out["far"] == pytest.approx(0.5 + w * 0.2 * 0.5)
    assert out["alone"] == 0.4  # no neighbours, or neighbours that are not candidates
    assert apply_neighbours(rel, {"alone": ("gone", None)})["alone"] == 0.4
    assert all(0.0 <= r <= 1.0 for r in out.values())
    assert apply_neighbours(rel, {}) == rel


def test_pool_neighbours_order_by_created_at_then_row_order():
    def m(i, minutes, session="s"):
        return Memory(id=i, namespace="ns", text=i, session_id=session,
                      created_at=T0 + timedelta(minutes=minutes))

    rows = [m("b", 5), m("a1", 0), m("a2", 0), m("x", 1, "other"), m("loose", 2, None)]
    assert pool_neighbours(rows, ["a1", "a2", "b", "x", "loose"]) == {
        "a1": (None, "a2"), "a2": ("a1", "b"), "b": ("a2", None), "x": (None, None)}
    assert pool_neighbours(rows, ["a2"]) == {"a2": ("a1", "b")}


# One session: the question's words are in Ana's line, Sam's reply holds the answer; the
# loose match is said further on, between lines nothing ranks. One session, so session
# locality treats them all alike.
LINES = {
    "question": "Ana: Did the pottery workshop downtown go well?",
    "reply": "Sam: Loved it, the teacher let me keep my first bowl.",
    "filler1": "Ana: Nice, let's get lunch soon.",
    "loose": "Sam: Pottery wheels are expensive.",
    "filler2": "Ana: The weather was grey all week.",
    "other": "Sam: The workshop flyer is on the fridge.",
}
#: What the ranker below answers, best first: the reply shares no word with the question, so
#: it ranks last (as it would in BM25 through its session context only).
ORDER = ["question", "other", "loose", "reply"]


class FixedRanker(Ranker):
    """A third-party ranker with a fixed answer, so fused relevance is known exactly."""

    name = "fixed"

    def __init__(self, ns: str):
        self.ids = [f"{ns}|{key}" for key in ORDER]

    async def rank(self, storage, namespace, query, limit):
        return [ScoredId(id=i, score=1.0 / n) for n, i in enumerate(self.ids, 1)][:limit]

    async def rank_pool(self, query, memories, vectors, limit):
        present = {m.id for m in memories}
        return [h for h in await self.rank(None, "", query, limit) if h.id in present]


async def _ranked(rt, ns, **kw):
    out = await rt.service.search(ns, "How did the pottery workshop go?", limit=10,
                                       recency_weight=0.0, mmr_lambda=1.0, explain=True, **kw)
    return [r["id"].split("|", 1)[1] for r in out["results"]]


async def test_the_reply_to_the_best_match_ranks_above_a_loose_match(bm25_runtime, monkeypatch):
    ns = f"nb-{uuid.uuid4().hex[:8]}"
    await import_verbatim(bm25_runtime.storage, ns, [
        (i, ImportLine(id=f"{ns}|{key}", text=text, session_id="s1", created_at=T0))
        for i, (key, text) in enumerate(LINES.items(), 1)], keep_ids=True)
    bm25_runtime.service.searcher.rankers = [RankerSlot(FixedRanker(ns), 1.0)]
    # RRF (k=3) gives question 1, other 0.8, loose 0.667, reply 0.571; the reply gains 0.3 x
    # its neighbour question's 1.0 x (1 - 0.571) = 0.129, passing the loose match.
    assert await _ranked(bm25_runtime, ns) == ["question", "other", "reply", "loose"]
    # A search of the past ranks its pool the same way (neighbours from the rows valid then).
    now = datetime.now(timezone.utc).isoformat()
    assert await _ranked(bm25_runtime, ns, as_of=now) == ["question", "other", "reply", "loose"]
    # Without the step the ranker's order stands.
    monkeypatch.setattr(steps, "NEIGHBOUR_WEIGHT", 0.0)
    assert await _ranked(bm25_runtime, ns) == ORDER
    assert await _ranked(bm25_runtime, ns, as_of=now) == ORDER


async def test_neighbours_come_from_the_memories_own_session(bm25_runtime):
    ns = f"nb-{uuid.uuid4().hex[:8]}"
    # The same lines, each in a session of its own: nobody is anybody's neighbour, so the
    # ranker's order stands (namespaces: the storage contract suite).
    await import_verbatim(bm25_runtime.storage, ns, [
        (i, ImportLine(id=f"{ns}|{key}", text=text, session_id=f"s{i}", created_at=T0))
        for i, (key, text) in enumerate(LINES.items(), 1)], keep_ids=True)
    bm25_runtime.service.searcher.rankers = [RankerSlot(FixedRanker(ns), 1.0)]
    assert await _ranked(bm25_runtime, ns) == ORDER
