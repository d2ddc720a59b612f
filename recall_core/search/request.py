"""One search as the caller asked it, what it runs with, what the rankers gave it, and what it
found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..contracts import Embedder, RankerSlot, Storage
from ..models import Memory
from .rankers import Answer


@dataclass(frozen=True)
class SearchRequest:
    """A validated search (MemoryService.search checks every field first)."""

    namespace: str
    query: str
    limit: int = 20
    #: 0..1: how much newer memories are favoured (scoring.score_weights).
    recency_weight: float = 0.3
    #: 0..1: relevance (1.0) against diversity (MMR).
    mmr_lambda: float = 0.5
    #: Results scoring below this are left out (0..1; scoring.SCORE_THRESHOLD_NONSENSE).
    score_threshold: float = 0.0
    #: A cap on the total estimated tokens of the results' texts.
    max_tokens: int | None = None
    #: Search the memories valid at this time (history included) instead of the current.
    as_of: datetime | None = None
    #: The storage namespaces searched (`access.partitions`): the namespace and the agents'
    #: private partitions the caller sees. Empty: `namespace` alone.
    partitions: tuple[str, ...] = ()

    @property
    def spaces(self) -> tuple[str, ...]:
        return self.partitions or (self.namespace,)


@dataclass
class SearchOutcome:
    results: list[tuple[Memory, float]]
    degraded: list[str] = field(default_factory=list)
    truncated: bool = False
    tokens: int = 0
    matched: int = 0  # candidates scoring >= score_threshold, before limit and max_tokens


@dataclass
class SearchSetup:
    """What every search of a server runs with: storage, the rankers, the embedding model
    and the fusion settings (`pipeline.Searcher` runs searches with it)."""

    storage: Storage
    rankers: Sequence[RankerSlot]
    embedder: Embedder | None
    #: RRF's k.
    rrf_k: int
    #: Candidates asked of each ranker (at least the request's limit).
    candidates: int

    def per_ranker(self, request: SearchRequest) -> int:
        return max(self.candidates, request.limit)


@dataclass
class Gathered:
    """What the rankers answered for one search (one answer per ranker, in the order of
    `Searcher.rankers`) and the memories their hits name."""

    #: The answers the search uses: embedding rankers re-asked with `focus` when there is one.
    outcomes: list[Answer]
    #: The answers to the query as given: evidence is read off these (calibrations were read
    #: off whole queries, and a focused one scores systematically lower).
    asked: list[Answer]
    #: Every candidate's memory by id.
    known: dict[str, Memory] = field(default_factory=dict)
    #: An `as_of` search's rows: every memory valid then, by id (None: current memories).
    pool: dict[str, Memory] | None = None
    pool_vectors: dict[str, list[float]] = field(default_factory=dict)
    #: The query without the speaker it names, when it names one.
    focus: str | None = None
