"""The storage contract: what core needs from a backend (SQLite, PostgreSQL, yours).

Every storage method that touches tenant data takes `namespace` first and must filter by it:
one namespace never sees or changes another's rows. `recall_core.testing.StorageContract`
checks all of this against a real backend. `Storage` is five groups of methods plus
lifecycle; what a backend may offer beyond it is declared in `Storage.capabilities`
(`capabilities.py`), and every change of memories goes through a `WriteTx`
(`transaction.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..models import Memory, Operation, ScoredId, ToolCallRecord
from .capabilities import Capabilities
from .events import OutboxEvent
from .records import DecayRow, Erased, TaskKeys, TaskPage, TaskQuery, TokenGrant
from .transaction import WriteTx


class TokenStore(Protocol):
    """API tokens (hashes only) and the namespace each one opens."""

    async def create_token(self, namespace: str, token_hash: str, agent: str | None = None,
                           scopes: str | None = None) -> None:
        """Store a token's hash, bound to `namespace` and, when given, to `agent` inside it,
        with `scopes` (space-separated; None: all scopes). Core validates all three; storage
        itself refuses (ValueError) a namespace containing "/": that names an agent's
        private partition (`access.partitions`), which no token may open directly."""

    async def namespace_for_token(self, token_hash: str) -> str | None:
        """Namespace of an unrevoked token hash, else None."""

    async def grant_for_token(self, token_hash: str) -> TokenGrant | None:
        """What an unrevoked token hash opens (namespace, agent, scopes as stored), else None."""

    async def revoke_token(self, token_hash: str) -> bool: ...


class JobQueue(Protocol):
    """The durable queue and idempotency record (`operations`). The lease/attempt policy's
    numbers come from core (worker settings); storage applies them atomically."""

    async def enqueue(self, op: Operation) -> tuple[Operation, bool]:
        """Insert `op` unless (namespace, idempotency_key) exists. Returns (stored op, created).

        Must be atomic under concurrent calls with the same key: exactly one caller gets
        created=True, all get the same operation back.
        """

    async def get_operation(self, namespace: str, op_id: str) -> Operation | None: ...

    async def claim_job(self, lease_seconds: float, max_attempts: int | None = None
                        ) -> Operation | None:
        """Atomically take the oldest queued job (or a running one whose lease expired),
        mark it running, increment attempts, set lease_until. None when nothing is ready.

        With `max_attempts`, a running job whose lease expired after its last allowed
        attempt is not claimed again: it ends `failed` with `models.exhausted_message`
        (so a job that crashes or hangs its worker cannot loop forever)."""

    async def payloads_to_scrub(self, finished_before: datetime, limit: int) -> list[Operation]:
        """Up to `limit` finished (done or failed) operations of any namespace, finished
        before `finished_before`, whose payload still holds its text (no "scrubbed" key):
        the retention job scrubs them (`jobs.retention`)."""

    async def expired_leases(self) -> int:
        """Running jobs whose lease has expired: their worker died or hangs (a live worker
        renews its lease). `recall status` reports them."""

    async def renew_lease(self, op_id: str, attempts: int, lease_seconds: float) -> bool:
        """Extend a running job's lease to now + lease_seconds, if the claim with `attempts`
        is still current (False otherwise). The worker renews while a job runs."""

    async def fail_job(self, op_id: str, attempts: int, error: str, retry: bool,
                       retry_at: datetime | None = None, event: OutboxEvent | None = None
                       ) -> bool:
        """Record `error`; back to queued when `retry` (not claimable before `retry_at`, if
        given: backoff that holds across workers and processes), else failed for good. Like
        complete_job, only applies while the job is running with the same `attempts`;
        returns False (and changes nothing) for a stale claim. `event` (extraction.failed)
        is emitted in the same transaction, as `WriteTx.emit`, only if the job changed.
        With the webhooks capability, a claim that ends a job failed (`max_attempts`) emits
        `events.extraction_failed` for it too."""

    async def release_job(self, op_id: str, attempts: int, retry_at: datetime | None = None
                          ) -> bool:
        """Give a claimed job back uncounted: queued again with the attempt its claim took
        undone (attempts - 1), not claimable before `retry_at`. For failures that are not the
        job's own (the model provider or the database was down). Only applies while the job
        is running with the same `attempts`; returns False (and changes nothing) otherwise."""

    async def requeue_running(self) -> int:
        """At start-up: jobs whose worker is gone go back to queued (this instance's own
        from before a restart, and any whose lease expired or whose process is dead; with
        one process per database that is every running job). Returns how many."""

    async def count_jobs(self, namespace: str | None, status: str | Sequence[str]) -> int:
        """Jobs of the namespace (all when None) in `status`, or in any of several statuses
        counted in one read (get_memory_stats: ("queued", "running"), so a job moving from
        one to the other is never missed or counted twice)."""

    async def recent_failures(self, namespace: str | None = None, limit: int = 5) -> list[dict[str, Any]]:
        """Newest failed jobs (all namespaces when None): dicts with id, namespace, kind,
        attempts, error, finished_at. Shown by get_memory_stats and `recall status`."""


class MemoryStore(Protocol):
    """Memory rows. Every change of memories goes through `write` (one transaction with
    the fact keys locked, WriteTx primitives) except bulk `insert_memories`; reads are plain."""

    def write(self, namespace: str, keys: Sequence[tuple[str, str]] = ()
              ) -> AbstractAsyncContextManager[WriteTx]:
        """Open one write transaction on `namespace`, holding the fact `keys` locked (see
        WriteTx). Every write of memories goes through here, except bulk `insert_memories`."""

    async def insert_memories(self, memories: Sequence[Memory]) -> None:
        """Insert rows as given (bulk import). All or nothing."""

    async def get_memories(self, namespace: str, ids: Sequence[str]) -> list[Memory]:
        """Active memories with these ids in this namespace, in no particular order.
        Reads may leave `Memory.embedding` None; use get_embeddings for vectors."""

    async def list_memories(self, namespace: str, limit: int, offset: int) -> tuple[list[Memory], int]:
        """Active memories newest first, and the total count of active memories."""

    def iter_memories(self, namespace: str, active_only: bool = True) -> AsyncIterator[Memory]:
        """Every memory of the namespace, oldest first (export, fallback indexes)."""

    async def latest_in_session(self, namespace: str, session_id: str) -> Memory | None:
        """The newest active memory of a session (by created_at, then insertion order).
        Used to give a new memory's vector the session's context."""

    async def history(self, namespace: str, entity: str, attribute: str) -> list[Memory]:
        """Active and superseded rows of one (entity, attribute), oldest first."""

    async def current_facts(self, namespace: str, limit: int) -> list[Memory]:
        """Up to `limit` current memories of this namespace that state a fact (entity,
        attribute and value set, valid_until NULL), newest first (created_at, then insertion
        order). The worker gives the extractor what is already known (`memory.known`)."""

    async def record_access(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        """access_count += 1 and last_accessed_at = at for each id."""

    async def stats(self, namespace: str) -> dict[str, int]:
        """Active memory count per type."""

    async def namespace_version(self, namespace: str) -> int:
        """A number that changes whenever the namespace's active memories change, including
        update_importance and set_embeddings (cache invalidation for in-process indexes).
        record_access does NOT change it (every search would empty the caches)."""

    async def list_partitions(self, namespace: str) -> list[str]:
        """The storage namespaces `"{namespace}/..."` (agents' private partitions, see
        `access.partitions`) that hold memories or queued/running jobs, sorted by code point.
        May also name a partition whose rows are all gone. Must be an index range scan, not a
        scan of memories: the owner's every read calls it."""

    async def delete_namespace(self, namespace: str, event: OutboxEvent | None = None
                               ) -> Erased:
        """Erase every row of the namespace (memories including superseded ones, operations,
        A2A tasks, audit rows, counters, change logs) and revoke its tokens, in one
        transaction: afterwards no row names it. A token row keeps only its hash, revoked
        (so the token still answers 401 and its hash cannot be registered again).

        Webhooks (with the capability): the namespace's events and deliveries go too, then
        `event` (namespace.erased, no text) is emitted as `WriteTx.emit` and the
        namespace's "api" subscriptions are marked erased: they and that event's deliveries
        are the only rows left naming it, until delivered or dead (`prune_webhooks`)."""

    async def update_importance(self, updates: Sequence[tuple[str, str, float]]) -> None:
        """(namespace, id, importance) triples: set the importance as a new undecayed value
        (it also becomes the base importance decay starts from)."""
    async def decay_candidates(self, after: str | None, limit: int) -> list[DecayRow]:
        """Up to `limit` active, unpinned memories of EVERY namespace with id > `after` (all when None),
        ordered by id: keyset pages for the decay job (`recall_core.jobs.decay.run_decay`), which
        passes the last id of a page as the next `after`. A memory that stays active during
        the walk is seen exactly once."""

    async def apply_decay(self, updates: Sequence[tuple[str, str, float]]) -> None:
        """(namespace, id, importance) triples from the decay job: set the importance the
        tools see, keeping the base importance as it was (so the next run recomputes from the
        base and runs never compound). Only active rows of the named namespace change;
        namespace_version changes like for update_importance."""


class Retrieval(Protocol):
    """Native indexes for the rankers."""

    async def search_fulltext(self, namespace: str, terms: Sequence[str], limit: int) -> list[ScoredId]:
        """Active memories matching any of `terms` (already normalised by the caller),
        best first, scored by the native index. Only called when supports_fulltext."""

    async def search_vectors(self, namespace: str, vector: Sequence[float], limit: int,
                             model: str | None = None) -> list[ScoredId]:
        """Active memories nearest to `vector` by cosine similarity, best first. With
        `model`, only vectors recorded as made by that embedding model (or with no model
        recorded: stored before model ids were kept), so two models' vectors never mix."""

    async def set_embeddings(self, namespace: str, items: Sequence[tuple[str, Sequence[float]]],
                             model: str | None = None) -> None:
        """Store vectors (and the id of the model that made them) for these memories."""

    async def get_embeddings(self, namespace: str, ids: Sequence[str],
                             model: str | None = None) -> dict[str, list[float]]:
        """Vectors of these memories (current or history); with `model`, as in search_vectors."""

    async def ids_missing_embeddings(self, limit: int) -> list[tuple[str, str, str]]:
        """(namespace, id, text) of active memories without a vector (backfill)."""

    def vectors_loading(self) -> list[str]:
        """Namespaces whose vectors this process is still loading: meanwhile
        `search_vectors` raises NotReady for them (search answers from its other rankers and
        says so), and /health names how many. [] where vectors live in the database."""


class Records(Protocol):
    """Audit rows and A2A tasks."""

    async def record_tool_call(self, record: ToolCallRecord) -> None: ...

    async def record_tool_calls(self, records: Sequence[ToolCallRecord]) -> None:
        """Several audit rows in one transaction (the audit batch, `observability.audit`)."""

    async def save_task(self, namespace: str, task_id: str, data: dict[str, Any],
                        keys: TaskKeys = TaskKeys()) -> None:
        """Insert or replace a task's document, and `keys`, which list_tasks filters on."""

    async def get_task(self, namespace: str, task_id: str) -> dict[str, Any] | None: ...

    async def list_tasks(self, namespace: str, query: TaskQuery = TaskQuery()) -> TaskPage:
        """One page of this namespace's tasks, in the database (never all of them in memory).

        Order: status_ns descending with tasks without one last, then task_id descending,
        compared by code point (Postgres: COLLATE "C"), so a page position is exact on every
        backend. `query.after` = (ns, id) starts strictly after that position: rows with
        status_ns < ns, or = ns and task_id < id, or no status_ns at all; with ns None, rows
        without status_ns and task_id < id. Filters are equality on context_id and state, and
        status_ns >= status_ns_from."""

    async def delete_task(self, namespace: str, task_id: str) -> None: ...

    async def expire_tasks(self, updated_before: datetime) -> int:
        """Delete A2A tasks of every namespace last updated before `updated_before` (the
        retention job, `retention.task_days`). Returns how many."""


@runtime_checkable
class Storage(TokenStore, JobQueue, MemoryStore, Retrieval, Records, Protocol):
    """Persistence for memories, the job queue, tokens, audit rows and A2A tasks: the five
    groups above, plus lifecycle. Core depends on each group by name where it can."""

    #: Human-readable description for `recall status` (e.g. "sqlite /path/recall.db (WAL)").
    description: str
    #: What the backend offers beyond this protocol; core checks these flags only.
    capabilities: Capabilities

    async def open(self) -> None:
        """Connect and run pending migrations. Called once before any other method."""

    async def close(self) -> None: ...

    def status(self) -> dict[str, Any]:
        """Backend details for `recall status`, `/metrics` and the inspector (e.g. pool size,
        file size): plain JSON values, no secrets."""

    def classify_failure(self, exc: BaseException) -> str | None:
        """What an exception raised by one of this storage's methods says about the database:
        "full" (no space left: SQLITE_FULL, SQLSTATE 53100), "read_only" (it refuses writes:
        SQLITE_READONLY, SQLSTATE 25006), "unavailable" (it cannot be reached or opened: lost
        connection, cannot open, I/O error), or None for anything else (a bug, a conflict).
        Core turns the kind into its error code and message and reports it on /health
        (`memory.storage_faults`); the backend only recognises its driver's errors."""

    async def check_writable(self) -> None:
        """Commit one small real write (a row the backend keeps anyway, e.g. its schema
        version, rewritten as it is), so a full disk, a read-only database or a lost
        connection raises here as it would for a store. /health calls it while it reports a
        storage fault, to see the fault clear."""
