"""Row <-> model conversion. Timestamps are timestamptz and come back aware in UTC."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from recall_core import Memory, Operation
from recall_core.kit.representable import stored_instant
from recall_core.kit.text import fold

MEMORY_COLUMNS = (
    "id, namespace, text, topic, type, entity, attribute, value, importance, valid_from, "
    "valid_until, created_at, last_accessed_at, access_count, session_id, agent_id, source_job_id, "
    "base_importance, superseded_by, pinned")

OPERATION_COLUMNS = (
    "id, namespace, idempotency_key, kind, status, attempts, payload, error, lease_until, "
    "created_at, finished_at")


# The namespace test of statements that also look rows up by a list of ids. A prepared
# statement soon runs a generic plan, which knows neither the namespace nor the ids and takes
# `namespace = $1` for as selective as an average namespace: with one big namespace among
# many small ones it walks the namespace index, i.e. the whole big namespace, for every
# lookup (measured at 100k + 20k tiny namespaces: get_memories of 100 ids 215-450 ms instead
# of ~1.5 ms). Compared under "C" (the same answer for equality) no index can serve the
# namespace test, so the primary key serves the ids and the namespace filters them.
IN_NAMESPACE = 'namespace = $1 COLLATE "C"'


# The current rows of a namespace among a list of ids ($1 namespace, $2 ids).
CURRENT_BY_IDS = (f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ANY($2::text[]) "
                  f"AND {IN_NAMESPACE} AND valid_until IS NULL")


def aware(dt: datetime | None) -> datetime | None:
    """Naive datetimes are taken as UTC (asyncpg would read them as local time)."""
    if dt is not None and dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt


def utc(dt: datetime | None) -> datetime | None:
    # Not `dt.astimezone`: asyncpg reads -infinity/infinity (what it writes for Python's first
    # and last instants, which an older version accepted) as naive datetime.min/max, and a
    # naive time's astimezone is local time, out of range at either end.
    return stored_instant(dt)


def memory_from_row(row: Any, embedding: list[float] | None = None) -> Memory:
    return Memory(
        id=row["id"], namespace=row["namespace"], text=row["text"], topic=row["topic"],
        type=row["type"], entity=row["entity"], attribute=row["attribute"], value=row["value"],
        importance=row["importance"], valid_from=utc(row["valid_from"]),
        valid_until=utc(row["valid_until"]), created_at=utc(row["created_at"]),
        last_accessed_at=utc(row["last_accessed_at"]), access_count=row["access_count"],
        session_id=row["session_id"], agent_id=row["agent_id"],
        source_job_id=row["source_job_id"], base_importance=row["base_importance"],
        superseded_by=row["superseded_by"], pinned=row["pinned"], embedding=embedding)


def operation_from_row(row: Any) -> Operation:
    return Operation(
        id=row["id"], namespace=row["namespace"], idempotency_key=row["idempotency_key"],
        kind=row["kind"], status=row["status"], attempts=row["attempts"],
        payload=row["payload"], error=row["error"], lease_until=utc(row["lease_until"]),
        created_at=utc(row["created_at"]), finished_at=utc(row["finished_at"]))


def search_text(text: str) -> str:
    """What the tsvector indexes: the text as core normalises queries (see migrations.py)."""
    return fold(text)


def memory_params(m: Memory, embedding: Any) -> tuple[Any, ...]:
    return (m.id, m.namespace, m.text, m.topic, m.type, m.entity, m.attribute, m.value,
            float(m.importance), aware(m.valid_from), aware(m.valid_until), aware(m.created_at),
            aware(m.last_accessed_at), m.access_count, m.session_id, m.agent_id,
            m.source_job_id, m.base_importance, m.superseded_by, bool(m.pinned), embedding,
            search_text(m.text), search_text(m.context) if m.context else None,
            m.embedding_model if embedding is not None else None)


INSERT_MEMORY = (
    f"INSERT INTO memories ({MEMORY_COLUMNS}, embedding, search_text, search_context, "
    f"embedding_model) VALUES ({', '.join(f'${i}' for i in range(1, 25))})")
