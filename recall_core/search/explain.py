"""Why a search ranked what it did: a trace that `search.pipeline.Searcher.run` fills as it goes, when
asked (the inspector's "search, explained"). The same pipeline as every search; without a
trace nothing here runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models import Memory, ScoredId


@dataclass
class SearchTrace:
    #: the query the rankers that embed it were asked instead, without the speakers it names
    #: (speakers.focused_query); None: they were asked the query as given
    focus: str | None = None
    #: per ranker: name, weight, and either its hit count or why it was skipped
    rankers: list[dict[str, Any]] = field(default_factory=list)
    #: memory id -> ranker name -> (1-based rank, the ranker's own score)
    ranks: dict[str, dict[str, tuple[int, float]]] = field(default_factory=dict)
    #: weighted RRF, normalised (1.0 = first in every ranker)
    fused: dict[str, float] = field(default_factory=dict)
    #: memory id -> relevance from the rankers asked over the named time window only
    #: (search.window_relevance); fused takes the larger
    window: dict[str, float] = field(default_factory=dict)
    #: fused relevance after the time-window and session adjustments
    adjusted: dict[str, float] = field(default_factory=dict)
    #: memory id -> the score's terms (search.combine fills it)
    parts: dict[str, dict[str, float]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    #: memory id -> what happened to it: returned, below_threshold, mmr, limit, budget
    outcome: dict[str, str] = field(default_factory=dict)
    memories: dict[str, Memory] = field(default_factory=dict)

    def record_rankers(self, names_weights: Sequence[tuple[str, float]],
                       outcomes: Sequence[list[ScoredId] | str]) -> None:
        for (name, weight), out in zip(names_weights, outcomes):
            if isinstance(out, str):
                self.rankers.append({"name": name, "weight": weight, "skipped": out})
                continue
            self.rankers.append({"name": name, "weight": weight, "hits": len(out)})
            for rank, hit in enumerate(out, start=1):
                self.ranks.setdefault(hit.id, {})[name] = (rank, hit.score)

    def record_selection(self, scored: Sequence[tuple[Memory, float]], threshold: float,
                         considered: Sequence[tuple[Memory, float]],
                         selected: Sequence[tuple[Memory, float]],
                         final: Sequence[tuple[Memory, float]], limit: int) -> None:
        for m, _ in scored:
            self.memories[m.id] = m
            self.outcome[m.id] = "below_threshold"
        top = {m.id for m, _ in considered[:limit]}
        chosen = {m.id for m, _ in selected}
        returned = {m.id for m, _ in final}
        for m, s in scored:
            if s < threshold:
                continue
            if m.id in returned:
                self.outcome[m.id] = "returned"
            elif m.id in chosen:
                self.outcome[m.id] = "budget"
            elif m.id in top:
                self.outcome[m.id] = "mmr"  # would have made the list by score alone
            else:
                self.outcome[m.id] = "limit"

    def rows(self, scored_order: Sequence[str]) -> list[dict[str, Any]]:
        """One row per candidate, best score first."""
        out = []
        for mid in scored_order:
            m = self.memories.get(mid)
            if m is None:
                continue
            out.append({"id": mid, "memory": m, "ranks": self.ranks.get(mid, {}),
                        "window": self.window.get(mid), "fused": self.fused.get(mid, 0.0), "adjusted": self.adjusted.get(mid, 0.0),
                        **self.parts.get(mid, {}), "outcome": self.outcome.get(mid, "")})
        return out
