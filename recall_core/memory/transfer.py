"""Bulk import and export of memories as JSON lines.

One object per line: `text` (required) and optional `topic`, `type`, `importance`,
`created_at` (ISO 8601), `entity`, `attribute`, `value`, `session_id`, `agent_id`.

Export writes every row by default, current and history, with the fields that make a round
trip exact: `id`, `valid_from`, `valid_until`, `superseded_by`, `base_importance` (the
undecayed importance), `last_accessed_at`, `access_count`, `pinned`. Importing such a line
(it has `valid_from`) restores the row exactly. A plain line (no `valid_from`) is a statement
made at its `created_at`: its triple is normalised and placed in the fact timeline by the same
rules as the worker (`facts.py`), so a contradiction supersedes or becomes history.

A verbatim import validates the whole file first (a bad line is reported with its number and
nothing is written), embeds when an embedder is available, and writes in one transaction.
An extracting import queues each line as a store operation keyed by its content, so running it
again after an interruption resumes instead of duplicating.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, ValidationError, ValidationInfo,
                      field_validator)

from . import facts, validation as v, writes
from .session_context import attach_context, embed_in_context
from ..models import Memory, MemoryType, Operation, new_id
from ..contracts import Embedder, Storage
from ..kit import representable
from ..access.partitions import AGENT_PATTERN, partition, split, visibility_of
from ..access.principal import MAX_AGENT_LEN

#: A verbatim import of at least this many rows without fact statements takes the bulk path.
OPTIMIZE_BULK = 5000

#: Longest value a line's field may have (the tools' limits for the same fields; a fact's key
#: and value are indexed, and a PostgreSQL index entry holds at most ~2.7 kB).
LINE_LIMITS = {**dict.fromkeys(("id", "superseded_by", "session_id", "agent_id"),
                              v.MAX_ID_CHARS),
               **dict.fromkeys(("entity", "attribute"), representable.MAX_KEY_CHARS),
               "topic": v.MAX_TOPIC_CHARS, "value": v.MAX_VALUE_CHARS}

EXPORT_KEYS = ("id", "text", "topic", "type", "importance", "created_at", "entity", "attribute",
               "value", "session_id", "agent_id", "valid_from", "valid_until", "superseded_by",
               "base_importance", "last_accessed_at", "access_count", "pinned")


class ImportLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    text: str
    topic: str = ""
    type: MemoryType = "fact"
    importance: float = Field(0.5, ge=0.0, le=1.0)
    created_at: datetime | None = None
    entity: str | None = None
    attribute: str | None = None
    value: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    # Full-row fields (written by export): present -> the row is restored exactly.
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    superseded_by: str | None = None
    base_importance: float | None = Field(None, ge=0.0, le=1.0)
    last_accessed_at: datetime | None = None
    # Postgres keeps access_count in a 32-bit integer.
    access_count: int = Field(0, ge=0, le=2**31 - 1)
    # Strict: the schema (and the admin API's OpenAPI document) says boolean, and a lax bool
    # took `"pinned": 0` or `"pinned": "no"` as a value.
    pinned: StrictBool = False
    # Whose it is (`access.partitions`): `private_to` names the agent a private memory
    # belongs to (absent: shared). `visibility` is what export writes beside it, for the
    # reader; the partition follows private_to.
    visibility: Literal["private", "shared"] | None = None
    private_to: str | None = Field(None, pattern=AGENT_PATTERN, max_length=MAX_AGENT_LEN)

    @property
    def exact(self) -> bool:
        return self.valid_from is not None

    def space(self, namespace: str) -> str:
        """The storage namespace the line goes to in `namespace`."""
        return partition(namespace, self.private_to)

    @field_validator("text")
    @classmethod
    def _non_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is blank")
        return v

    @field_validator("id", "text", "topic", "entity", "attribute", "value", "session_id",
                     "agent_id", "superseded_by")
    @classmethod
    def _storable(cls, v: str | None, info: ValidationInfo) -> str | None:
        # The one rule (kit.representable): no NUL (PostgreSQL refuses it), no lone surrogate
        # (JSON may escape one, \ud800, which no database can store), and the lengths the
        # tools accept for the same fields (a key or id beyond them cannot be indexed).
        if v is not None:
            name = info.field_name or "value"
            representable.text(v, name, LINE_LIMITS.get(name))
        return v

    @field_validator("importance", "base_importance", "access_count", "created_at",
                     "valid_from", "valid_until", "last_accessed_at", mode="before")
    @classmethod
    def _json_type(cls, v: Any, info: ValidationInfo) -> Any:
        # The JSON type the schema gives, before pydantic's lax conversions: those took
        # `true` as the number 1 and `0` as a time (1970-01-01), which the admin API's
        # OpenAPI document (and any client generated from it) says are invalid.
        if info.field_name in ("importance", "base_importance", "access_count"):
            kinds, expected = (int, float), "a number"
        else:
            kinds, expected = (str, datetime), "an ISO 8601 time string"
        if v is not None and (isinstance(v, bool) or not isinstance(v, kinds)):
            raise ValueError(f"expected {expected}, got {json.dumps(v, default=str)[:40]}")
        return v

    @field_validator("created_at", "valid_from", "valid_until", "last_accessed_at")
    @classmethod
    def _aware(cls, v: datetime | None, info: ValidationInfo) -> datetime | None:
        if v is None:
            return v
        # stored as UTC, within what every backend stores and reads back (kit.representable)
        return representable.instant(v, info.field_name or "time")


class MalformedLine(ValueError):
    """A malformed line; the message names the line number."""


def parse_lines(lines: Iterable[str]) -> list[tuple[int, ImportLine]]:
    out = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise MalformedLine(f"line {number}: not valid JSON ({exc.msg}). Nothing was imported.") from None
        if not isinstance(obj, dict):
            raise MalformedLine(f"line {number}: expected a JSON object, got {type(obj).__name__}. Nothing was imported.")
        problem = representable.json_problem(obj, "")  # the one rule, as the admin API's
        if problem:
            raise MalformedLine(f"line {number}: {problem} Nothing was imported.")
        try:
            out.append((number, ImportLine.model_validate(obj)))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors())
            raise MalformedLine(f"line {number}: {problems}. Nothing was imported.") from None
    return out


def to_memory(namespace: str, line: ImportLine, keep_id: bool) -> Memory:
    data = line.model_dump(exclude_none=True)
    if not keep_id:
        data.pop("id", None)
    now = datetime.now(timezone.utc)
    created = line.created_at or now
    if line.exact:  # a full exported row: as it was, its key spelt as every key is
        return facts.respell_key(Memory(namespace=namespace, **{**data, "created_at": created}))
    # A plain line: the decay clock restarts at import (an importance from elsewhere may be
    # decayed already, and decaying it again from the old created_at would count twice).
    return facts.normalise(Memory(namespace=namespace, **{
        **data, "created_at": created, "valid_from": created, "last_accessed_at": now}))


async def import_verbatim(storage: Storage, namespace: str, rows: list[tuple[int, ImportLine]],
                          embedder: Embedder | None = None, keep_ids: bool = False,
                          progress: Callable[[int], None] | None = None,
                          batch: int = 256) -> int:
    """Write the lines; returns how many rows were written. Raises StorageConflict (nothing
    written) when a kept id exists elsewhere or a full row would be a second current value."""
    pairs = [(to_memory(namespace, line, True), line.exact) for _, line in rows]
    if not keep_ids:  # new ids, and the history links between the file's rows follow them
        renamed = {}
        for m, _ in pairs:
            renamed[m.id] = m.id = new_id()
        for m, _ in pairs:
            m.superseded_by = renamed.get(m.superseded_by, m.superseded_by) if m.superseded_by else None
    if keep_ids or any(exact for _, exact in pairs):
        async with storage.write(namespace) as tx:  # resume: skip rows already there
            ids = [m.id for m, _ in pairs]
            have = {m.id for m in await tx.current(ids)}
        pairs = [(m, exact) for m, exact in pairs if m.id not in have]
    memories = [m for m, _ in pairs]
    await attach_context(storage, namespace, [m for m in memories if m.valid_until is None])
    if embedder is not None:
        last: dict[str, Any] = {}  # session context carried across batches, in file order
        for start in range(0, len(memories), batch):
            chunk = memories[start:start + batch]
            await embed_in_context(embedder, storage, namespace, chunk, last)
            if progress:
                progress(len(chunk))
    exact = [m for m, is_exact in pairs if is_exact]
    plain = [m for m, is_exact in pairs if not is_exact]
    keyed = sorted((m for m in plain if m.key is not None), key=lambda m: m.valid_from)
    keyless = [m for m in plain if m.key is None]
    keys = sorted({m.key for m in [*keyed, *exact] if m.key is not None})
    if len(keyless) + len(exact) >= OPTIMIZE_BULK and not keyed:
        await storage.insert_memories([*exact, *keyless])  # the bulk path (index merge after)
    else:
        async def body(tx: Any) -> None:
            await tx.insert([*exact, *keyless])
            for m in keyed:  # one statement at a time, in the order they were said
                m = m.model_copy()  # planning sets validity fields; a re-run starts clean
                await writes.apply(tx, facts.plan(await tx.timeline([m.key]), [m], m.valid_from),
                                   m.valid_from)

        await writes.transaction(storage, namespace, keys, body)
    if progress and embedder is None:
        progress(len(memories))
    return len(memories)


def content_key(line: ImportLine) -> str:
    raw = json.dumps(line.model_dump(mode="json", exclude_none=True), sort_keys=True)
    return "import:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


async def import_extract(storage: Storage, namespace: str, rows: list[tuple[int, ImportLine]],
                         progress: Callable[[int], None] | None = None) -> tuple[int, int]:
    """Queue each line as a store operation. Returns (queued, already queued before)."""
    queued = cached = 0
    for _, line in rows:
        payload = {"text": line.text, "topic": line.topic, "session_id": line.session_id,
                   "agent_id": line.agent_id}
        op = Operation(namespace=namespace, idempotency_key=content_key(line), payload=payload)
        if line.created_at is not None:
            op.created_at = line.created_at
        _, created = await storage.enqueue(op)
        queued += created
        cached += not created
        if progress:
            progress(1)
    return queued, cached


def export_line(m: Memory) -> str:
    agent = split(m.namespace)[1]
    data: dict[str, Any] = {"id": m.id, "text": m.text, "topic": m.topic, "type": m.type,
                            "importance": m.importance, "created_at": m.created_at.isoformat(),
                            "valid_from": m.valid_from.isoformat(),
                            "valid_until": m.valid_until.isoformat() if m.valid_until else None,
                            "base_importance": m.base_importance
                            if m.base_importance is not None else m.importance,
                            "access_count": m.access_count}
    for key in ("entity", "attribute", "value", "session_id", "agent_id", "superseded_by"):
        val = getattr(m, key)
        if val is not None:
            data[key] = val
    if m.last_accessed_at is not None:
        data["last_accessed_at"] = m.last_accessed_at.isoformat()
    if m.pinned:
        data["pinned"] = True
    data["visibility"] = visibility_of(m.namespace)
    if agent is not None:
        data["private_to"] = agent
    return json.dumps(data, ensure_ascii=False)


async def export_lines(storage: Storage, namespace: str, active_only: bool = False
                       ) -> AsyncIterator[str]:
    """The namespace's memories, then each agent's private ones (every line says whose)."""
    for space in [namespace, *await storage.list_partitions(namespace)]:
        async for m in storage.iter_memories(space, active_only=active_only):
            yield export_line(m)


def by_space(namespace: str, rows: list[tuple[int, ImportLine]]
             ) -> dict[str, list[tuple[int, ImportLine]]]:
    """Import lines grouped by the storage namespace they go to (shared first)."""
    out: dict[str, list[tuple[int, ImportLine]]] = {namespace: []}
    for n, line in rows:
        out.setdefault(line.space(namespace), []).append((n, line))
    return {space: group for space, group in out.items() if group}
