"""A complete third-party Recall ranker in one module.

`newest` ranks the namespace's most recent memories first, whatever the query says. Fused
with BM25 at a small weight it lifts what was said lately ("what did we just decide?")
without drowning relevance. Enable it with weights in recall.toml:

    [rankers]
    bm25 = 1.0
    newest = 0.3

    [plugins.newest]
    window = 20
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from recall_core import Memory, Ranker, ScoredId, hookimpl


class NewestSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    window: int = Field(20, ge=1, le=200)  # how many recent memories to offer


class NewestRanker(Ranker):
    name = "newest"

    def __init__(self, settings: NewestSettings):
        self.window = settings.window

    async def rank(self, storage, namespace: str, query: str, limit: int) -> list[ScoredId]:
        page, _ = await storage.list_memories(namespace, min(limit, self.window), 0)
        return [ScoredId(id=m.id, score=1.0 / (i + 1)) for i, m in enumerate(page)]

    async def rank_pool(self, query: str, memories: Sequence[Memory],
                        vectors: Mapping[str, Sequence[float]], limit: int) -> list[ScoredId]:
        # The same rule over given rows (an `as_of` search, a time window): newest first.
        newest = sorted(memories, key=lambda m: m.created_at, reverse=True)
        return [ScoredId(id=m.id, score=1.0 / (i + 1))
                for i, m in enumerate(newest[:min(limit, self.window)])]


@hookimpl
def register_rankers(register):
    # Installed but off until a config gives it a weight: a recency prior is a choice.
    register("newest", NewestRanker, settings=NewestSettings, default_weight=0.0)
