"""The score of a search result and the selection of the final list: weighted RRF fusion,
the 4-component score x evidence, MMR diversity and the token budget. Pure functions, each
tested on its own (tests/test_search_pipeline.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from ..kit.text import estimate_tokens, token_set
from ..models import Memory, ScoredId


def rrf(ranked: Sequence[tuple[float, Sequence[ScoredId]]], k: int) -> dict[str, float]:
    """Weighted reciprocal rank fusion, normalised so 1.0 means 'first in every ranker'.
    An id a ranker lists twice counts once, at its best rank (a third-party ranker's
    duplicates must not lift a memory above 'first everywhere')."""
    fused: dict[str, float] = {}
    total_weight = sum(w for w, _ in ranked)
    if total_weight <= 0:
        return fused
    for weight, hits in ranked:
        seen: set[str] = set()
        for rank, hit in enumerate(hits, start=1):
            if hit.id not in seen:
                seen.add(hit.id)
                fused[hit.id] = fused.get(hit.id, 0.0) + weight / (k + rank)
    best = total_weight / (k + 1)
    return {mid: s / best for mid, s in fused.items()}


def score_weights(recency_weight: float) -> tuple[float, float, float, float]:
    """(rrf, recency, importance, strength), linear in r: r=0 -> (.7, 0, .2, .1),
    r=1 -> (.4, .4, .1, .1). They always sum to 1."""
    r = recency_weight
    return (0.7 - 0.3 * r, 0.4 * r, 0.2 - 0.1 * r, 0.1)


def recency(memory: Memory, now: datetime) -> float:
    age_days = max(0.0, (now - memory.created_at).total_seconds() / 86400.0)
    return math.exp(-age_days / (1 + memory.access_count))


# A memory earns full strength only after this many retrievals (or the candidates' maximum,
# when higher). Without the floor, one earlier retrieval made a memory "the strongest" and
# the term lifted every previously returned memory by the full w_strength: measured on
# LoCoMo it cost 0.011 recall@10; with it, 0.00x (bench/RESULTS.md).
STRENGTH_SCALE = 20


def strength(access_count: int, max_access: int) -> float:
    scale = max(max_access, STRENGTH_SCALE)
    return math.log1p(max(0, access_count)) / math.log1p(scale)


#: The documented `score_threshold` that drops results nothing in the query supports
#: (gibberish, questions about things never stored) while keeping nearly every real answer:
#: on LoCoMo no tune-half gibberish search keeps a result, one of 80 on the confirm half does
#: (0.26: a misspelt "shcool" line MiniLM finds close to "qdyhhg chzco rbagvzvt"), 42-49% of
#: the off-topic ones do (they share a word with a stored turn), recall@10 costs 0.006-0.008.
#: The rule it was chosen by (largest value losing <= 0.005 recall@10 on the tune half) gives
#: 0.2 today, which keeps more off-topic hits (bench/scores.py; RESULTS "Scores", "The
#: documented threshold, re-applied", "Strength that follows relevance").
SCORE_THRESHOLD_NONSENSE = 0.25


def combine(memories: Sequence[Memory], relevance: dict[str, float], recency_weight: float,
            now: datetime, support: dict[str, float] | None = None,
            parts: dict[str, dict[str, float]] | None = None) -> list[tuple[Memory, float]]:
    """The 4-component score, times the memory's evidence (relevance.py) when `support` is
    given: a memory nothing in the query supports scores ~0 however it ranked, so one
    `score_threshold` means the same in every search.

    Access strength counts in proportion to relevance (w_strength x strength x relevance):
    every search raises the access count of all it returns, relevant or not, so a line that
    comes back for many queries ("Wow, great idea!") grew strong and then outranked better
    matches of later queries. Scaled by relevance, strength prefers the often-used among the
    memories that match, and never lifts one that does not (LoCoMo, searches recording
    access: recall@10 +0.006 / +0.003, extraction path +0.000 / +0.005; bench/RESULTS.md
    "Strength that follows relevance")."""
    w_rrf, w_rec, w_imp, w_str = score_weights(recency_weight)
    max_access = max((m.access_count for m in memories), default=0)
    scored = []
    for m in memories:
        rel, rec = relevance.get(m.id, 0.0), recency(m, now)
        stren = strength(m.access_count, max_access)
        s = w_rrf * rel + w_rec * rec + w_imp * m.importance + w_str * stren * rel
        if parts is not None:  # the explained search (explain.py)
            parts[m.id] = {"relevance": rel, "recency": rec, "importance": m.importance,
                           "strength": stren, "base_score": s,
                           "evidence": support.get(m.id, 0.0) if support is not None else 1.0}
        if support is not None:
            s *= support.get(m.id, 0.0)
        if parts is not None:
            parts[m.id]["score"] = s
        scored.append((m, s))
    # Ties broken by relevance, then id, so identical inputs give identical orders.
    scored.sort(key=lambda p: (-p[1], -relevance.get(p[0].id, 0.0), p[0].id))
    return scored


# Similarity below these floors is not redundancy: memories on the same topic (or adjacent
# turns of one session, whose vectors share context) are what the query asked for; MMR is
# there to drop near-paraphrases. Measured on LoCoMo (bench/RESULTS.md): with the raw cosine,
# mmr_lambda=0.5 cost 0.13 recall@10; with these floors it costs nothing.
VECTOR_FLOOR = 0.9
TOKEN_FLOOR = 0.3


def token_jaccard(texts: Sequence[str]) -> np.ndarray:
    """Pairwise Jaccard similarity of the texts' token sets (diagonal 0), as one matrix
    product over a 0/1 text x token matrix: the pairwise Python loop cost ~1 ms of a
    30-candidate search."""
    sets = [token_set(t) for t in texts]
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, tokens in enumerate(sets):
        for tok in tokens:
            rows.append(i)
            cols.append(vocab.setdefault(tok, len(vocab)))
    incidence = np.zeros((len(sets), max(1, len(vocab))), dtype=np.float32)
    incidence[rows, cols] = 1.0
    inter = incidence @ incidence.T
    sizes = incidence.sum(axis=1)
    union = sizes[:, None] + sizes[None, :] - inter
    # Two empty sets are identical (textproc.jaccard); one empty set shares nothing.
    sim = np.where(union > 0, inter / np.maximum(union, 1.0), 1.0).astype(np.float32)
    np.fill_diagonal(sim, 0.0)
    return sim


def mmr(scored: Sequence[tuple[Memory, float]], lam: float, limit: int,
        vectors: dict[str, list[float]] | None = None) -> list[tuple[Memory, float]]:
    """Maximal marginal relevance. lam=1 keeps the score order exactly."""
    if lam >= 1.0 or len(scored) <= 1:
        return list(scored[:limit])
    if vectors and all(m.id in vectors for m, _ in scored):
        mat = np.asarray([vectors[m.id] for m, _ in scored], dtype=np.float32)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat = mat / np.where(norms == 0, 1, norms)
        sim = mat @ mat.T
        floor = VECTOR_FLOOR
    else:
        floor = TOKEN_FLOOR
        sim = token_jaccard([m.text for m, _ in scored])
    sim = np.clip((sim - floor) / (1.0 - floor), 0.0, 1.0)
    scores = np.asarray([s for _, s in scored], dtype=np.float32)
    chosen: list[int] = []
    remaining = list(range(len(scored)))
    max_sim = np.zeros(len(scored), dtype=np.float32)
    while remaining and len(chosen) < limit:
        cand = np.asarray(remaining)
        mmr_scores = lam * scores[cand] - (1 - lam) * max_sim[cand]
        pick = int(cand[int(np.argmax(mmr_scores))])
        chosen.append(pick)
        remaining.remove(pick)
        max_sim = np.maximum(max_sim, sim[pick])
    return [scored[i] for i in chosen]


def budget(results: Sequence[tuple[Memory, float]], max_tokens: int | None
           ) -> tuple[list[tuple[Memory, float]], bool, int]:
    """Keep results in order while their texts fit in max_tokens. A result that does not fit
    ends the list (skipping it for a smaller one would break the ranking)."""
    used = 0
    out = []
    for m, s in results:
        cost = estimate_tokens(m.text)
        if max_tokens is not None and used + cost > max_tokens:
            return out, True, used
        used += cost
        out.append((m, s))
    return out, False, used
