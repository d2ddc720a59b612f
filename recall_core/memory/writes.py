"""The one write path: extracted memories -> rows, for the worker, A2A, consolidation and
verbatim import alike.

Two halves. `prepare` does everything slow outside any transaction (near-duplicate lookups,
session context, embeddings). `commit` runs inside `storage.write(namespace, keys)`, which
holds the memories' fact keys locked: it reads the keys' timelines there and applies
`facts.plan`, so what is current is decided on what is current at commit, never on a read
made before. Storage keeps to primitives; the rules are in `facts.py`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from . import facts
from .known import extract_with_known
from ..events import payloads
from ..events.deliverer import wake as wake_deliverer
from .session_context import attach_context, embed_in_context
from ..errors import StaleClaim, TransientConflict
from ..models import ExtractedMemory, Memory, Operation
from ..contracts import Embedder, Extractor, NotReady, Storage, WriteTx
from ..kit.attributes import is_many
from ..kit.text import jaccard, query_terms, token_set

log = logging.getLogger("recall.writes")
T = TypeVar("T")

# Two texts whose content-token sets overlap this much say the same thing.
NEAR_DUPLICATE = 0.85


@dataclass
class Prepared:
    """One text's memories, ready to commit."""

    namespace: str
    at: datetime
    memories: list[Memory] = field(default_factory=list)
    #: Keyless memories that repeat a stored one: (stored id, importance) to refresh instead.
    duplicates: list[tuple[str, float]] = field(default_factory=list)
    #: memory id -> ids of keyless statements its single-valued fact replaces (the extractor's
    #: `replaces`), ended at commit when still current and said before it
    replaces: dict[str, list[str]] = field(default_factory=dict)

    @property
    def keys(self) -> list[tuple[str, str]]:
        return sorted({m.key for m in self.memories if m.key is not None})


@dataclass
class Written:
    """What a commit did (ids only: the A2A task and the job's result record them)."""

    stored: list[Memory] = field(default_factory=list)
    superseded_ids: list[str] = field(default_factory=list)
    refreshed_ids: list[str] = field(default_factory=list)
    #: history rows re-stated late (facts.Changes.restated): unchanged, listed for forget
    restated_ids: list[str] = field(default_factory=list)
    #: rows written already ended: a statement said before the key's current value began
    #: (a late or backdated store), a value replaced within its own text, re-statement markers
    history_ids: list[str] = field(default_factory=list)

    def result(self) -> dict[str, Any]:
        return {"memory_ids": [m.id for m in self.stored],
                "superseded_ids": self.superseded_ids, "refreshed_ids": self.refreshed_ids,
                "restated_ids": self.restated_ids, "history_ids": self.history_ids}


async def _near_duplicate(storage: Storage, namespace: str, text: str) -> Memory | None:
    if not storage.capabilities.fulltext:
        return None
    terms = query_terms(text)
    if not terms:
        return None
    mine = token_set(text)
    if storage.capabilities.near_duplicates:
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
        if m.key is None and jaccard(mine, token_set(m.text)) >= NEAR_DUPLICATE:
            return m
    return None


def to_memory(namespace: str, em: ExtractedMemory, at: datetime, payload: dict[str, Any],
              source_job_id: str | None) -> Memory:
    return facts.normalise(Memory(
        namespace=namespace, text=em.text.strip(), topic=payload.get("topic") or "",
        type=em.type, entity=em.entity, attribute=em.attribute, value=em.value,
        importance=em.importance, valid_from=at, created_at=at,
        session_id=payload.get("session_id"), agent_id=payload.get("agent_id"),
        source_job_id=source_job_id))


async def prepare(storage: Storage, embedder: Embedder | None, namespace: str,
                  extracted: Sequence[ExtractedMemory], at: datetime, payload: dict[str, Any],
                  source_job_id: str | None = None) -> Prepared:
    """Memories for one text said at `at`: keyless near-duplicates of stored memories become
    refreshes, repeats within the text are dropped; session context and vectors attached."""
    out = Prepared(namespace, at)
    seen: list[frozenset[str]] = []
    for em in extracted:
        m = to_memory(namespace, em, at, payload, source_job_id)
        if not m.text:
            continue
        if m.key is None:
            tokens = token_set(m.text)
            if any(jaccard(tokens, t) >= NEAR_DUPLICATE for t in seen):
                continue
            dup = await _near_duplicate(storage, namespace, m.text)
            if dup is not None:
                out.duplicates.append((dup.id, m.importance))
                continue
            seen.append(tokens)
        if em.replaces and m.key is not None and not is_many(m.key[1]):
            out.replaces[m.id] = list(dict.fromkeys(em.replaces))
        out.memories.append(m)
    await attach_context(storage, namespace, out.memories)
    await embed_memories(embedder, out.memories, storage)
    return out


async def embed_memories(embedder: Embedder | None, memories: Sequence[Memory],
                         storage: Storage) -> None:
    """Attach vectors with session context if the model is ready; otherwise the backfill
    loop adds plain vectors later."""
    if embedder is None or not memories or not embedder.ready:
        return
    try:
        await embed_in_context(embedder, storage, memories[0].namespace, memories)
    except NotReady:
        for m in memories:
            m.embedding = None


async def apply(tx: WriteTx, changes: facts.Changes, now: datetime) -> Written:
    """Apply planned changes in the one safe order: ends, inserts, refreshes."""
    if changes.ends:
        await tx.end(changes.ends)
        for event in payloads.superseded(tx.namespace, changes.ends):  # the outbox
            await tx.emit(event)
    if changes.inserts:
        await tx.insert(changes.inserts)
    if changes.refresh:
        await tx.refresh(changes.refresh, now)
    return Written(stored=[m for m in changes.inserts if m.valid_until is None],
                   superseded_ids=[i for i, _, _ in changes.ends],
                   refreshed_ids=list(dict.fromkeys(i for i, _ in changes.refresh)),
                   restated_ids=list(dict.fromkeys(changes.restated)),
                   history_ids=[m.id for m in changes.inserts if m.valid_until is not None])


async def commit(tx: WriteTx, prepared: Prepared, now: datetime) -> Written:
    """Inside `storage.write(prepared.namespace, prepared.keys)`: plan against the current
    timelines and apply."""
    timeline = await tx.timeline(prepared.keys) if prepared.keys else []
    # Planning sets validity fields: on copies, so a re-run after a deadlock starts clean.
    changes = facts.plan(timeline, [m.model_copy() for m in prepared.memories], prepared.at)
    if changes.refresh and await tx.older_jobs_pending(prepared.at):
        # A re-statement while a store said earlier may still change these keys: plan again
        # keeping its time (facts.place). Only re-statements ask, not every write.
        changes = facts.plan(timeline, [m.model_copy() for m in prepared.memories],
                             prepared.at, keep_restatement=True)
    changes.refresh.extend(prepared.duplicates)
    if prepared.replaces:
        changes.ends.extend(await replaced_statements(tx, prepared.replaces, changes))
    return await apply(tx, changes, now)


async def replaced_statements(tx: WriteTx, replaces: dict[str, list[str]],
                              changes: facts.Changes) -> list[tuple[str, datetime, str | None]]:
    """Ends for the keyless statements an extractor said a new fact replaces: read inside
    the transaction, so only rows still current, of this namespace (partition), stating no
    fact and said before the new memory are ended, each by the memory that replaces it."""
    current = {m.id: m for m in changes.inserts if m.valid_until is None}
    wanted = {i for mid, ids in replaces.items() if mid in current for i in ids}
    if not wanted:
        return []
    ending = {i for i, _, _ in changes.ends}
    rows = {r.id: r for r in await tx.current(sorted(wanted))}
    ends: list[tuple[str, datetime, str | None]] = []
    for mid, ids in replaces.items():
        new = current.get(mid)
        for i in ids if new is not None else ():
            row = rows.get(i)
            if row is None or row.key is not None or i in ending or row.valid_from > new.valid_from:
                continue
            ends.append((i, new.valid_from, mid))
            ending.add(i)
    return ends


async def transaction(storage: Storage, namespace: str, keys: Sequence[tuple[str, str]],
                      body: Callable[[WriteTx], Awaitable[T]], attempts: int = 4) -> T:
    """Run `body` in `storage.write(namespace, keys)`, again (after a short random pause) when
    the database aborted it to break a deadlock: it was rolled back whole, so this is safe.
    `body` must read what it decides on through `tx`, so a re-run decides afresh."""
    for attempt in range(attempts):
        try:
            async with storage.write(namespace, keys) as tx:
                return await body(tx)
        except TransientConflict:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.01 * 2 ** attempt * (1 + random.random()))
    raise AssertionError("unreachable")


async def commit_job(storage: Storage, op: Operation, prepared: Prepared, now: datetime,
                     extra: dict[str, Any] | None = None) -> Written | None:
    """Write a job's memories and mark it done in one transaction. None (and nothing
    written) when the claim went stale: another worker re-ran or finished the job."""
    async def body(tx: WriteTx) -> Written:
        written = await commit(tx, prepared, now)
        result = {**written.result(), **(extra or {})}
        if not await tx.finish_job(op.id, op.attempts, result):
            raise StaleClaim(op.id)
        await tx.emit(payloads.extraction_completed(op, result, written.stored))
        return written

    try:
        written = await transaction(storage, op.namespace, prepared.keys, body)
    except StaleClaim:
        return None
    wake_deliverer()
    return written


async def process(storage: Storage, extractor: Any, embedder: Embedder | None,
                  op: Operation, now: datetime) -> bool:
    """Run one claimed job to completion. Returns False when the claim went stale, in which
    case nothing was written."""
    extracted = await extract_with_known(storage, extractor, op.namespace,
                                         op.payload.get("text", ""), op.payload.get("topic", ""))
    prepared = await prepare(storage, embedder, op.namespace, extracted, op.created_at,
                             op.payload, op.id)
    return await commit_job(storage, op, prepared, now, provenance(extractor)) is not None


def provenance(extractor: Extractor) -> dict[str, Any]:
    """Which extractor (and model and prompt version) made a job's memories: kept in the
    job's result, which every memory reaches through its source_job_id."""
    out = {"extractor": extractor.name}
    out.update({key: value for key, value in (("model", extractor.model),
                                                ("prompt_version", extractor.prompt_version))
                if value})
    return out


async def replace(storage: Storage, namespace: str, members: Sequence[Memory],
                  new: Sequence[Memory], at: datetime) -> Written | None:
    """Consolidation: end the current rows `members` and insert `new` in their place, in one
    transaction with the keys of all of them locked. None (nothing written) when a member is
    no longer current (changed meanwhile). A new memory whose key is current outside the
    group is written without its triple: two current values would contradict each other."""
    for m in new:
        facts.normalise(m)
    ids = sorted({m.id for m in members})
    keys = sorted({m.key for m in [*members, *new] if m.key is not None})
    triples = {m.id: (m.entity, m.attribute, m.value) for m in new}

    async def body(tx: WriteTx) -> Written | None:
        if len(await tx.current(ids)) != len(ids):
            return None
        timeline = await tx.timeline(keys) if keys else []
        held = {r.key for r in timeline if r.valid_until is None and r.id not in ids}
        for m in new:
            m.entity, m.attribute, m.value = triples[m.id]
            if m.key in held:
                m.entity = m.attribute = m.value = None
            m.valid_from = at
        successor = new[0].id if len(new) == 1 else None
        changes = facts.Changes(inserts=list(new), ends=[(i, at, successor) for i in ids])
        return await apply(tx, changes, at)

    return await transaction(storage, namespace, keys, body)
