"""The search pipeline: rankers -> weighted RRF -> session neighbours, time windows, speakers,
session locality -> 4-component score x evidence -> threshold -> MMR -> limit -> token budget.

Pure functions where possible (rrf, score weights, mmr, budget) so each step is tested on its
own; `run_search` wires them to storage and rankers.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ..contracts import model_id
from .explain import SearchTrace
from ..models import Memory, ScoredId, utcnow
from ..contracts import Embedder, NotReady, RankerSlot, Storage
from .relevance import EvidenceSource, evidence
from .speakers import focused_query, named_speakers, speaker_of
from ..kit.text import estimate_tokens, token_set
from .timeframe import Window, ranges, windows, within

log = logging.getLogger("recall.search")


@dataclass
class SearchOutcome:
    results: list[tuple[Memory, float]]
    degraded: list[str] = field(default_factory=list)
    truncated: bool = False
    tokens: int = 0
    matched: int = 0  # candidates scoring >= score_threshold, before limit and max_tokens


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


#: Fused relevance of memories stored outside the time window a query names is multiplied by
#: this (timeframe.py). Chosen on the confirm half (+0.008 recall@10), confirmed on tune
#: (+0.005): bench/RESULTS.md.
TIME_FACTOR = 0.5


def apply_timeframe(found: Sequence[Window], memories: Sequence[Memory],
                    relevance: dict[str, float]) -> dict[str, float]:
    """Rank memories stored in a window the query names (`found`: timeframe.windows of the
    query, "in May 2022") above the others. A window nothing was stored in says nothing about
    these candidates: no change."""
    if not found or TIME_FACTOR >= 1.0:
        return relevance
    inner = {m.id for m in memories if within(m.created_at, found)}
    if not inner:
        return relevance
    return {mid: r if mid in inner else r * TIME_FACTOR for mid, r in relevance.items()}


#: Fused relevance of a transcript line spoken by someone else is multiplied by this when the
#: query names the speaker of other candidates ("What has Melanie painted?": Melanie's own
#: lines, not Caroline's "Thanks, Melanie! I painted it..."). Chosen on the tune half (+0.010
#: recall@10, MRR +0.055), confirmed on the other (+0.008): bench/RESULTS.md. Only 0.5 (the
#: time windows' factor) was tried.
SPEAKER_FACTOR = 0.5


def apply_speakers(query: str, memories: Sequence[Memory], relevance: dict[str, float]
                   ) -> dict[str, float]:
    """Rank the lines of a speaker the query names above other speakers' lines. Memories
    without a speaker, and candidates whose speakers are all named or all unnamed, keep their
    relevance."""
    said_by = {m.id: speaker_of(m.text) for m in memories}
    named = named_speakers(query, (s for s in said_by.values() if s is not None))
    if not named:
        return relevance
    return {mid: r * SPEAKER_FACTOR if said_by.get(mid) not in (None, *named) else r
            for mid, r in relevance.items()}


#: Share of the stronger neighbour's fused relevance a memory gains (see apply_neighbours).
#: Chosen on the tune half (this form at 0.2 / 0.3 / 0.4 / 0.5, a linear one at 0.15 / 0.3 /
#: 0.5 / 0.8: +0.000 to +0.012 recall@10, best at 0.3 in both), confirmed on the other
#: (+0.022; 4 of 5 conversations gain): bench/RESULTS.md "Said next to the answer".
NEIGHBOUR_WEIGHT = 0.3

Neighbours = dict[str, tuple[str | None, str | None]]


def apply_neighbours(relevance: dict[str, float], neighbours: Neighbours) -> dict[str, float]:
    """relevance + NEIGHBOUR_WEIGHT x (the stronger of the memories said just before and
    just after it in its session) x (1 - relevance).

    What answers a question is often said next to what matches it: the reply to a line that
    repeats the question's words, the line a reply with the answer's words responds to. Only
    candidates lift each other (a neighbour outside the candidates adds nothing). The
    (1 - relevance) factor keeps relevance within 0..1 without shrinking the best matches,
    so `score_threshold` keeps its meaning; a memory without neighbours is unchanged."""
    if not neighbours or NEIGHBOUR_WEIGHT <= 0:
        return relevance
    out = {}
    for mid, r in relevance.items():
        near = max((relevance.get(n, 0.0) for n in neighbours.get(mid, ()) if n is not None),
                   default=0.0)
        out[mid] = r + NEIGHBOUR_WEIGHT * near * (1.0 - r)
    return out


def pool_neighbours(rows: Sequence[Memory], ids: Sequence[str]) -> Neighbours:
    """`SessionNeighbours.session_neighbours` over given rows (an `as_of` search's: the rows
    valid then), with the same order: created_at, then the rows' own order."""
    by_session: dict[str, list[tuple[datetime, int, str]]] = {}
    for i, m in enumerate(rows):
        if m.session_id is not None:
            by_session.setdefault(m.session_id, []).append((m.created_at, i, m.id))
    wanted = set(ids)
    out: Neighbours = {}
    for members in by_session.values():
        members.sort()
        for j, (_, _, mid) in enumerate(members):
            if mid in wanted:
                out[mid] = (members[j - 1][2] if j > 0 else None,
                            members[j + 1][2] if j + 1 < len(members) else None)
    return out


async def neighbours_of(storage: Storage, namespace: str, ids: Sequence[str],
                        pool: dict[str, Memory] | None) -> Neighbours:
    """Session neighbours of the candidates: from the `as_of` pool (by id, in the order
    `memories_at` read it), else from storage when it can tell (an optional capability;
    without it the neighbour step is skipped)."""
    if pool is not None:
        return pool_neighbours(list(pool.values()), ids)
    if storage.capabilities.session_neighbours:
        return await storage.session_neighbours(namespace, ids)
    return {}


#: Memories outside the session that holds the strongest candidates lose up to this share of
#: their fused relevance, relative to that session's (conversational locality: the answer, its
#: question and what surrounds them were said together). Chosen on the tune half (+0.010
#: recall@10), confirmed on the other (+0.005): bench/RESULTS.md.
SESSION_WEIGHT = 0.3


def apply_sessions(memories: Sequence[Memory], relevance: dict[str, float]) -> dict[str, float]:
    """relevance x (1 + SESSION_WEIGHT x the session's share of the best session's summed
    relevance) / (1 + SESSION_WEIGHT). Memories without a session count as a session with no
    share.

    Dividing by the largest factor keeps relevance in 0..1 (1 = first in every ranker and in
    the strongest session), so a score stays within 0..1 and `score_threshold` keeps its
    meaning; the order among candidates is the boost's. Namespaces without sessions are left
    as they are."""
    totals: dict[str, float] = {}
    for m in memories:
        if m.session_id is not None:
            totals[m.session_id] = totals.get(m.session_id, 0.0) + relevance.get(m.id, 0.0)
    best = max(totals.values(), default=0.0)
    if best <= 0:
        return relevance
    top = 1 + SESSION_WEIGHT
    return {m.id: relevance.get(m.id, 0.0)
            * (1 + SESSION_WEIGHT * (totals.get(m.session_id, 0.0) / best if m.session_id else 0))
            / top
            for m in memories}


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


#: A window holding more memories than this is left to the rankers' own candidates (the time
#: factor above still orders them): ranking it in process would cost more than the search.
WINDOW_POOL_MAX = 500


async def window_relevance(storage: Storage, rankers: Sequence[RankerSlot], namespace: str,
                           query: str, focus: str | None, found: Sequence[Window],
                           known: dict[str, Memory], answered: Sequence[list[ScoredId] | str],
                           pool: dict[str, Memory] | None,
                           pool_vectors: dict[str, list[float]], embedder: Embedder | None,
                           candidates: int, rrf_k: int, now: datetime
                           ) -> tuple[dict[str, float], dict[str, Memory]]:
    """The rankers asked again over only the memories stored in the windows the query names,
    fused like the main lists and scaled by TIME_FACTOR: (relevance, memories) to add.

    "What did Nate do in April 2022?" is answered by "Dyed my hair last week" said that
    April, which neither ranker brings into its top 50 over the whole namespace: the time
    factor can only reorder candidates the rankers returned. Among the window's memories it
    ranks first, and counts as much as the best match outside the window does after the time
    factor (LoCoMo recall@10 +0.003 tune, +0.018 confirm: bench/RESULTS.md "Ranked inside the
    window"). Skipped when the window holds every candidate (it tells nothing apart, e.g. a
    conversation stored today asked about "this November"), holds nothing, or holds more than
    WINDOW_POOL_MAX memories, and for storages that cannot list a time range."""
    if not found or TIME_FACTOR >= 1.0:
        return {}, {}
    if all(within(m.created_at, found) for m in known.values()):
        return {}, {}
    vectors: dict[str, list[float]] = {}
    if pool is not None:
        rows = [m for m in pool.values() if within(m.created_at, found)]
        vectors = pool_vectors
    elif storage.capabilities.time_ranges:
        rows = await storage.memories_created(namespace, ranges(found, now), WINDOW_POOL_MAX)
    else:
        return {}, {}
    if not rows or len(rows) > WINDOW_POOL_MAX:
        return {}, {}
    if pool is None and storage.capabilities.vectors and wants_vectors(rankers):
        vectors = await storage.get_embeddings(namespace, [m.id for m in rows],
                                               model=model_id(embedder) if embedder else None)
    lists: list[tuple[float, list[ScoredId]]] = []
    for slot, out in zip(rankers, answered):
        if isinstance(out, str):  # warming up or broken: not asked again
            continue
        asked = focus if focus is not None and slot.ranker.embedder is not None else query
        hits = await _run_pool_ranker(slot, asked, rows, vectors, candidates)
        if not isinstance(hits, str):
            lists.append((slot.weight, hits))
    by_id = {m.id: m for m in rows}
    fused = rrf(lists, rrf_k)
    return ({mid: r * TIME_FACTOR for mid, r in fused.items()},
            {mid: by_id[mid] for mid in fused})


async def _run_ranker(slot: RankerSlot, storage: Storage, namespace: str, query: str,
                      limit: int) -> list[ScoredId] | str:
    try:
        return await slot.ranker.rank(storage, namespace, query, limit)
    except NotReady as exc:
        return str(exc) or f"{slot.ranker.name}: not ready"
    except Exception as exc:  # noqa: BLE001 - one broken ranker degrades, it doesn't fail search
        log.exception("ranker %s failed", slot.ranker.name)
        return f"{slot.ranker.name}: failed ({type(exc).__name__}: {exc})"


async def _run_pool_ranker(slot: RankerSlot, query: str, pool: Sequence[Memory],
                           vectors: dict[str, list[float]], limit: int) -> list[ScoredId] | str:
    """A ranker over a given pool of rows (an `as_of` search, a time window)."""
    try:
        return await slot.ranker.rank_pool(query, pool, vectors, limit)
    except NotReady as exc:
        return str(exc) or f"{slot.ranker.name}: not ready"
    except Exception as exc:  # noqa: BLE001 - as in _run_ranker
        log.exception("ranker %s failed on an as_of pool", slot.ranker.name)
        return f"{slot.ranker.name}: failed ({type(exc).__name__}: {exc})"


async def _candidates(storage: Storage, namespace: str, pool: dict[str, Memory] | None,
                      outcomes: Sequence[list[ScoredId] | str], known: dict[str, Memory]
                      ) -> dict[str, Memory]:
    """`known` plus the memories of every candidate the rankers returned, by id (current
    rows, or the `as_of` pool's)."""
    ids = list(dict.fromkeys(h.id for out in outcomes if not isinstance(out, str) for h in out
                             if h.id not in known))
    if pool is not None:
        return {**known, **{mid: pool[mid] for mid in ids if mid in pool}}
    if not ids:
        return known
    return {**known, **{m.id: m for m in await storage.get_memories(namespace, ids)}}


def wants_vectors(rankers: Sequence[RankerSlot]) -> bool:
    return any(s.ranker.embedder is not None for s in rankers)


async def run_search(storage: Storage, rankers: Sequence[RankerSlot], namespace: str, query: str,
                     *, limit: int, recency_weight: float, mmr_lambda: float,
                     score_threshold: float, max_tokens: int | None, rrf_k: int,
                     candidates: int, embedder: Embedder | None,
                     trace: SearchTrace | None = None,
                     as_of: datetime | None = None) -> SearchOutcome:
    """With `as_of`, the candidates are the rows valid at that time (`memories_at`, history
    included), ranked in process by each ranker's `rank_pool`; every later step is the same,
    with recency measured at `as_of`."""
    pool: dict[str, Memory] | None = None
    pool_vectors: dict[str, list[float]] = {}
    if as_of is None:
        outcomes = await asyncio.gather(*(_run_ranker(s, storage, namespace, query, candidates)
                                          for s in rankers))
    else:
        rows = await storage.memories_at(namespace, as_of)  # type: ignore[attr-defined]
        pool = {m.id: m for m in rows}
        if rows and storage.capabilities.vectors and wants_vectors(rankers):
            pool_vectors = await storage.get_embeddings(
                namespace, list(pool), model=model_id(embedder) if embedder else None)
        outcomes = await asyncio.gather(*(_run_pool_ranker(s, query, rows, pool_vectors,
                                                           candidates) for s in rankers))
    outcomes = list(outcomes)
    asked = list(outcomes)  # what each ranker answered for the query as given
    known = await _candidates(storage, namespace, pool, outcomes, {})
    named = named_speakers(query, (s for m in known.values() if (s := speaker_of(m.text))))
    focus = focused_query(query, named) if named else None
    if focus is not None:
        # Rankers that embed the query answer again for what was asked, not who was named
        # (the speaker step below sees to who): LoCoMo hybrid recall@10 +0.018 tune, +0.012
        # confirm, dense alone +0.08-0.12 (bench/RESULTS.md "Who said it, dense side"). It
        # costs one more query embedding and vector search, only for queries that name a
        # speaker.
        for i, slot in enumerate(rankers):
            if slot.ranker.embedder is not None and not isinstance(outcomes[i], str):
                outcomes[i] = await (_run_ranker(slot, storage, namespace, focus, candidates)
                                     if pool is None else
                                     _run_pool_ranker(slot, focus, rows, pool_vectors, candidates))
        known = await _candidates(storage, namespace, pool, outcomes, known)
    now = as_of or utcnow()
    found = windows(query)
    in_window, window_rows = await window_relevance(
        storage, rankers, namespace, query, focus, found, known, outcomes, pool,
        pool_vectors, embedder, candidates, rrf_k, now)
    known = {**window_rows, **known}
    if trace is not None:
        trace.focus = focus
        trace.window = dict(in_window)
        trace.record_rankers([(s.ranker.name, s.weight) for s in rankers], outcomes)
    degraded: list[str] = []
    ranked: list[tuple[float, list[ScoredId]]] = []
    sources: list[EvidenceSource] = []
    for slot, out, first in zip(rankers, outcomes, asked):
        if isinstance(out, str):
            degraded.append(out)
        else:
            ranked.append((slot.weight, out))
            if slot.ranker.calibrated:
                # Evidence from the query as given: the calibration (e.g. the dense ramp) was
                # read off whole queries, and a focused one scores systematically lower.
                sources.append((slot.ranker.evidence, first if not isinstance(first, str) else out))
    if not ranked:
        raise RuntimeError("no ranker could answer: " + "; ".join(degraded))
    relevance = rrf(ranked, rrf_k)
    for mid, r in in_window.items():
        relevance[mid] = max(relevance.get(mid, 0.0), r)
    if not relevance:
        return SearchOutcome([], degraded)
    memories = [known[mid] for mid in relevance if mid in known]
    support = evidence(query, memories, sources)
    if trace is not None:
        trace.fused = dict(relevance)
    relevance = apply_neighbours(relevance, await neighbours_of(
        storage, namespace, [m.id for m in memories], pool))
    relevance = apply_sessions(memories, apply_speakers(query, memories,
                                                        apply_timeframe(found, memories, relevance)))
    if trace is not None:
        trace.adjusted = dict(relevance)
        trace.weights = dict(zip(("relevance", "recency", "importance", "strength"),
                                 score_weights(recency_weight)))
    all_scored = combine(memories, relevance, recency_weight, now, support,
                         trace.parts if trace is not None else None)
    scored = [p for p in all_scored if p[1] >= score_threshold]
    matched = len(scored)
    vectors = None
    if mmr_lambda < 1.0 and len(scored) > 1:
        # Diversify among the best 3*limit only: deeper candidates would not be picked anyway
        # and the pairwise similarity is quadratic.
        scored = scored[: limit * 3]
        if pool is not None:
            vectors = {m.id: pool_vectors[m.id] for m, _ in scored if m.id in pool_vectors}
        elif embedder is not None and storage.capabilities.vectors:
            vectors = await storage.get_embeddings(namespace, [m.id for m, _ in scored],
                                                   model=model_id(embedder))
    selected = mmr(scored, mmr_lambda, limit, vectors)
    final, truncated, used = budget(selected, max_tokens)
    if trace is not None:
        trace.record_selection(all_scored, score_threshold, scored, selected, final, limit)
    return SearchOutcome(final, degraded, truncated, used, matched)
