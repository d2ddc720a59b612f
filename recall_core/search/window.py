"""The time-window step: a query that names a time ("in April 2022") also asks the rankers
over only the memories stored then."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from ..contracts import model_id
from ..models import Memory, ScoredId
from . import across, steps
from .rankers import ask_pool, wants_vectors
from .request import Gathered, SearchRequest, SearchSetup
from .scoring import rrf
from .timeframe import Window, ranges, within

#: A window holding more memories than this is left to the rankers' own candidates (the time
#: factor still orders them): ranking it in process would cost more than the search.
WINDOW_POOL_MAX = 500


async def window_rows(searcher: SearchSetup, request: SearchRequest, gathered: Gathered,
                      found: Sequence[Window], now: datetime
                      ) -> tuple[list[Memory], dict[str, list[float]]]:
    """The memories stored in the windows, with their vectors for embedding rankers; none
    when the step is skipped (see `relevance`)."""
    if all(within(m.created_at, found) for m in gathered.known.values()):
        return [], {}
    storage = searcher.storage
    if gathered.pool is not None:
        rows = [m for m in gathered.pool.values() if within(m.created_at, found)]
        return rows, gathered.pool_vectors
    if not storage.capabilities.time_ranges:
        return [], {}
    rows = await across.memories_created(storage, request.spaces, ranges(found, now),
                                         WINDOW_POOL_MAX)
    if not rows or len(rows) > WINDOW_POOL_MAX:
        return [], {}
    vectors: dict[str, list[float]] = {}
    if storage.capabilities.vectors and wants_vectors(searcher.rankers):
        embedder = searcher.embedder
        vectors = await across.get_embeddings(storage, request.spaces, [m.id for m in rows],
                                              model_id(embedder) if embedder else None)
    return rows, vectors


async def relevance(searcher: SearchSetup, request: SearchRequest, gathered: Gathered,
                    found: Sequence[Window], now: datetime
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
    if not found or steps.TIME_FACTOR >= 1.0:
        return {}, {}
    rows, vectors = await window_rows(searcher, request, gathered, found, now)
    if not rows or len(rows) > WINDOW_POOL_MAX:
        return {}, {}
    lists: list[tuple[float, list[ScoredId]]] = []
    limit = searcher.per_ranker(request)
    for slot, out in zip(searcher.rankers, gathered.outcomes):
        if isinstance(out, str):  # warming up or broken: not asked again
            continue
        focused = gathered.focus is not None and slot.ranker.embedder is not None
        hits = await ask_pool(slot, gathered.focus if focused else request.query, rows,
                              vectors, limit)
        if not isinstance(hits, str):
            lists.append((slot.weight, hits))
    by_id = {m.id: m for m in rows}
    fused = rrf(lists, searcher.rrf_k)
    return ({mid: r * steps.TIME_FACTOR for mid, r in fused.items()},
            {mid: by_id[mid] for mid in fused})
