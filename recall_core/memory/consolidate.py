"""consolidate_memories: cluster a topic's active memories by embedding cosine, merge each
cluster through the extractor, supersede the originals with one canonical memory.

Clustering compares what the texts say: a memory written in a session is stored with its
session's context mixed into its vector (context.py), which would make two different facts
said one after the other look alike, so those are re-embedded from their text alone.
Every merge is computed before anything is written (a failing merge changes nothing), and a
group whose members changed meanwhile (superseded or deleted by another write) is skipped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..contracts import model_id
from ..errors import EmbeddingsRequired, RecallError
from ..models import Memory, utcnow
from ..contracts import Embedder, ExtractionError, Extractor, NotReady, Storage
from . import clustering
from .facts import normalise
from .writes import replace

log = logging.getLogger("recall.consolidate")

async def _embed(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    try:
        return await embedder.embed(texts)
    except NotReady as exc:
        raise EmbeddingsRequired(
            f"The embedding model is not ready ({exc}). Retry in a few seconds.") from None


async def text_vectors(storage: Storage, embedder: Embedder, namespace: str,
                       memories: Sequence[Memory]) -> np.ndarray:
    """One vector per memory that depends on its text only: the stored one when it was
    embedded without session context and has the model's width, else a fresh one."""
    dim = embedder.dim
    stored = await storage.get_embeddings(
        namespace, [m.id for m in memories if m.session_id is None], model=model_id(embedder))
    usable = {mid: v for mid, v in stored.items() if not dim or len(v) == dim}
    missing = [m for m in memories if m.id not in usable]
    if missing:
        usable.update({m.id: v for m, v in zip(missing, await _embed(
            embedder, [m.text for m in missing]))})
    # 15,000 x 384 Python floats take ~0.5 s to convert: off the loop too.
    return await asyncio.to_thread(
        np.asarray, [usable[m.id] for m in memories], dtype=np.float32)


async def consolidate(storage: Storage, embedder: Embedder, extractor: Extractor,
                      namespace: str, topic: str, threshold: float, dry_run: bool,
                      max_group: int = 20, budget: float = 20.0) -> dict[str, Any]:
    """`budget` (seconds) bounds clustering, merging and writing together (at least one
    group is always done, so repeated calls progress): past it, the answer says `partial`,
    with the groups done so far and `memories_examined` (call again for the rest)."""
    deadline = time.monotonic() + budget
    memories = [m async for m in storage.iter_memories(namespace) if m.topic == topic]
    empty = {"groups_found": 0, "memories_consolidated": 0, "memories_created": 0,
             "deleted_ids": [], "created": [], "groups": [], "dry_run": dry_run,
             "memories_examined": len(memories), "memories_in_topic": len(memories),
             "partial": False}
    if len(memories) < 2:
        return empty
    vectors = await text_vectors(storage, embedder, namespace, memories)
    keys = clustering.number_keys([m.text for m in memories])
    found = await asyncio.to_thread(clustering.group, vectors, threshold, max_group, deadline,
                                    keys)
    groups, examined = found.groups, found.examined
    planned = await _plan(extractor, namespace, topic, memories, groups, deadline)
    if len(planned) < len(groups):  # out of time while merging: the rest waits
        examined = min(groups[len(planned)])  # a group's seed is its first index
        groups = groups[:len(planned)]
    partial = examined < len(memories)
    if not groups:
        return {**empty, "memories_examined": examined, "partial": partial}
    now = planned[0][1].valid_from

    # Write each group in its own transaction, unless a member changed meanwhile.
    if not dry_run and embedder.ready:
        try:
            vecs = await embedder.embed([c.text for _, c in planned])
            for (_, canonical), vec in zip(planned, vecs):
                canonical.embedding = list(vec)
                canonical.embedding_model = model_id(embedder)
        except NotReady:
            pass  # the backfill loop embeds them later
    plan, created, deleted, skipped = [], [], [], 0
    for done, (members, canonical) in enumerate(planned):
        if done and time.monotonic() > deadline:  # out of time while writing: the rest waits
            examined, groups, partial = min(groups[done]), groups[:done], True
            break
        ids = [m.id for m in members]
        if not dry_run:
            if await replace(storage, namespace, members, [canonical], now) is None:
                skipped += 1
                log.info("consolidation of %s skipped: a member changed meanwhile", ids)
                continue
        plan.append({"merged_ids": ids, "texts": [m.text for m in members],
                     "canonical": canonical.text})
        created.append(canonical.public())
        deleted.extend(ids)
    out = {"groups_found": len(groups), "memories_examined": examined,
           "memories_in_topic": len(memories), "partial": partial,
           "memories_consolidated": len(deleted), "memories_created": len(created),
           "deleted_ids": deleted, "created": created, "groups": plan, "dry_run": dry_run}
    if skipped:
        out["groups_skipped"] = skipped
    return out


async def _plan(extractor: Extractor, namespace: str, topic: str, memories: Sequence[Memory],
                groups: list[list[int]], deadline: float) -> list[tuple[list[Memory], Memory]]:
    """Every merge before any write: an extractor failure leaves everything as it was.
    Stops at the deadline (at least one group is merged, so repeated calls progress)."""
    now = utcnow()
    planned: list[tuple[list[Memory], Memory]] = []
    for indices in groups:
        if planned and time.monotonic() > deadline:
            break
        await asyncio.sleep(0)  # a rule-based merge never suspends: let other calls in
        members = [memories[i] for i in indices]
        try:
            merged = await extractor.merge(members, topic)
        except ExtractionError as exc:
            raise RecallError(
                f"The extractor could not merge a group of {len(members)} memories ({exc}). "
                f"Nothing was changed; retry later"
                + (", or lower the group size by raising similarity_threshold." if not
                   exc.retryable else "."), code="EXTRACTION_FAILED") from None
        # A key current outside the group is dropped from the canonical memory at write
        # time (writes.replace), under the key's lock.
        accessed = [m.last_accessed_at for m in members if m.last_accessed_at is not None]
        canonical = normalise(Memory(
            namespace=namespace, text=merged.text, topic=topic, type=merged.type,
            entity=merged.entity, attribute=merged.attribute, value=merged.value,
            importance=max(merged.importance, max(m.importance for m in members)),
            created_at=max(m.created_at for m in members), valid_from=now,
            last_accessed_at=max(accessed) if accessed else None,
            access_count=sum(m.access_count for m in members)))
        planned.append((members, canonical))
    return planned
