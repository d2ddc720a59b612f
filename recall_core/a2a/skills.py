"""The A2A skills as plain functions over the core: no a2a-sdk types in this module.

`consolidate_memories` runs the worker's pipeline synchronously: `extractor.extract` ->
`extraction.plan_memories` (dedup, supersede, refresh) -> one `storage.supersede_memories`
transaction. Before planning it looks for contradictions the rules cannot settle:

* an extracted fact contradicts an active one when both have the same (entity, attribute)
  and different values (the worker would supersede the old row);
* the rules settle it (newer wins, the old row is superseded exactly as the worker does) unless
  the active row is younger than RECENT_DAYS **and** the two importances differ by less than
  IMPORTANCE_MARGIN: then both are recent and about as important, and the caller decides with
  one of DECISIONS:
  - keep_existing: nothing of the contradicting facts is stored; every other memory is;
  - keep_new: the old rows are superseded (valid_until set, kept for audit), as the worker does;
  - keep_both: the new fact is stored and nothing is superseded, so both rows stay active
    (search returns both); a later statement of that attribute supersedes all of them.

Nothing is written while a decision is pending, so a cancelled task stores nothing; the
extracted memories wait in the task, and the plan is made again, against the then current
rows, when the decision arrives.

`search_memories` is `MemoryService.search`, the same call as the MCP tool.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .. import validation as v
from ..config import RecallConfig
from ..extraction import embed_memories, plan_memories
from ..models import ExtractedMemory, Memory, Operation
from ..protocols import Embedder, Storage
from ..service import MemoryService

RECENT_DAYS = 30
IMPORTANCE_MARGIN = 0.2
DECISIONS = ("keep_existing", "keep_new", "keep_both")
SEARCH_PARAMS = ("limit", "recency_weight", "mmr_lambda", "score_threshold", "max_tokens")

Key = tuple[str, str]


def _norm(value: str | None) -> str:
    return " ".join((value or "").lower().split())


def triple_key(em: ExtractedMemory) -> Key | None:
    entity, attribute = _norm(em.entity), _norm(em.attribute)
    if entity and attribute and em.value is not None:
        return entity, attribute
    return None


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
                         now: datetime) -> list[Conflict]:
    """Contradictions with active facts that need the caller's decision."""
    out: dict[Key, Conflict] = {}
    for em in extracted:
        key = triple_key(em)
        if key is None:
            continue
        existing = await storage.find_active_by_triple(namespace, *key)
        if any(_norm(m.value) == _norm(em.value) for m in existing):
            continue  # a re-statement: plan_memories refreshes the row
        if any(needs_decision(m, em, now) for m in existing):
            out[key] = Conflict(key, existing, em)  # the later statement in one text wins
    return list(out.values())


@dataclass
class ConsolidateInput:
    text: str
    topic: str
    session_id: str | None
    agent_id: str | None

    @classmethod
    def parse(cls, config: RecallConfig, args: dict[str, Any]) -> ConsolidateInput:
        return cls(text=v.text(args.get("text"), "text", config.limits.max_text_bytes),
                   topic=v.topic(args.get("topic")),
                   session_id=v.optional_str(args.get("session_id"), "session_id"),
                   agent_id=v.optional_str(args.get("agent_id"), "agent_id"))

    def operation(self, namespace: str, task_id: str, now: datetime) -> Operation:
        """The job-shaped record plan_memories reads. It is never enqueued: the A2A task is
        the durable record, and its id becomes the memories' source_job_id."""
        return Operation(id=task_id, namespace=namespace, idempotency_key=f"a2a:{task_id}",
                         kind="a2a_consolidate", status="running", created_at=now,
                         payload={"text": self.text, "topic": self.topic,
                                  "session_id": self.session_id, "agent_id": self.agent_id})


async def store_extracted(storage: Storage, embedder: Embedder | None, op: Operation,
                          extracted: Sequence[ExtractedMemory], now: datetime,
                          decision: str | None = None,
                          conflict_keys: Collection[Key] = ()) -> dict[str, Any]:
    """Plan and write `extracted` as the worker would, bent by `decision` for `conflict_keys`."""
    keep = list(extracted)
    if decision == "keep_existing":
        keep = [em for em in keep if triple_key(em) not in conflict_keys]
    plan = await plan_memories(storage, op, keep, now)
    if decision == "keep_both":
        protected: set[str] = set()
        for key in conflict_keys:
            protected.update(m.id for m in await storage.find_active_by_triple(op.namespace, *key))
        plan.supersede = [(mid, at) for mid, at in plan.supersede if mid not in protected]
    await embed_memories(embedder, plan.memories)
    superseded = [mid for mid, _ in plan.supersede]
    if plan.memories or superseded:
        await storage.supersede_memories(op.namespace, superseded, now, plan.memories)
    refreshed = await _refresh(storage, op.namespace, plan.refresh)
    return {"stored": [m.public() for m in plan.memories], "superseded_ids": superseded,
            "refreshed_ids": refreshed, "decision": decision}


async def _refresh(storage: Storage, namespace: str,
                   refresh: Sequence[tuple[str, float]]) -> list[str]:
    """A re-stated memory keeps the higher importance (complete_job's refresh, minus the
    last_accessed_at touch, which Storage has no method for outside complete_job)."""
    wanted: dict[str, float] = {}
    for mid, importance in refresh:
        wanted[mid] = max(importance, wanted.get(mid, 0.0))
    rows = await storage.get_memories(namespace, list(wanted))
    await storage.update_importance([(namespace, m.id, wanted[m.id]) for m in rows
                                     if wanted[m.id] > m.importance])
    return [m.id for m in rows]


def _whole(value: Any) -> Any:
    # JSON numbers in an A2A data part arrive as doubles: 5 becomes 5.0.
    return int(value) if isinstance(value, float) and value.is_integer() else value


async def search(service: MemoryService, namespace: str, args: dict[str, Any]) -> dict[str, Any]:
    kwargs = {k: args[k] for k in SEARCH_PARAMS if args.get(k) is not None}
    for k in ("limit", "max_tokens"):
        if k in kwargs:
            kwargs[k] = _whole(kwargs[k])
    return await service.search(namespace, args.get("query"), **kwargs)
