"""Data shapes shared by core and every plugin.

Plain pydantic models, no behaviour: storage plugins persist them, rankers and extractors
produce or read them, the service turns them into tool results.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

MemoryType = Literal["preference", "fact", "decision", "procedure"]
MEMORY_TYPES: tuple[str, ...] = ("preference", "fact", "decision", "procedure")
JobStatus = Literal["queued", "running", "done", "failed"]


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def new_id() -> str:
    return str(uuid.uuid4())


class Memory(BaseModel):
    """One stored memory row. Active while `valid_until` is None."""

    id: str = Field(default_factory=new_id)
    namespace: str
    text: str
    topic: str = ""
    type: MemoryType = "fact"
    entity: str | None = None
    attribute: str | None = None
    value: str | None = None
    importance: float = 0.5
    valid_from: datetime = Field(default_factory=utcnow)
    valid_until: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    last_accessed_at: datetime | None = None
    access_count: int = 0
    session_id: str | None = None
    agent_id: str | None = None
    source_job_id: str | None = None
    #: The importance decay starts from (None: `importance` is undecayed and is the base).
    base_importance: float | None = None
    #: For a superseded row: the id of the row that replaced it (None while active, and for
    #: rows ended without a successor, e.g. by consolidation of a keyless group).
    superseded_by: str | None = None
    #: Decay never lowers a pinned memory's importance.
    pinned: bool = False
    # Dense vector, when an embedder produced one; storage decides how to keep it.
    embedding: list[float] | None = None
    #: Which embedding model made `embedding` (the embedder's `model_id`); storage keeps it
    #: per vector so search never compares vectors of two models (`recall reindex`).
    embedding_model: str | None = None
    # What was said just before in the same session, set at write time. A retrieval aid the
    # full-text index weighs low (a turn is found by the question it answers); storage keeps
    # it but reads need not return it, and tools never show it.
    context: str | None = None

    @property
    def active(self) -> bool:
        return self.valid_until is None

    def public(self) -> dict[str, Any]:
        """The shape tools return: never namespace, never the vector, optional keys only when set."""
        out: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "topic": self.topic,
            "type": self.type,
            "importance": round(self.importance, 4),
            "created_at": self.created_at.isoformat(),
        }
        for key in ("entity", "attribute", "value", "session_id", "agent_id"):
            val = getattr(self, key)
            if val is not None:
                out[key] = val
        if self.pinned:
            out["pinned"] = True
        return out

    @property
    def key(self) -> tuple[str, str] | None:
        """The (entity, attribute) fact key, when the memory states a fact."""
        if self.entity and self.attribute and self.value is not None:
            return self.entity, self.attribute
        return None


class Operation(BaseModel):
    """A store request: the idempotency record and the durable queue entry at once."""

    id: str = Field(default_factory=new_id)
    namespace: str
    idempotency_key: str
    kind: str = "extract"
    status: JobStatus = "queued"
    attempts: int = 0
    payload: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    lease_until: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None


class ExtractedMemory(BaseModel):
    """What an extractor returns for one piece of text (before ids and namespace exist)."""

    text: str
    type: MemoryType = "fact"
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    entity: str | None = None
    attribute: str | None = None
    value: str | None = None
    #: Ids of current memories stating no fact that said an earlier value of this memory's
    #: single-valued fact (`Extractor.reads_statements`): ended when this one is written.
    replaces: list[str] = Field(default_factory=list, max_length=8)


class Returned(BaseModel):
    """One memory a search returned to its caller: the retrieval audit (which memories an
    agent was given, in which order, with which score), never the query's text."""

    id: str
    score: float


class ToolCallRecord(BaseModel):
    tool: str
    namespace: str | None
    inputs_hash: str
    status: Literal["ok", "error"]
    code: str | None = None
    duration_ms: float
    at: datetime = Field(default_factory=utcnow)
    #: Names the call in the retrieval audit (a search's returned memories point at it).
    call_id: str = Field(default_factory=new_id)
    #: What a search returned, best first (empty for other tools and failed calls).
    returned: list[Returned] = Field(default_factory=list)


class ScoredId(BaseModel):
    """One ranker hit: a memory id and the ranker's own score (higher is better)."""

    id: str
    score: float


def exhausted_message(attempts: int) -> str:
    """The error a job gets when its lease expired on its last allowed attempt (the worker
    died or hung while running it, every time)."""
    return (f"Gave up after {attempts} attempt(s): each ended with the worker's lease expiring "
            f"(the process died, was killed, or the extraction hung past worker.lease_seconds). "
            f"Store the text again, in smaller pieces if it is long.")
