"""A search's storage reads over every partition the caller sees (`access.partitions`).

Each ranker answers per partition and the answers are merged by the ranker's own score
before fusion, so a search over the shared memories and an agent's private ones ranks one
pool, as it would if they were one namespace. (Full-text scores of two partitions come from
two indexes' term statistics; they are of one scale, as the memories of one namespace are.)
Every later read by id looks in each partition: ids are globally unique, and each storage
call still filters by its namespace. One partition is one plain call, as before partitions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..contracts import RankerSlot, Storage
from ..models import Memory
from .rankers import Answer, ask


async def _each(spaces: Sequence[str], call: Any) -> list[Any]:
    if len(spaces) == 1:
        return [await call(spaces[0])]
    return list(await asyncio.gather(*(call(s) for s in spaces)))


async def rank(slot: RankerSlot, storage: Storage, spaces: Sequence[str], query: str,
               limit: int) -> Answer:
    """The ranker over every partition: the best `limit` hits of all, by its score. A ranker
    that cannot answer in one partition (warming up, broken) answers with that reason."""
    answers = await _each(spaces, lambda s: ask(slot, storage, s, query, limit))
    if len(answers) == 1:
        return answers[0]
    for answer in answers:
        if isinstance(answer, str):
            return answer
    hits = [h for answer in answers for h in answer]
    hits.sort(key=lambda h: h.score, reverse=True)
    return hits[:limit]


async def get_memories(storage: Storage, spaces: Sequence[str], ids: Sequence[str]
                       ) -> list[Memory]:
    return [m for rows in await _each(spaces, lambda s: storage.get_memories(s, ids))
            for m in rows]


async def get_embeddings(storage: Storage, spaces: Sequence[str], ids: Sequence[str],
                         model: str | None) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for found in await _each(spaces, lambda s: storage.get_embeddings(s, ids, model=model)):
        out.update(found)
    return out


async def session_neighbours(storage: Storage, spaces: Sequence[str], ids: Sequence[str]
                             ) -> dict[str, Any]:
    """Neighbours within each partition (a session's lines of one visibility)."""
    out: dict[str, Any] = {}
    for found in await _each(spaces, lambda s: storage.session_neighbours(s, ids)):
        out.update(found)
    return out


async def memories_at(storage: Storage, spaces: Sequence[str], as_of: datetime
                      ) -> list[Memory]:
    return [m for rows in await _each(spaces, lambda s: storage.memories_at(s, as_of))
            for m in rows]


async def memories_created(storage: Storage, spaces: Sequence[str], ranges: Any,
                           limit: int) -> list[Memory] | None:
    """As the storage method: None when more than `limit` memories of all partitions are."""
    found = await _each(spaces, lambda s: storage.memories_created(s, ranges, limit))
    if any(rows is None for rows in found):
        return None
    out = [m for rows in found for m in rows]
    if len(found) > 1:
        out.sort(key=lambda m: m.created_at)
    return None if len(out) > limit else out
