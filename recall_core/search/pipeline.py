"""The search pipeline, in the order a search runs:

1. gather: every ranker answers the query (`rankers.py`; over the rows valid at `as_of`
   when asked about the past), and rankers that embed the query answer again without the
   speaker it names (`speakers.py`);
2. window: a query naming a time also asks the rankers over the memories stored then
   (`window.py`);
3. fuse: weighted RRF of the answers (`scoring.rrf`), with the window's relevance;
4. adjust: session neighbours, the time window, the named speaker, session locality
   (`steps.py`);
5. score: the 4-component score x the evidence that a memory answers the query
   (`scoring.combine`, `relevance.py`);
6. select: score_threshold -> MMR -> limit -> max_tokens (`scoring.py`).

`explain` searches record every step in a `SearchTrace` (`explain.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from ..contracts import REFERENCE_TOPIC_SCALE, model_id
from ..models import Memory, ScoredId, utcnow
from . import newer, relevance as evidence_of
from . import across, scoring, steps, window
from .explain import SearchTrace
from .rankers import ask_pool, wants_vectors
from .request import Gathered, SearchOutcome, SearchRequest, SearchSetup
from .speakers import focused_query, named_speakers, speaker_of
from .timeframe import Window, windows


@dataclass
class Fused:
    """The rankers' answers fused: relevance by id, and what scoring needs besides."""

    relevance: dict[str, float]
    memories: list[Memory]
    sources: list[evidence_of.EvidenceSource]
    degraded: list[str]


class Searcher(SearchSetup):
    """Runs searches (built once, by MemoryService)."""

    async def run(self, request: SearchRequest, trace: SearchTrace | None = None
                  ) -> SearchOutcome:
        """With `as_of`, the candidates are the rows valid at that time (`memories_at`,
        history included), ranked in process by each ranker's `rank_pool`; every later step
        is the same, with recency measured at `as_of`."""
        gathered = await self.gather(request)
        now = request.as_of or utcnow()
        found = windows(request.query)
        in_window, window_rows = await window.relevance(self, request, gathered, found, now)
        gathered.known = {**window_rows, **gathered.known}
        if trace is not None:
            trace.focus = gathered.focus
            trace.window = dict(in_window)
            trace.record_rankers([(s.ranker.name, s.weight) for s in self.rankers],
                                 gathered.outcomes)
            # Set before any early return: the inspector shows them for a search that found
            # nothing too (without them its page answered 500).
            trace.weights = dict(zip(("relevance", "recency", "importance", "strength"),
                                     scoring.score_weights(request.recency_weight)))
        fused = self.fuse(gathered, in_window)
        if not fused.relevance:
            return SearchOutcome([], fused.degraded)
        if trace is not None:
            trace.fused = dict(fused.relevance)
        adjusted = await self.adjust(request, gathered, fused, found)
        if trace is not None:
            trace.adjusted = dict(adjusted)
        support = evidence_of.evidence(request.query, fused.memories, fused.sources)
        all_scored = scoring.combine(fused.memories, adjusted, request.recency_weight, now,
                                     support, trace.parts if trace is not None else None)
        return await self.select(request, gathered, all_scored, fused.degraded, trace)

    # -- 1. gather ----------------------------------------------------------------------------
    async def gather(self, request: SearchRequest) -> Gathered:
        limit = self.per_ranker(request)
        if request.as_of is None:
            answers = await asyncio.gather(*(
                across.rank(s, self.storage, request.spaces, request.query, limit)
                for s in self.rankers))
            gathered = Gathered(list(answers), list(answers))
        else:
            gathered = await self.gather_past(request, limit)
        gathered.known = await self.memories_of(request.spaces, gathered, {})
        named = named_speakers(request.query, (
            s for m in gathered.known.values() if (s := speaker_of(m.text))))
        gathered.focus = focused_query(request.query, named) if named else None
        if gathered.focus is not None:
            await self.ask_focused(request, gathered, limit)
        return gathered

    async def gather_past(self, request: SearchRequest, limit: int) -> Gathered:
        """The rankers over the rows valid at `as_of` (history included)."""
        rows = await across.memories_at(self.storage, request.spaces, request.as_of)
        pool = {m.id: m for m in rows}
        vectors: dict[str, list[float]] = {}
        if rows and self.storage.capabilities.vectors and wants_vectors(self.rankers):
            vectors = await across.get_embeddings(
                self.storage, request.spaces, list(pool),
                model_id(self.embedder) if self.embedder else None)
        answers = await asyncio.gather(*(ask_pool(s, request.query, rows, vectors, limit)
                                         for s in self.rankers))
        return Gathered(list(answers), list(answers), pool=pool, pool_vectors=vectors)

    async def ask_focused(self, request: SearchRequest, gathered: Gathered, limit: int) -> None:
        """Rankers that embed the query answer again for what was asked, not who was named
        (the speaker step sees to who): LoCoMo hybrid recall@10 +0.018 tune, +0.012 confirm,
        dense alone +0.08-0.12 (bench/RESULTS.md "Who said it, dense side"). It costs one more
        query embedding and vector search, only for queries that name a speaker."""
        focus = gathered.focus
        assert focus is not None
        for i, slot in enumerate(self.rankers):
            if slot.ranker.embedder is None or isinstance(gathered.outcomes[i], str):
                continue
            if gathered.pool is None:
                gathered.outcomes[i] = await across.rank(slot, self.storage, request.spaces,
                                                         focus, limit)
            else:
                gathered.outcomes[i] = await ask_pool(slot, focus, list(gathered.pool.values()),
                                                      gathered.pool_vectors, limit)
        gathered.known = await self.memories_of(request.spaces, gathered, gathered.known)

    async def memories_of(self, spaces: Sequence[str], gathered: Gathered,
                          known: dict[str, Memory]) -> dict[str, Memory]:
        """`known` plus the memories of every candidate the rankers returned, by id (current
        rows, or the `as_of` pool's)."""
        ids = list(dict.fromkeys(h.id for out in gathered.outcomes if not isinstance(out, str)
                                 for h in out if h.id not in known))
        if gathered.pool is not None:
            return {**known, **{mid: gathered.pool[mid] for mid in ids if mid in gathered.pool}}
        if not ids:
            return known
        return {**known, **{m.id: m for m in await across.get_memories(self.storage, spaces,
                                                                        ids)}}

    # -- 3. fuse ------------------------------------------------------------------------------
    def fuse(self, gathered: Gathered, in_window: dict[str, float]) -> Fused:
        degraded: list[str] = []
        ranked: list[tuple[float, list[ScoredId]]] = []
        sources: list[evidence_of.EvidenceSource] = []
        for slot, out, first in zip(self.rankers, gathered.outcomes, gathered.asked):
            if isinstance(out, str):
                degraded.append(out)
                continue
            ranked.append((slot.weight, out))
            if slot.ranker.calibrated:
                sources.append((slot.ranker.evidence,
                                first if not isinstance(first, str) else out))
        if not ranked:
            raise RuntimeError("no ranker could answer: " + "; ".join(degraded))
        relevance = scoring.rrf(ranked, self.rrf_k)
        for mid, r in in_window.items():
            relevance[mid] = max(relevance.get(mid, 0.0), r)
        memories = [gathered.known[mid] for mid in relevance if mid in gathered.known]
        return Fused(relevance, memories, sources, degraded)

    # -- 4. adjust ----------------------------------------------------------------------------
    async def adjust(self, request: SearchRequest, gathered: Gathered, fused: Fused,
                     found: Sequence[Window]) -> dict[str, float]:
        memories = fused.memories
        neighbours = await steps.neighbours_of(self.storage, request.spaces,
                                               [m.id for m in memories], gathered.pool)
        relevance = steps.apply_neighbours(fused.relevance, neighbours)
        relevance = steps.apply_timeframe(found, memories, relevance)
        relevance = steps.apply_speakers(request.query, memories, relevance)
        return steps.apply_sessions(memories, relevance)

    # -- 6. select ----------------------------------------------------------------------------
    async def select(self, request: SearchRequest, gathered: Gathered,
                     all_scored: list[tuple[Memory, float]], degraded: list[str],
                     trace: SearchTrace | None) -> SearchOutcome:
        scored = [p for p in all_scored if p[1] >= request.score_threshold]
        matched = len(scored)
        vectors = None
        if request.mmr_lambda < 1.0 and len(scored) > 1:
            # Diversify among the best 3*limit only: deeper candidates would not be picked
            # anyway and the pairwise similarity is quadratic.
            scored = scored[: request.limit * 3]
            vectors = await self.vectors_of(request.spaces, gathered, scored)
        selected = scoring.mmr(scored, request.mmr_lambda, request.limit, vectors)
        if len(selected) > 1:
            # Only the order of what was selected changes, never which memories are returned.
            if vectors is None:
                vectors = await self.vectors_of(request.spaces, gathered, selected)
            selected = newer.newer_first(selected, vectors, scale=self.topic_scale())
        final, truncated, used = scoring.budget(selected, request.max_tokens)
        if trace is not None:
            trace.record_selection(all_scored, request.score_threshold, scored, selected, final,
                                   request.limit)
        return SearchOutcome(final, degraded, truncated, used, matched)

    def topic_scale(self) -> tuple[float, float]:
        """Where the memories' vectors sit (the embedder's scale; the reference without one)."""
        return self.embedder.topic_scale if self.embedder is not None else REFERENCE_TOPIC_SCALE

    async def vectors_of(self, spaces: Sequence[str], gathered: Gathered,
                         scored: list[tuple[Memory, float]]) -> dict[str, list[float]] | None:
        """The vectors MMR compares (None: it compares words)."""
        if gathered.pool is not None:
            return {m.id: gathered.pool_vectors[m.id] for m, _ in scored
                    if m.id in gathered.pool_vectors}
        if self.embedder is not None and self.storage.capabilities.vectors:
            return await across.get_embeddings(self.storage, spaces, [m.id for m, _ in scored],
                                               model_id(self.embedder))
        return None

