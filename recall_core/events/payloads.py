"""The events core emits, built where the change happens and written in its transaction
(`WriteTx.emit`). Payloads carry ids and metadata, never memory text: `texts` is offered
separately and stored only for subscriptions that asked for it (`include_text`); a forget
never offers text, an erase never carries any."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..contracts import OutboxEvent, new_id
from ..models import Memory, Operation, utcnow


def extraction_completed(op: Operation, result: dict[str, Any], stored: Sequence[Memory]
                         ) -> OutboxEvent:
    return OutboxEvent(new_id("evt"), op.namespace, "extraction.completed", {
        "job_id": op.id, "idempotency_key": op.idempotency_key,
        "memory_ids": list(result.get("memory_ids", [])),
        "superseded_ids": list(result.get("superseded_ids", [])),
        "refreshed_ids": list(result.get("refreshed_ids", []))}, utcnow(),
        {m.id: m.text for m in stored} or None)


def superseded(namespace: str, ends: Sequence[tuple[str, datetime, str | None]]
               ) -> list[OutboxEvent]:
    """One event per value the fact model ended."""
    return [OutboxEvent(new_id("evt"), namespace, "memory.superseded", {
        "memory_id": mid, "superseded_by": by, "valid_until": at.isoformat()}, utcnow())
        for mid, at, by in ends]


def deleted(namespace: str, memory_id: str, forgotten_ids: Sequence[str]) -> OutboxEvent:
    return OutboxEvent(new_id("evt"), namespace, "memory.deleted", {
        "memory_id": memory_id, "forgotten_ids": list(forgotten_ids)}, utcnow())


def erased(namespace: str) -> OutboxEvent:
    at = utcnow()
    return OutboxEvent(new_id("evt"), namespace, "namespace.erased", {
        "erased_at": at.isoformat()}, at)
