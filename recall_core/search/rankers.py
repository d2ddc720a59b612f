"""Asking the rankers: each answers with its hits, or with the reason it gave none (a note for
the search's `degraded` list). One broken or cold ranker never fails a search."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..contracts import NotReady, RankerSlot, Storage
from ..models import Memory, ScoredId

log = logging.getLogger("recall.search")

#: A ranker's answer: its hits, best first, or why it has none.
Answer = list[ScoredId] | str


async def ask(slot: RankerSlot, storage: Storage, namespace: str, query: str,
              limit: int) -> Answer:
    """The ranker over the namespace's current memories."""
    try:
        return await slot.ranker.rank(storage, namespace, query, limit)
    except NotReady as exc:
        return str(exc) or f"{slot.ranker.name}: not ready"
    except Exception as exc:  # noqa: BLE001 - one broken ranker degrades, it doesn't fail search
        log.exception("ranker %s failed", slot.ranker.name)
        return f"{slot.ranker.name}: failed ({type(exc).__name__}: {exc})"


async def ask_pool(slot: RankerSlot, query: str, pool: Sequence[Memory],
                   vectors: dict[str, list[float]], limit: int) -> Answer:
    """The ranker over given rows (an `as_of` search, a time window)."""
    try:
        return await slot.ranker.rank_pool(query, pool, vectors, limit)
    except NotReady as exc:
        return str(exc) or f"{slot.ranker.name}: not ready"
    except Exception as exc:  # noqa: BLE001 - as in ask
        log.exception("ranker %s failed on a pool of rows", slot.ranker.name)
        return f"{slot.ranker.name}: failed ({type(exc).__name__}: {exc})"


def wants_vectors(rankers: Sequence[RankerSlot]) -> bool:
    """Whether a ranker searches by embedding (then pools come with their vectors)."""
    return any(s.ranker.embedder is not None for s in rankers)
