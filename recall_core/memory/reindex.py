"""`recall reindex`: re-embed stored vectors made by another embedding model.

Every vector is stored with the id of the model that made it (`Memory.embedding_model`), and
search compares only vectors of the configured model (the others are left out and counted
in `data.degraded`). After a model change, this walks the rows whose vector has another
model id (or none: stored before ids were recorded), current and history rows alike (an
`as_of` search ranks history too), in insertion order, and writes each small batch in its
own transaction, so a running server keeps answering and picks the new vectors up as they
land. A row written with the configured model no longer qualifies, so running it again after
an interruption continues where it stopped.

Session context: a memory with a session gets norm(e(text) + 0.5 * the previous memory's
vector) like at write time (context.py), chained within the run. The first re-embedded row of
a session in a resumed run starts without context (its predecessors' vectors are not looked
up again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..contracts import model_id
from .session_context import chain
from ..errors import ConfigError
from ..contracts import Embedder, Storage

BATCH = 32


async def remaining(storage: Storage, namespace: str | None, model: str) -> int:
    counts = await storage.embedding_models(namespace)  # type: ignore[attr-defined]
    return sum(n for m, n in counts.items() if m != model)


async def reindex(storage: Storage, embedder: Embedder, namespace: str | None = None, *,
                  batch: int = BATCH, limit: int | None = None,
                  progress: Callable[[int], None] | None = None,
                  total: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Re-embed up to `limit` (all when None) vectors not made by `embedder`'s model.
    `total(n)` is told how many there are first, `progress(k)` after each batch."""
    if not storage.capabilities.embedding_models:
        raise ConfigError(f"{type(storage).__name__} does not record embedding model ids; "
                          f"nothing can be reindexed on it.")
    model = model_id(embedder)
    todo = await remaining(storage, namespace, model)
    if total is not None:
        total(todo if limit is None else min(todo, limit))
    done, after = 0, 0
    last: dict[str, Any] = {}  # "namespace\0session" -> that session's latest new vector
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        rows = await storage.embeddings_to_redo(namespace, model, after, size)
        if not rows:
            break
        raw = await embedder.embed([r.text for r in rows])
        keys = [f"{r.namespace}\0{r.session_id}" if r.session_id is not None else None
                for r in rows]
        by_ns: dict[str, list[tuple[str, list[float]]]] = {}
        for r, vec in zip(rows, chain(raw, keys, last)):
            by_ns.setdefault(r.namespace, []).append((r.id, vec))
        for ns, items in by_ns.items():  # one short transaction each
            await storage.set_embeddings(ns, items, model=model)
        after = rows[-1].seq
        done += len(rows)
        if progress is not None:
            progress(len(rows))
        await asyncio.sleep(0)
    return {"model": model, "namespace": namespace, "reindexed": done,
            "remaining": await remaining(storage, namespace, model)}
