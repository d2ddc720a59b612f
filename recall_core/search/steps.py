"""The steps that adjust fused relevance before scoring, each a pure function of the
candidates: session neighbours, the time window a query names, the speaker it names, and
session locality. Each keeps relevance within 0..1 so `score_threshold` keeps its meaning;
each constant was chosen on one half of the LoCoMo dev set and confirmed on the other
(bench/RESULTS.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..contracts import Storage
from ..models import Memory
from . import across
from .speakers import named_speakers, speaker_of
from .timeframe import Window, within


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


async def neighbours_of(storage: Storage, spaces: Sequence[str], ids: Sequence[str],
                        pool: dict[str, Memory] | None) -> Neighbours:
    """Session neighbours of the candidates: from the `as_of` pool (by id, in the order
    `memories_at` read it), else from storage when it can tell (an optional capability;
    without it the neighbour step is skipped)."""
    if pool is not None:
        return pool_neighbours(list(pool.values()), ids)
    if storage.capabilities.session_neighbours:
        return await across.session_neighbours(storage, spaces, ids)
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
