"""Turn one queued operation into memory rows: extract, de-duplicate, settle contradictions,
embed, then hand everything to `storage.complete_job` in one transaction."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from .context import attach_context, embed_in_context
from .models import ExtractedMemory, Memory, Operation
from .protocols import Embedder, Extractor, NearDuplicateSearch, NotReady, Storage
from .textproc import jaccard, query_terms, token_set

log = logging.getLogger("recall.extraction")

# Two texts whose content-token sets overlap this much say the same thing.
NEAR_DUPLICATE = 0.85


@dataclass
class Plan:
    """What one job will write."""

    memories: list[Memory] = field(default_factory=list)
    supersede: list[tuple[str, datetime]] = field(default_factory=list)
    refresh: list[tuple[str, float]] = field(default_factory=list)


def _norm(value: str | None) -> str:
    return " ".join((value or "").lower().split())


async def _near_duplicate(storage: Storage, namespace: str, text: str) -> Memory | None:
    if not storage.supports_fulltext:
        return None
    terms = query_terms(text)
    if not terms:
        return None
    mine = token_set(text)
    if isinstance(storage, NearDuplicateSearch):
        # Jaccard >= J means the other text lacks at most (1 - J) / J of our terms (+1 for
        # the gap between the index's tokenizer and token_set). Ranking by every term instead
        # scored each memory sharing a common word: ~30 ms a job at 100k memories.
        missing = int((1 - NEAR_DUPLICATE) / NEAR_DUPLICATE * len(terms)) + 1
        hits = await storage.search_near_duplicates(namespace, terms, missing, 5)
    else:
        hits = await storage.search_fulltext(namespace, terms, 5)
    if not hits:
        return None
    for m in await storage.get_memories(namespace, [h.id for h in hits]):
        if jaccard(mine, token_set(m.text)) >= NEAR_DUPLICATE:
            return m
    return None


async def plan_memories(storage: Storage, op: Operation, extracted: Sequence[ExtractedMemory],
                        now: datetime) -> Plan:
    """Decide inserts, supersessions and refreshes for the extracted memories of `op`."""
    plan = Plan()
    payload = op.payload
    seen_texts: list[frozenset[str]] = []
    claimed: dict[tuple[str, str], str] = {}
    for em in extracted:
        entity = _norm(em.entity) or None
        attribute = _norm(em.attribute) or None
        has_triple = entity is not None and attribute is not None and em.value is not None
        if has_triple:
            key = (entity, attribute)
            if key in claimed:
                # The same text stated the attribute twice ("I use vim. I switched to VS
                # Code."): the later statement wins, the earlier one is kept as history.
                for m in plan.memories:
                    if (m.entity, m.attribute) == key and m.valid_until is None:
                        m.valid_until = now
            existing = await storage.find_active_by_triple(op.namespace, entity, attribute)
            same = [m for m in existing if _norm(m.value) == _norm(em.value)]
            if same:
                plan.refresh.append((same[0].id, em.importance))
                continue
            plan.supersede.extend((m.id, now) for m in existing
                                  if (m.id, now) not in plan.supersede)
            claimed[key] = em.value  # type: ignore[assignment]
        else:
            tokens = token_set(em.text)
            if any(jaccard(tokens, t) >= NEAR_DUPLICATE for t in seen_texts):
                continue
            dup = await _near_duplicate(storage, op.namespace, em.text)
            if dup is not None:
                plan.refresh.append((dup.id, em.importance))
                continue
            seen_texts.append(tokens)
        plan.memories.append(Memory(
            namespace=op.namespace, text=em.text.strip(), topic=payload.get("topic", ""),
            type=em.type, entity=entity if has_triple else None,
            attribute=attribute if has_triple else None,
            value=em.value if has_triple else None, importance=em.importance,
            valid_from=op.created_at, created_at=op.created_at,
            session_id=payload.get("session_id"), agent_id=payload.get("agent_id"),
            source_job_id=op.id))
    await attach_context(storage, op.namespace, plan.memories)
    return plan


async def embed_memories(embedder: Embedder | None, memories: Sequence[Memory],
                         storage: Storage | None = None) -> None:
    """Attach vectors (with session context when `storage` is given) if the model is ready;
    otherwise the backfill loop adds plain vectors later."""
    if embedder is None or not memories or not embedder.ready:
        return
    try:
        if storage is None:
            for m, vec in zip(memories, await embedder.embed([m.text for m in memories])):
                m.embedding = list(vec)
        else:
            await embed_in_context(embedder, storage, memories[0].namespace, memories)
    except NotReady:
        for m in memories:
            m.embedding = None


async def process(storage: Storage, extractor: Extractor, embedder: Embedder | None,
                  op: Operation, now: datetime) -> bool:
    """Run one claimed job to completion. Returns False when the claim went stale (another
    worker took the job over), in which case nothing was written."""
    extracted = await extractor.extract(op.payload.get("text", ""), op.payload.get("topic", ""))
    plan = await plan_memories(storage, op, extracted, now)
    await embed_memories(embedder, plan.memories, storage)
    return await storage.complete_job(op.id, op.attempts, plan.memories, plan.supersede,
                                      plan.refresh)
