"""The pure steps of the search pipeline: fusion, score components, MMR, budget."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from recall_core.models import Memory, ScoredId, utcnow
from recall_core.search.scoring import (budget, combine, mmr, recency, rrf, score_weights, strength,
                                token_jaccard)
from recall_core.kit.text import jaccard, token_set


def mem(i: int, text: str = "", **kw) -> Memory:
    return Memory(id=f"m{i}", namespace="ns", text=text or f"memory number {i}", **kw)


def hits(*ids: str) -> list[ScoredId]:
    return [ScoredId(id=i, score=1.0) for i in ids]


def test_rrf_is_normalised_and_rewards_agreement():
    fused = rrf([(1.0, hits("a", "b", "c")), (1.0, hits("b", "a", "d"))], k=60)
    assert fused["a"] == pytest.approx(fused["b"])
    assert fused["a"] > fused["c"] > 0 and fused["a"] > fused["d"]
    top = rrf([(1.0, hits("x")), (1.0, hits("x"))], k=60)
    assert top["x"] == pytest.approx(1.0)  # first everywhere = 1.0
    assert all(0 < v <= 1 for v in fused.values())


def test_rrf_weights_shift_the_order():
    heavy_first = rrf([(3.0, hits("a", "b")), (1.0, hits("b", "a"))], k=1)
    assert heavy_first["a"] > heavy_first["b"]
    heavy_second = rrf([(1.0, hits("a", "b")), (3.0, hits("b", "a"))], k=1)
    assert heavy_second["b"] > heavy_second["a"]


@pytest.mark.parametrize("r", [0.0, 0.25, 0.5, 1.0])
def test_score_weights_sum_to_one_and_hit_the_extremes(r):
    assert sum(score_weights(r)) == pytest.approx(1.0)


def test_score_weight_extremes():
    assert score_weights(0.0) == pytest.approx((0.7, 0.0, 0.2, 0.1))
    assert score_weights(1.0) == pytest.approx((0.4, 0.4, 0.1, 0.1))


def test_recency_decays_and_access_slows_it():
    now = utcnow()
    fresh = mem(1, created_at=now)
    old = mem(2, created_at=now - timedelta(days=10))
    old_used = mem(3, created_at=now - timedelta(days=10), access_count=9)
    assert recency(fresh, now) == pytest.approx(1.0)
    assert recency(old, now) == pytest.approx(math.exp(-10))
    assert recency(old_used, now) == pytest.approx(math.exp(-1))


def test_strength_is_log_scaled_and_bounded():
    assert strength(0, 0) == 0.0
    assert strength(100, 100) == pytest.approx(1.0)
    assert 0 < strength(1, 100) < strength(10, 100) < 1
    # One earlier retrieval does not make a memory "the strongest".
    assert strength(1, 1) < 0.25


def test_recency_weight_extremes_change_the_winner():
    now = utcnow()
    relevant_old = mem(1, created_at=now - timedelta(days=400))
    recent_less_relevant = mem(2, created_at=now)
    relevance = {"m1": 1.0, "m2": 0.8}
    r0 = combine([relevant_old, recent_less_relevant], relevance, 0.0, now)
    r1 = combine([relevant_old, recent_less_relevant], relevance, 1.0, now)
    assert r0[0][0].id == "m1"
    assert r1[0][0].id == "m2"


def test_importance_and_strength_reorder_only_near_ties():
    now = utcnow()
    a = mem(1, importance=0.5, created_at=now)
    b = mem(2, importance=0.5, created_at=now, access_count=50)  # strength 1.0
    # b is barely less relevant: strength lifts it above a.
    near = combine([a, b], {"m1": 1.0, "m2": 0.98}, 0.0, now)
    assert near[0][0].id == "m2"
    # b is clearly less relevant: strength must not drown the query.
    far = combine([a, b], {"m1": 1.0, "m2": 0.6}, 0.0, now)
    assert far[0][0].id == "m1"


def test_strength_never_lifts_a_memory_the_query_does_not_match():
    # Every search raises the access count of all it returns: a line returned for many
    # queries must not outrank a better match because of it.
    now = utcnow()
    hub = mem(1, importance=0.5, created_at=now, access_count=50)  # strength 1.0
    fresh = mem(2, importance=0.5, created_at=now)
    scored = dict((m.id, s) for m, s in combine([hub, fresh], {"m1": 0.0, "m2": 0.3}, 0.0, now))
    w_rrf, _, w_imp, w_str = score_weights(0.0)
    assert scored["m1"] == pytest.approx(w_imp * 0.5)  # no relevance: strength adds nothing
    assert scored["m2"] == pytest.approx(w_rrf * 0.3 + w_imp * 0.5)
    # Among matches it counts in proportion to relevance.
    both = dict((m.id, s) for m, s in combine([hub, fresh], {"m1": 0.5, "m2": 0.5}, 0.0, now))
    assert both["m1"] - both["m2"] == pytest.approx(w_str * 1.0 * 0.5)


def test_mmr_lambda_one_preserves_order():
    scored = [(mem(i, f"same words here {i}"), 1.0 - i / 10) for i in range(5)]
    assert [m.id for m, _ in mmr(scored, 1.0, 5)] == [f"m{i}" for i in range(5)]


def test_mmr_prefers_diversity_with_vectors():
    scored = [(mem(0), 1.0), (mem(1), 0.95), (mem(2), 0.9)]
    vectors = {"m0": [1.0, 0.0], "m1": [1.0, 0.01], "m2": [0.0, 1.0]}
    picked = [m.id for m, _ in mmr(scored, 0.5, 2, vectors)]
    assert picked == ["m0", "m2"]


def test_mmr_falls_back_to_token_overlap():
    scored = [(mem(0, "deploy the api on friday"), 1.0),
              (mem(1, "deploy the api on friday evening"), 0.95),
              (mem(2, "my cat is called miso"), 0.9)]
    picked = [m.id for m, _ in mmr(scored, 0.5, 2)]
    assert picked == ["m0", "m2"]


def test_token_jaccard_matrix_equals_pairwise_jaccard():
    import random

    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "running", "runs", "the", "of", "Café", "cafe"]
    texts = [" ".join(rng.choices(words, k=rng.randint(0, 6))) for _ in range(40)]
    texts += ["", "", "!!!"]  # no tokens at all: two empty sets count as identical
    sim = token_jaccard(texts)
    for i, a in enumerate(texts):
        for j, b in enumerate(texts):
            want = 0.0 if i == j else jaccard(token_set(a), token_set(b))
            assert sim[i, j] == pytest.approx(want, abs=1e-6), (a, b)


def test_budget_stops_at_first_result_that_does_not_fit():
    scored = [(mem(i, "x" * 40), 1.0) for i in range(5)]  # 10 tokens each
    kept, truncated, used = budget(scored, 25)
    assert [m.id for m, _ in kept] == ["m0", "m1"] and truncated and used == 20
    kept, truncated, used = budget(scored, None)
    assert len(kept) == 5 and not truncated
