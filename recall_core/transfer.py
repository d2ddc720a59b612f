"""Bulk import and export of memories as JSON lines.

One object per line: `text` (required) and optional `topic`, `type`, `importance`,
`created_at` (ISO 8601), `entity`, `attribute`, `value`, `session_id`, `agent_id`; export adds
`id`. A verbatim import validates the whole file first (a bad line is reported with its number
and nothing is written), embeds when an embedder is available, and inserts in one transaction.
An extracting import queues each line as a store operation keyed by its content, so running it
again after an interruption resumes instead of duplicating.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .context import attach_context, embed_in_context
from .models import Memory, MemoryType, Operation
from .protocols import Embedder, Storage

EXPORT_KEYS = ("id", "text", "topic", "type", "importance", "created_at", "entity", "attribute",
               "value", "session_id", "agent_id")


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

    @field_validator("text")
    @classmethod
    def _non_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is blank")
        return v

    @field_validator("created_at")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        if v is not None and v.tzinfo is None:
            v = v.replace(tzinfo=timezone.utc)
        return v


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
    # The decay clock restarts at import: an exported importance is already decayed, and
    # decaying it again from the old created_at would count the same time twice.
    return Memory(namespace=namespace, **{**data, "created_at": created, "valid_from": created,
                                          "last_accessed_at": now})


async def import_verbatim(storage: Storage, namespace: str, rows: list[tuple[int, ImportLine]],
                          embedder: Embedder | None = None, keep_ids: bool = False,
                          progress: Callable[[int], None] | None = None,
                          batch: int = 256) -> int:
    memories = [to_memory(namespace, line, keep_ids) for _, line in rows]
    if keep_ids:
        existing = {m.id for m in await storage.get_memories(namespace, [m.id for m in memories])}
        memories = [m for m in memories if m.id not in existing]  # resume: skip what is there
    await attach_context(storage, namespace, memories)
    if embedder is not None:
        last: dict[str, Any] = {}  # session context carried across batches, in file order
        for start in range(0, len(memories), batch):
            chunk = memories[start:start + batch]
            await embed_in_context(embedder, storage, namespace, chunk, last)
            if progress:
                progress(len(chunk))
    await storage.insert_memories(memories)
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
    data: dict[str, Any] = {"id": m.id, "text": m.text, "topic": m.topic, "type": m.type,
                            "importance": m.importance, "created_at": m.created_at.isoformat()}
    for key in ("entity", "attribute", "value", "session_id", "agent_id"):
        val = getattr(m, key)
        if val is not None:
            data[key] = val
    return json.dumps(data, ensure_ascii=False)


async def export_lines(storage: Storage, namespace: str) -> AsyncIterator[str]:
    async for m in storage.iter_memories(namespace):
        yield export_line(m)
