"""The contracts plugins implement. Core only ever talks to these protocols.

Every storage method that touches tenant data takes `namespace` first and must filter by it:
one namespace never sees or changes another's rows. `recall_core.testing.StorageContract`
checks all of this against a real backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ..models import ExtractedMemory, Memory, Operation, ScoredId, ToolCallRecord


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


class WriteTx(Protocol):
    """One write transaction on one namespace, from `Storage.write`. Primitives only: the
    rules that decide what they do live in core (`facts.py`, `writes.py`, `forget.py`).

    Committed when the `async with` block ends normally, rolled back entirely when it raises.
    While it is open, the fact keys it was opened with are locked against every other writer
    (of any process sharing the database), so what `timeline` returns stays true until commit.
    """

    namespace: str

    async def timeline(self, keys: Sequence[tuple[str, str]]) -> list[Memory]:
        """Every row (current and superseded) of these (entity, attribute) keys, oldest
        `valid_from` first. Keys are matched exactly (core normalises them)."""

    async def current(self, ids: Sequence[str]) -> list[Memory]:
        """The current (active) rows of this namespace among `ids`."""

    async def older_jobs_pending(self, before: datetime) -> bool:
        """Whether a job of this namespace stored before `before` is still queued or running:
        its statements may yet be written after this one, out of order (facts.place keeps a
        re-statement's time for them)."""

    async def insert(self, memories: Sequence[Memory]) -> None:
        """Insert rows as given (their namespace must be this one). Raises
        `errors.StorageConflict` for an existing id (kind `duplicate_id`) or a second current
        row of a key (kind `second_current`)."""

    async def end(self, ends: Sequence[tuple[str, datetime, str | None]]) -> None:
        """(id, valid_until, superseded_by): end rows of this namespace whose validity lasts
        past `valid_until` (current ones, or history rows being split by a late statement)."""

    async def refresh(self, items: Sequence[tuple[str, float]], at: datetime) -> None:
        """(id, importance): a current row was re-stated: base importance becomes the larger
        of its base and `importance` (any decay undone) and last_accessed_at = at. Rows that
        are no longer current are left alone."""

    async def set_pinned(self, ids: Sequence[str], pinned: bool) -> int:
        """Pin (decay never lowers its importance) or unpin current rows; returns how many."""

    async def delete(self, ids: Sequence[str]) -> int:
        """Hard-delete rows of this namespace (current or history) and their index entries.
        Returns how many were deleted."""

    async def predecessors(self, ids: Sequence[str]) -> list[Memory]:
        """Rows of this namespace whose `superseded_by` is one of `ids`."""

    async def scrub_context(self, session_ids: Sequence[str], texts: Sequence[str]) -> None:
        """Clear the session context (`Memory.context`, and its index entry) of rows of
        these sessions whose context contains one of `texts`, and their vector (it mixed in
        the forgotten neighbour's; the embedding backfill re-embeds them from their text)."""

    async def operations(self, ids: Sequence[str]) -> list[Operation]:
        """Operations of this namespace with these ids."""

    async def restated_by(self, ids: Sequence[str]) -> list[Operation]:
        """Operations of this namespace whose result lists one of `ids` among its
        `refreshed_ids` or `restated_ids` (stores that re-stated those memories, current or
        already history: their text says it too)."""

    async def set_payload(self, op_id: str, payload: dict[str, Any]) -> None:
        """Replace an operation's payload (forget scrubs its text)."""

    async def delete_tasks(self, task_ids: Sequence[str]) -> None:
        """Delete A2A tasks of this namespace."""

    async def finish_job(self, op_id: str, attempts: int | None,
                         result: dict[str, Any] | None = None) -> bool:
        """Mark the job done if it is still running under the claim with `attempts`
        (else False, and the caller rolls back by raising `errors.StaleClaim`). `result`
        (the ids written) is kept in the operation's payload under "result". With
        `attempts=None` the operation is a record created done (A2A): it only has to still
        exist in this namespace (an erase deletes it), and only `result` is written."""


class TokenStore(Protocol):
    """API tokens (hashes only) and the namespace each one opens."""

    async def create_token(self, namespace: str, token_hash: str) -> None: ...
    async def namespace_for_token(self, token_hash: str) -> str | None:
        """Namespace of an unrevoked token hash, else None."""

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
        the retention job scrubs them (`retention.py`)."""

    async def expired_leases(self) -> int:
        """Running jobs whose lease has expired: their worker died or hangs (a live worker
        renews its lease). `recall status` reports them."""

    async def renew_lease(self, op_id: str, attempts: int, lease_seconds: float) -> bool:
        """Extend a running job's lease to now + lease_seconds, if the claim with `attempts`
        is still current (False otherwise). The worker renews while a job runs."""

    async def fail_job(self, op_id: str, attempts: int, error: str, retry: bool,
                       retry_at: datetime | None = None) -> bool:
        """Record `error`; back to queued when `retry` (not claimable before `retry_at`, if
        given: backoff that holds across workers and processes), else failed for good. Like
        complete_job, only applies while the job is running with the same `attempts`;
        returns False (and changes nothing) for a stale claim."""

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

    async def record_access(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        """access_count += 1 and last_accessed_at = at for each id."""

    async def stats(self, namespace: str) -> dict[str, int]:
        """Active memory count per type."""

    async def namespace_version(self, namespace: str) -> int:
        """A number that changes whenever the namespace's active memories change, including
        update_importance and set_embeddings (cache invalidation for in-process indexes).
        record_access does NOT change it (every search would empty the caches)."""

    async def delete_namespace(self, namespace: str) -> tuple[int, int]:
        """Erase every row of the namespace (memories including superseded ones, operations,
        A2A tasks, audit rows) and revoke its tokens. Returns (memory rows erased, tokens
        revoked)."""

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


class Records(Protocol):
    """Audit rows and A2A tasks."""

    async def record_tool_call(self, record: ToolCallRecord) -> None: ...

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
    #: True when `search_fulltext` is backed by a native index (FTS5, tsvector).
    supports_fulltext: bool
    #: True when `search_vectors` is implemented.
    supports_vectors: bool

    async def open(self) -> None:
        """Connect and run pending migrations. Called once before any other method."""

    async def close(self) -> None: ...

    # Optional, found with hasattr by `recall status`: `status() -> dict` (backend details).


@runtime_checkable
class NearDuplicateSearch(Protocol):
    """Optional storage capability for the worker's near-duplicate check (extraction.py)."""

    async def search_near_duplicates(self, namespace: str, terms: Sequence[str],
                                     max_missing: int, limit: int) -> list[ScoredId]:
        """Up to `limit` active memories ranked for `terms`, among which is every memory
        holding all but at most `max_missing` of the terms (if any). A storage can thus
        score only the memories that hold one of the `max_missing + 1` rarest terms (any
        near-duplicate must), instead of every memory sharing a common word."""


@runtime_checkable
class HistoricalReads(Protocol):
    """Optional storage capability for `search_memories(as_of=...)` (recall_core/asof.py)."""

    async def memories_at(self, namespace: str, at: datetime) -> list[Memory]:
        """Every memory of the namespace that was valid at `at`: valid_from <= at and
        (valid_until is None or at < valid_until). Superseded rows are included for the time
        they were current; rows that began after `at` are not. Oldest valid_from first."""


@runtime_checkable
class SessionNeighbours(Protocol):
    """Optional storage capability: which memories were said just before and just after
    others in their session (search's neighbour step, `search.apply_neighbours`)."""

    async def session_neighbours(self, namespace: str, ids: Sequence[str]
                                 ) -> dict[str, tuple[str | None, str | None]]:
        """For each id of an active memory with a session: (the active memory just before
        it, the active memory just after it) in that session, ordered by created_at, then
        insertion order, as `latest_in_session`; None at either end. Ids that are unknown,
        superseded, of another namespace or without a session are left out."""


@runtime_checkable
class TimeRanges(Protocol):
    """Optional storage capability: the memories stored in given time ranges (search's
    time-window step, `search.window_relevance`)."""

    async def memories_created(self, namespace: str, ranges: Sequence[tuple[datetime, datetime]],
                               limit: int) -> list[Memory] | None:
        """Active memories of the namespace whose created_at falls in any of `ranges` (start
        inclusive, end exclusive; ranges may overlap, a memory comes once), with their session
        context (`Memory.context`, as `memories_at`), oldest created_at first (then insertion
        order); None when more than `limit` do (found without reading them all)."""


@runtime_checkable
class EmbeddingModels(Protocol):
    """Optional storage capability: which embedding model made the stored vectors
    (`recall reindex`, `recall status`, and search's note about vectors it leaves out)."""

    async def embedding_models(self, namespace: str | None) -> dict[str | None, int]:
        """Stored vectors (current and history rows) per model id, of one namespace or all;
        None counts vectors stored before model ids were recorded."""

    async def other_model_vectors(self, namespace: str, model: str) -> int:
        """Current memories whose vector was recorded as made by a model other than `model`
        (search leaves them out)."""

    async def embeddings_to_redo(self, namespace: str | None, model: str, after: int,
                                 limit: int) -> list[VectorToRedo]:
        """Up to `limit` rows (current or history) with a vector not recorded as made by
        `model` (None included), of one namespace or all, with `seq` > `after`, in `seq`
        order. A row re-embedded with `model` no longer qualifies, so a new walk from 0
        continues an interrupted one."""


@runtime_checkable
class MemorySources(Protocol):
    """Optional storage capability: what made the stored memories (`recall status`)."""

    async def memory_sources(self, namespace: str | None) -> list[dict[str, Any]]:
        """Current memories of one namespace (all when None) counted by the provenance their
        source job recorded in its result (`writes.provenance`): dicts with `extractor`,
        `model`, `prompt_version` (None when not recorded) and `memories`, most first.
        `extractor` is None for memories without a source job (verbatim import) and ""
        for a job that recorded no provenance (stored before it was recorded)."""


class NotReady(Exception):
    """Raised by a ranker that cannot answer yet (e.g. its model is still loading).

    The search pipeline answers from the other rankers and reports the message in
    `data.degraded`."""


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    @property
    def ready(self) -> bool: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors. Raises NotReady while the model is loading."""


@runtime_checkable
class Ranker(Protocol):
    """Gives ranked candidate ids for a query. Fusion (RRF) happens in core."""

    name: str
    # A ranker may also carry `embedder: Embedder`: core then uses it to embed memories at
    # write time, for MMR similarity and for consolidation clustering.

    async def rank(self, storage: Storage, namespace: str, query: str, limit: int) -> list[ScoredId]:
        """Best first. Raise NotReady to be skipped with a degraded note."""


@runtime_checkable
class Extractor(Protocol):
    name: str

    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        """Typed memories in `text`; [] for chit-chat. Raise `ExtractionError` on failure."""

    async def merge(self, memories: Sequence[Memory], topic: str = "") -> ExtractedMemory:
        """One canonical memory that says what the cluster says (consolidation)."""


class ExtractionError(Exception):
    """An extractor failure. `retryable=False` fails the job at once (e.g. bad API key)."""

    def __init__(self, message: str, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable
