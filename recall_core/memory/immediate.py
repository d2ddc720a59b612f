"""A store written before the call answers (A2A's `store_memories` skill), with the caller
deciding contradictions the fact rules cannot settle. No a2a-sdk types here: the A2A edge
calls these through `MemoryService` (`record_store`, `review_store`, `write_store`).

It runs the worker's pipeline synchronously: `extractor.extract` -> `writes.prepare`
-> `writes.commit` in one transaction with the fact keys locked, exactly as a queued job.
An operation row (kind "a2a", id = the task id) records the store like a job's: its payload
is scrubbed by forget, and an erase of the namespace while the task runs deletes it, so the
commit finds it gone and writes nothing. Before writing it looks for contradictions the
rules cannot settle:

* an extracted fact contradicts an active one when both have the same (entity, attribute)
  and different values (the worker would supersede the old row);
* the rules settle it (newer wins, the old row is superseded exactly as the worker does) unless
  the active row is younger than RECENT_DAYS **and** the two importances differ by less than
  IMPORTANCE_MARGIN: then both are recent and about as important, and the caller decides with
  one of DECISIONS:
  - keep_existing: nothing of the contradicting facts is stored; every other memory is;
  - keep_new: the old rows are superseded (valid_until set, kept for audit), as the worker does;
  - keep_both: the new statement is stored as a plain memory (text without its triple) and
    nothing is superseded: search returns both, and the stored fact stays the current value
    (one fact key never has two current values).

Nothing is written while a decision is pending, so a cancelled task stores nothing; the
extracted memories wait in the task, and the plan is made again, against the then current
rows, when the decision arrives.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..contracts import Embedder, Extractor, Storage
from ..errors import NamespaceErased
from ..models import ExtractedMemory, Memory, Operation
from . import validation as v
from . import writes
from ..events import payloads
from ..events.deliverer import wake as wake_deliverer
from ..kit.attributes import normalise_triple
from .facts import same_value

RECENT_DAYS = 30
IMPORTANCE_MARGIN = 0.2
DECISIONS = ("keep_existing", "keep_new", "keep_both")

Key = tuple[str, str]


def triple_key(em: ExtractedMemory) -> Key | None:
    """The fact key the write will give `em` (the same normalisation as `facts.normalise`),
    so an alias or a bare many-valued attribute is asked about under the key it lands on."""
    triple = normalise_triple(em.entity, em.attribute, em.value)
    return (triple[0], triple[1]) if triple is not None else None


def needs_decision(existing: Memory, new: ExtractedMemory, now: datetime) -> bool:
    """True when the rules cannot settle `new` against the active `existing` row."""
    recent = now - existing.valid_from < timedelta(days=RECENT_DAYS)
    return recent and abs(existing.importance - new.importance) < IMPORTANCE_MARGIN


@dataclass
class Conflict:
    key: Key
    existing: list[Memory]
    new: ExtractedMemory

    def public(self) -> dict[str, Any]:
        return {"entity": self.key[0], "attribute": self.key[1],
                "existing": [m.public() for m in self.existing],
                "new": self.new.model_dump(exclude_none=True)}


async def find_conflicts(storage: Storage, namespace: str, extracted: Sequence[ExtractedMemory],
                         now: datetime, said: datetime | None = None) -> list[Conflict]:
    """Contradictions with active facts that need the caller's decision. A text said
    (`said`, its created_at) before a current value began contradicts nothing: the fact
    model places it as history of that value (facts.py), so it is never asked about."""
    out: dict[Key, Conflict] = {}
    for em in extracted:
        key = triple_key(em)
        if key is None:
            continue
        existing = [m for m in await storage.history(namespace, *key)
                    if m.valid_until is None and (said is None or m.valid_from <= said)]
        if any(same_value(m.value, em.value) for m in existing):
            continue  # a re-statement: the write refreshes the row
        if any(needs_decision(m, em, now) for m in existing):
            out[key] = Conflict(key, existing, em)  # the later statement in one text wins
    return list(out.values())


@dataclass
class StoreInput:
    text: str
    topic: str
    session_id: str | None
    agent_id: str | None
    #: When the text was said (ISO 8601, UTC), as store_memory's created_at; None: now. A
    #: string, so a task waiting for a decision keeps it in its JSON metadata.
    created_at: str | None = None

    @classmethod
    def parse(cls, args: dict[str, Any], now: datetime, max_text_bytes: int) -> StoreInput:
        said = v.said_at(args.get("created_at"), now)
        return cls(text=v.text(args.get("text"), "text", max_text_bytes),
                   topic=v.topic(args.get("topic")),
                   session_id=v.optional_str(args.get("session_id"), "session_id"),
                   agent_id=v.optional_str(args.get("agent_id"), "agent_id"),
                   created_at=said.isoformat() if said is not None else None)

    def operation(self, namespace: str, task_id: str, now: datetime) -> Operation:
        """The operation row that records this store (never claimed by a worker: it is
        created done). Its id becomes the memories' source_job_id; its created_at is when
        the text was said, which places the memories (writes.prepare)."""
        said = datetime.fromisoformat(self.created_at) if self.created_at else now
        return Operation(id=task_id, namespace=namespace, idempotency_key=f"a2a:{task_id}",
                         kind="a2a", status="done", created_at=said, finished_at=now,
                         payload={"text": self.text, "topic": self.topic,
                                  "session_id": self.session_id, "agent_id": self.agent_id})


async def record(storage: Storage, op: Operation) -> Operation:
    """Create (or find, on a resumed task) the operation row of an A2A store."""
    stored, _ = await storage.enqueue(op)
    return stored


async def store_extracted(storage: Storage, embedder: Embedder | None, op: Operation,
                          extracted: Sequence[ExtractedMemory], now: datetime,
                          decision: str | None = None,
                          conflict_keys: Collection[Key] = (),
                          extractor: Extractor | None = None) -> dict[str, Any]:
    """Write `extracted` as the worker would (same prepare and commit), bent by `decision`
    for `conflict_keys`. Raises NamespaceErased (nothing written) when the namespace was
    erased while the task ran."""
    keep = list(extracted)
    if decision == "keep_existing":
        keep = [em for em in keep if triple_key(em) not in conflict_keys]
    elif decision == "keep_both":
        keep = [em.model_copy(update={"entity": None, "attribute": None, "value": None})
                if triple_key(em) in conflict_keys else em for em in keep]
    prepared = await writes.prepare(storage, embedder, op.namespace, keep, op.created_at,
                                    op.payload, op.id)
    async def body(tx: Any) -> writes.Written:
        written = await writes.commit(tx, prepared, now)
        result = {**written.result(),
                  **(writes.provenance(extractor) if extractor is not None else {})}
        if not await tx.finish_job(op.id, None, result):
            raise NamespaceErased(
                "The namespace was erased while this task ran (delete_namespace_data): "
                "nothing was stored, and its tokens no longer work.")
        # An A2A store is an extraction too: its event commits with it (the outbox).
        await tx.emit(payloads.extraction_completed(op, result, written.stored))
        return written

    written = await writes.transaction(storage, op.namespace, prepared.keys, body)
    wake_deliverer()
    return {"stored": [m.public() for m in written.stored],
            "superseded_ids": written.superseded_ids,
            "refreshed_ids": written.refreshed_ids, "restated_ids": written.restated_ids,
            "history_ids": written.history_ids,
            "decision": decision}
