"""What the admin API and the inspector need from storage, beyond `recall_core.contracts.storage.Storage`.

An optional capability (`AdminStorage`): both bundled backends implement it, and
`recall_core.testing.admin_contract.AdminStorageContract` checks it on a real database. Admin
tokens live in their own table, never in api_tokens, so `namespace_for_token` (MCP, A2A) can
never accept one, and a namespace token is never found by `admin_for_token`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, field_validator

from ..access.principal import SCOPE_ORDER, parse_scopes

from ..models import Memory, Operation, utcnow

MemoryState = Literal["active", "superseded", "all"]


class MemoryFilter(BaseModel):
    """Filters of the inspector's memory list; every given field must match (AND)."""

    type: str | None = None
    topic: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    state: MemoryState = "active"
    #: Case-insensitive substring of the text.
    text: str | None = None
    memory_id: str | None = None
    source_job_id: str | None = None


class AgentSummary(BaseModel):
    """An agent's private memories in its owner's namespace (`access.partitions`)."""

    agent: str
    active_memories: int = 0
    queued_jobs: int = 0
    failed_jobs: int = 0


class NamespaceSummary(BaseModel):
    namespace: str
    active_memories: int = 0
    superseded_memories: int = 0
    active_tokens: int = 0
    queued_jobs: int = 0
    failed_jobs: int = 0
    #: Newest of: a memory written or read, a job queued, a token created.
    last_activity: datetime | None = None
    #: Agents with private memories here (filled in by core, not by storage); the counts
    #: above are the shared memories'.
    agents: list[AgentSummary] = []


class TokenInfo(BaseModel):
    #: The first 16 hex digits of the token's SHA-256: names a token without revealing it.
    token_id: str
    namespace: str
    created_at: datetime
    revoked_at: datetime | None = None
    #: The agent the token is bound to inside its namespace; None: the namespace's owner.
    agent: str | None = None
    #: What it may do (memory:read, memory:write, memory:forget). A backend may pass the
    #: stored column as it is: NULL (a token made before scopes existed: all of them) or
    #: the space-separated text.
    scopes: list[str] = Field(default_factory=lambda: list(SCOPE_ORDER))

    @field_validator("scopes", mode="before")
    @classmethod
    def _stored_scopes(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            granted = parse_scopes(value)
            return [s for s in SCOPE_ORDER if s in granted]
        return value


class AdminAction(BaseModel):
    """One audit row: who did what to which namespace, when, and how it ended."""

    id: int | None = None
    at: datetime = Field(default_factory=utcnow)
    actor: str
    action: str
    namespace: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    result: Literal["ok", "error"] = "ok"
    error: str | None = None


TOKEN_ID_LEN = 16


def token_id(token_hash: str) -> str:
    return token_hash[:TOKEN_ID_LEN]


class RetrievalHit(BaseModel):
    """A search call that returned a memory (`AdminStorage.calls_returning`)."""

    call_id: str
    tool: str
    at: datetime
    rank: int  # 1 = the first result
    score: float


class CallResults(BaseModel):
    """One audited tool call and the memories it returned, best first
    (`AdminStorage.call_results`). `inputs_hash` is the hash of its arguments, never the
    query."""

    call_id: str
    tool: str
    status: str
    code: str | None = None
    at: datetime
    duration_ms: float
    inputs_hash: str
    returned: list[tuple[str, float]]  # (memory id, score)


@runtime_checkable
class AdminStorage(Protocol):
    # -- admin tokens (own table: never valid as namespace tokens) ------------------------
    async def create_admin_token(self, token_hash: str, name: str) -> None: ...

    async def admin_for_token(self, token_hash: str) -> str | None:
        """The name of an unrevoked admin token, else None."""

    async def revoke_admin_token(self, token_hash: str) -> bool: ...

    # -- namespaces and their tokens ------------------------------------------------------
    async def list_namespaces(self, limit: int, offset: int) -> tuple[list[NamespaceSummary], int]:
        """Every namespace that has memories, jobs or tokens (revoked ones too), by name;
        and how many there are."""

    async def list_tokens(self, namespace: str) -> list[TokenInfo]:
        """The namespace's tokens, revoked ones included, newest first."""

    async def revoke_token_id(self, namespace: str, token_id: str) -> bool:
        """Revoke the namespace's unrevoked token whose hash starts with `token_id`."""

    # -- memories and jobs, for inspection -------------------------------------------------
    async def query_memories(self, namespace: str, where: MemoryFilter, limit: int,
                             offset: int) -> tuple[list[Memory], int]:
        """Memories matching `where` (superseded ones too when asked), newest first, and
        their total count."""

    async def list_jobs(self, namespace: str | None, statuses: Sequence[str], limit: int,
                        offset: int) -> tuple[list[Operation], int]:
        """Jobs in any of `statuses` (all namespaces when None), newest first, and their count."""

    async def retry_job(self, namespace: str | None, job_id: str) -> bool:
        """A failed job back to queued with attempts 0 (its last error stays until it
        succeeds). False when no failed job has that id (in that namespace, when given)."""

    # -- audit ----------------------------------------------------------------------------
    async def record_admin_action(self, action: AdminAction) -> None: ...

    async def list_admin_actions(self, limit: int, offset: int) -> tuple[list[AdminAction], int]:
        """Newest first. delete_namespace never erases these rows."""

    async def calls_returning(self, namespace: str, memory_id: str, limit: int
                              ) -> list[RetrievalHit]:
        """The namespace's most recent audited searches that returned `memory_id`, newest
        first (the retrieval audit: "why did my agent say that?")."""

    async def call_results(self, namespace: str, call_id: str) -> CallResults | None:
        """One audited call of the namespace and what it returned, None if there is none."""

    async def anonymise_admin_actions(self, namespace: str, replacement: str) -> int:
        """After an erase: rows naming `namespace` (as their namespace, in their error text,
        or as the actor `namespace:<name>`) name `replacement` instead. Returns how many rows
        changed."""
