"""consolidate_memories: cluster a topic's active memories by embedding cosine, merge each
cluster through the extractor, supersede the originals with one canonical memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import EmbeddingsRequired
from .models import Memory, utcnow
from .protocols import NotReady

if TYPE_CHECKING:
    from .service import MemoryService


def clusters(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Connected components of the graph 'cosine >= threshold' (single linkage), size >= 2."""
    n = len(vectors)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    sim = unit @ unit.T
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    rows, cols = np.nonzero(np.triu(sim >= threshold, k=1))
    for i, j in zip(rows.tolist(), cols.tolist()):
        parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


async def consolidate(service: MemoryService, namespace: str, topic: str, threshold: float,
                      dry_run: bool) -> dict[str, Any]:
    storage, embedder = service.storage, service.embedder
    assert embedder is not None
    memories = [m async for m in storage.iter_memories(namespace) if m.topic == topic]
    empty = {"groups_found": 0, "memories_consolidated": 0, "memories_created": 0,
             "deleted_ids": [], "created": [], "groups": [], "dry_run": dry_run}
    if len(memories) < 2:
        return empty
    stored = await storage.get_embeddings(namespace, [m.id for m in memories])
    missing = [m for m in memories if m.id not in stored]
    if missing:
        try:
            vecs = await embedder.embed([m.text for m in missing])
        except NotReady as exc:
            raise EmbeddingsRequired(
                f"The embedding model is not ready ({exc}). Retry in a few seconds.") from None
        stored.update({m.id: v for m, v in zip(missing, vecs)})
    matrix = np.asarray([stored[m.id] for m in memories], dtype=np.float32)
    groups = clusters(matrix, threshold)
    if not groups:
        return empty
    now = utcnow()
    plan, created, deleted = [], [], []
    for group in groups:
        members = [memories[i] for i in group]
        merged = await service.extractor.merge(members, topic)
        canonical = Memory(
            namespace=namespace, text=merged.text, topic=topic, type=merged.type,
            entity=merged.entity, attribute=merged.attribute, value=merged.value,
            importance=max(merged.importance, max(m.importance for m in members)),
            created_at=max(m.created_at for m in members), valid_from=now,
            access_count=sum(m.access_count for m in members))
        plan.append({"merged_ids": [m.id for m in members],
                     "texts": [m.text for m in members], "canonical": canonical.text})
        if not dry_run:
            canonical.embedding = (await embedder.embed([canonical.text]))[0] if embedder.ready else None
            await storage.supersede_memories(namespace, [m.id for m in members], now, [canonical])
        created.append(canonical.public())
        deleted.extend(m.id for m in members)
    return {"groups_found": len(groups), "memories_consolidated": len(deleted),
            "memories_created": len(created), "deleted_ids": deleted, "created": created,
            "groups": plan, "dry_run": dry_run}
