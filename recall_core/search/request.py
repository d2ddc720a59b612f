"""One search as the caller asked it, and what it found."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from ..models import Memory


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


@dataclass
class SearchOutcome:
    results: list[tuple[Memory, float]]
    degraded: list[str] = field(default_factory=list)
    truncated: bool = False
    tokens: int = 0
    matched: int = 0  # candidates scoring >= score_threshold, before limit and max_tokens
