"""What the MCP tools take and answer, as a model reads it in `tools/list`.

Parameters are typed and described (`Annotated[..., Field(...)]`) with their ranges; each
tool's output schema is the envelope around its own data model. MemoryService still checks
every value (the A2A skills and the CLI call it without this layer), so the two must agree:
the ranges here are the service's (recall_core/validation.py).

Data models allow extra keys: a plugin or a later version may add a field without breaking a
client that validates results against the schema (MCP clients do).
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ...errors import RecallError
from ...memory.erase import EraseReceipt
from ...memory.validation import MAX_ID_CHARS, MAX_OFFSET, MAX_TOPIC_CHARS

T = TypeVar("T")

# -- parameters ------------------------------------------------------------------------------
Text = Annotated[str, Field(
    min_length=1,
    description="What to remember: raw conversation text or a statement, e.g. \"I prefer dark "
                "mode\". Not blank; at most the server's limits.max_text_bytes (256 KiB by "
                "default) as UTF-8.")]
Topic = Annotated[str, Field(
    max_length=MAX_TOPIC_CHARS,
    description="Short label grouping related memories, e.g. \"editor\" or \"project-x\"; "
                "empty for none.")]
IdempotencyKey = Annotated[str | None, Field(
    max_length=MAX_ID_CHARS,
    description="Any string unique to this piece of content. Resend the same key when retrying "
                "so nothing is stored twice; omit it and every call is a new store.")]
SessionId = Annotated[str | None, Field(
    max_length=MAX_ID_CHARS,
    description="The conversation this text comes from; memories of one session are searched "
                "together with what was said around them.")]
AgentId = Annotated[str | None, Field(
    max_length=MAX_ID_CHARS,
    description="Which agent is storing this, when several share one user's memory.")]
Visibility = Annotated[Literal["private", "shared"] | None, Field(
    description="Who may read it: \"private\" (only the agent whose credential stores it) or "
                "\"shared\" (the owner and every agent of the namespace). Omit it for the "
                "default: private for an agent's credential, shared for the owner's (the "
                "owner can only store shared).")]
SaidAt = Annotated[str | None, Field(
    max_length=64,
    description="When the text was said, if not now: ISO 8601, e.g. \"2023-05-08T13:56:00Z\" "
                "or \"2023-05-08\" (the start of that day, UTC); not in the future, not before "
                "0001-01-02 UTC. Pass it "
                "when replaying an earlier conversation, so its memories are dated when they "
                "were said (a statement older than the current value becomes history, and "
                "searches naming a time find it). Omit it for what is said now.")]
Query = Annotated[str, Field(
    min_length=1,
    description="What you want to know, in words, e.g. \"which editor does the user prefer?\". "
                "Not blank; to list memories without a query use inspect_memories.")]
RecencyWeight = Annotated[float, Field(
    ge=0.0, le=1.0, allow_inf_nan=False,
    description="0..1: how much newer memories are favoured (0 = not at all).")]
MmrLambda = Annotated[float, Field(
    ge=0.0, le=1.0, allow_inf_nan=False,
    description="0..1: relevance (1.0) against diversity (lower drops near-paraphrases).")]
ScoreThreshold = Annotated[float, Field(
    ge=0.0, le=1.0, allow_inf_nan=False,
    description="0..1: drop results scoring below this. 0 keeps every result; 0.25 drops the "
                "results of gibberish or unrelated queries while keeping nearly all real "
                "answers.")]
MaxTokens = Annotated[int | None, Field(
    ge=1, le=2**31 - 1,
    description="Cap on the total text returned, in tokens (about 4 characters each); omit "
                "for no cap. Results past the cap are left out and data.truncated is true.")]
AsOf = Annotated[str | None, Field(
    max_length=64,
    description="ISO 8601 date or time to search the past: answers from the memories valid "
                "then, including values superseded since, e.g. \"2026-03-31\" (a bare date "
                "is the end of that day, UTC) or \"2026-03-15T09:30:00Z\", from 0001-01-02 "
                "to 9999-12-30 UTC. Omit to search what is true now.")]
Offset = Annotated[int, Field(
    ge=0, le=MAX_OFFSET,
    description="How many memories to skip: 0 for the first page, then next_offset.")]
MemoryId = Annotated[str, Field(
    min_length=1, max_length=MAX_ID_CHARS,
    description="The id of a memory, from search_memories or inspect_memories results.")]
SimilarityThreshold = Annotated[float, Field(
    ge=0.0, le=1.0, allow_inf_nan=False,
    description="0..1: how similar in meaning memories must be to merge (higher merges less).")]
DryRun = Annotated[bool, Field(
    description="true: only report what would be merged; nothing changes.")]
Confirm = Annotated[str, Field(
    description="Must be exactly \"DELETE MY DATA\"; anything else erases nothing.")]


def limit_param(cap: int, default: int = 20) -> Any:
    """`limit`, advertising the server's page cap. A larger value is lowered to the cap (as
    documented) rather than refused, so the maximum is shown but not enforced."""
    return Annotated[int, Field(
        ge=1, json_schema_extra={"maximum": cap},
        description=f"How many results to return, 1..{cap} (larger values are lowered to {cap}).")]


# -- results ---------------------------------------------------------------------------------
def error_codes() -> list[str]:
    """Every code a tool can answer with: RecallError's subclasses', INTERNAL last."""
    seen, todo = set(), [RecallError]
    while todo:
        cls = todo.pop()
        seen.add(cls.code)
        todo.extend(cls.__subclasses__())
    return sorted(seen - {"INTERNAL"}) + ["INTERNAL"]


class _Data(BaseModel):
    model_config = ConfigDict(extra="allow")


class RetryAfter(BaseModel):
    retry_after: float = Field(description="Seconds to wait before calling again.")


class Envelope(BaseModel, Generic[T]):
    """Every tool's answer. On an error the MCP result is also flagged isError."""

    status: Literal["ok", "error"] = Field(description="\"ok\", or \"error\" with error and code set.")
    data: T | RetryAfter | None = Field(
        description="The result when status is \"ok\"; on RATE_LIMITED and QUEUE_FULL "
                    "{retry_after: seconds}; else null.")
    error: str | None = Field(description="What went wrong and what to do, when status is \"error\".")
    code: str | None = Field(description="Stable error code when status is \"error\": "
                                         + ", ".join(error_codes()) + ".")


class MemoryOut(_Data):
    id: str
    text: str
    topic: str
    type: str = Field(description="preference, fact, decision or procedure (or note).")
    importance: float = Field(description="0..1; decays while nobody retrieves the memory.")
    created_at: str = Field(description="ISO 8601, when it was said.")
    entity: str | None = None
    attribute: str | None = None
    value: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    pinned: bool | None = Field(None, description="true when pinned: decay never lowers it.")
    visibility: Literal["private", "shared"] | None = Field(
        None, description="shared: the owner's and every agent's; private: one agent's only.")
    private_to: str | None = Field(None, description="The agent a private memory belongs to.")


class SearchHit(MemoryOut):
    score: float = Field(description="0..1: rank-based relevance times the evidence that the "
                                     "memory answers the query; ~0 means nothing supports it.")
    valid_from: str | None = Field(None, description="With as_of: ISO 8601, since when the "
                                                     "memory held.")
    valid_until: str | None = Field(None, description="With as_of: ISO 8601, when a newer "
                                                      "value replaced it; null if still current.")


class StoreData(_Data):
    queued: bool = Field(description="true: a new job; false: this key was already stored.")
    job_id: str
    idempotency_key: str = Field(description="The key used (generated when none was sent).")
    cached: bool | None = Field(None, description="true when the key was seen before.")
    status: str | None = Field(None, description="That earlier job's status, when cached.")


class SearchData(_Data):
    results: list[SearchHit] = Field(description="Best first, at most `limit`.")
    total: int = Field(description="How many memories matched (score >= score_threshold) "
                                   "among the candidates, before limit and max_tokens; more "
                                   "than len(results) means a larger limit would return more.")
    degraded: list[str] = Field(description="Rankers that could not answer, with why.")
    tokens: int | None = Field(None, description="Tokens returned, when max_tokens is set.")
    truncated: bool | None = Field(None, description="Results left out by max_tokens.")


class InspectData(_Data):
    memories: list[MemoryOut] = Field(description="Newest first.")
    total: int = Field(description="Active memories in the namespace.")
    has_more: bool
    next_offset: int | None = Field(description="offset of the next page, null on the last.")


class DeleteData(_Data):
    deleted: str = Field(description="The id of the memory asked for.")
    forgotten_ids: list[str] | None = Field(
        None, description="Every memory removed: for a fact, all the values it ever had.")
    forgotten_ids: list[str] = Field(
        default_factory=list,
        description="Every row forgotten with it: the fact's other values (history) and "
                    "memories it had replaced.")


class JobFailure(_Data):
    job_id: str
    error: str | None = None
    attempts: int | None = None


class ExtractionPause(_Data):
    paused: bool
    reason: str | None = None
    since: str | None = None
    consecutive_failures: int
    next_probe_in: float | None = None


class StatsData(_Data):
    by_type: dict[str, int] = Field(description="Active memories per type.")
    total: int
    pending_extractions: int = Field(description="Stored texts not yet extracted.")
    failed_extractions: int
    recent_failures: list[JobFailure] | None = None
    extraction: ExtractionPause | None = Field(
        None, description="Present while extraction is paused because the model provider is "
                          "down: pending texts wait (nothing is lost) until it answers again.")


class ConsolidationGroup(_Data):
    merged_ids: list[str]
    texts: list[str]
    canonical: str


class ConsolidateData(_Data):
    groups_found: int
    memories_consolidated: int
    memories_created: int
    deleted_ids: list[str]
    created: list[MemoryOut]
    groups: list[ConsolidationGroup]
    dry_run: bool
    groups_skipped: int | None = None
    # Bounded work (issue 28): partial = the time budget ran out after `memories_examined`
    # of `memories_in_topic`; call again to go on.
    partial: bool = False
    memories_examined: int | None = None
    memories_in_topic: int | None = None


class EraseData(_Data):
    memories_deleted: int
    tokens_revoked: int
    receipt: EraseReceipt


def envelope_schema(data: type[BaseModel]) -> dict[str, Any]:
    """The output schema of a tool whose data is `data`."""
    return TypeAdapter(Envelope[data]).json_schema()  # type: ignore[valid-type]
