"""Row shapes that storage methods return or take beyond the models: decay candidates,
vectors to re-embed, and the keys and pages of A2A tasks."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple


class DecayRow(NamedTuple):
    """What the decay job reads about one active memory (`Storage.decay_candidates`)."""

    namespace: str
    id: str
    #: The importance before any decay: as last written by an insert, a re-statement
    #: (complete_job's refresh) or update_importance. apply_decay never changes it.
    base_importance: float
    #: The importance the tools see now (base, or what apply_decay last wrote).
    importance: float
    created_at: datetime
    last_accessed_at: datetime | None
    access_count: int


class TokenGrant(NamedTuple):
    """What a live namespace token opens (`TokenStore.grant_for_token`): its namespace, the
    agent it is bound to (None: the owner) and its scopes as stored (space-separated; None
    for a token made before scopes existed, which has all of them)."""

    namespace: str
    agent: str | None = None
    scopes: str | None = None


class VectorToRedo(NamedTuple):
    """A stored vector made by another embedding model (`EmbeddingModels.embeddings_to_redo`)."""

    seq: int  # the storage's insertion order: pass the last one as `after` for the next page
    namespace: str
    id: str
    text: str
    session_id: str | None


class TaskKeys(NamedTuple):
    """What storage keeps beside an A2A task's document so ListTasks filters, orders and
    pages in the database (`Records.save_task`). Core fills it from the task."""

    context_id: str = ""
    #: The state's enum name, e.g. "TASK_STATE_COMPLETED".
    state: str = ""
    #: The status timestamp in nanoseconds since the epoch (int64); None when it has none.
    status_ns: int | None = None


class TaskQuery(NamedTuple):
    """One page of `Records.list_tasks`. Every field narrows or positions the page."""

    context_id: str | None = None
    state: str | None = None
    #: Only tasks whose status_ns is at least this (tasks without one are left out).
    status_ns_from: int | None = None
    #: The position after which the page starts: (status_ns, task_id) of the last task of
    #: the previous page, exactly as `TaskRow` gave it.
    after: tuple[int | None, str] | None = None
    limit: int = 50


class TaskRow(NamedTuple):
    task_id: str
    status_ns: int | None
    data: dict[str, Any]


class TaskPage(NamedTuple):
    rows: list[TaskRow]
    #: How many tasks match the query's filters, on every page (position and limit ignored).
    total: int


#: The namespace of a token row kept after its namespace was erased: "" is never a namespace
#: (tokens are created for non-empty names only), so the row names nothing.
ERASED_TOKEN_NAMESPACE = ""


class Erased(NamedTuple):
    """What `Storage.delete_namespace` removed: the receipt of an erase is built from it."""

    #: memory rows deleted, current and history
    memories: int
    #: tokens that still opened the namespace and no longer do
    tokens_revoked: int
    #: rows that named the namespace, per table: deleted, or (api_tokens) stripped of the
    #: name and kept by hash only, revoked, so the token keeps answering 401 and its hash can
    #: never be registered again. Table names are the backend's own.
    tables: dict[str, int]
