"""MemoryService: the one place where tool semantics live.

MCP tools, A2A handlers, the inspector and the CLI are thin adapters over these methods
(operators' use cases are `admin.service.AdminService`, which erases through this one).
Every method takes the caller from the adapter (a `Principal` from the verified credential,
or a namespace name for its owner), reads the partitions it sees and writes the one it may
(`access.partitions`, `views.py`), and validates its input before touching storage; errors
are `RecallError`s with a stable code. The rules themselves live in the modules beside this
one (facts, writes, forget, pinning, corrections, consolidate, immediate); the service checks
input and wires them to the runtime's storage, extractor, rankers and embedding model. The
inspector's reads and edits are in `person.py`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any, TypeVar

from ..config import RecallConfig
from ..contracts import Embedder, Extractor, RankerSlot, Storage, model_id
from ..errors import (ConfirmRequired, EmbeddingsRequired, InvalidParam, QueueFull,
                      RecallError)
from ..jobs.access import AccessLog
from ..jobs.activity import Activity
from ..jobs.breaker import ExtractionBreaker
from ..models import MEMORY_TYPES, ExtractedMemory, Memory, Operation, utcnow
from ..search.explain import SearchTrace
from ..search.pipeline import Searcher
from ..search.request import SearchRequest
from . import validation as v
from . import views
from ..access.partitions import home, write_partition
from .views import Caller, view_of
from .erase import erase_with_event, receipt
from .consolidate import consolidate
from .facts import norm_key, told
from .forget import forget, same_store
from .known import extract_with_known
from .immediate import Conflict, StoreInput, find_conflicts, record, store_extracted
from .storage_faults import StorageFaults
from .foreground import foreground
from .person import PersonMethods

log = logging.getLogger("recall.service")

CONFIRM_PHRASE = "DELETE MY DATA"

T = TypeVar("T")

class MemoryService(PersonMethods):
    """A server builds it with every engine (`server.runtime.build_runtime`). The CLI's
    operator commands build it on storage alone (`extractor=None`, no rankers): they only
    store, list, forget and erase, and a method that needs a missing engine says so."""

    def __init__(self, storage: Storage, config: RecallConfig, *,
                 extractor: Extractor | None = None, rankers: Sequence[RankerSlot] = (),
                 embedder: Embedder | None = None):
        self.storage = storage
        #: Called with the namespace after an erase (audit log, rankers' caches).
        self.on_erase: list[Callable[[str], None]] = []
        #: Called with the namespace and the erase's receipt (`memory.erase.receipt`).
        self.on_receipt: list[Callable[[str, dict[str, Any]], None]] = []
        self.extractor = extractor
        self.config = config
        self.embedder = embedder
        self.searcher = Searcher(storage, list(rankers), embedder, config.search.rrf_k,
                                 config.search.candidates)
        #: namespace -> (namespace_version, current vectors of another embedding model)
        self._other_models: dict[str, tuple[int, int]] = {}
        self.on_erase.append(lambda ns: self._other_models.pop(ns, None))
        # Set on every enqueue so an idle worker starts at once instead of at its next poll.
        self.job_signal = asyncio.Event()
        self.access = AccessLog(storage)
        self.activity = Activity()
        #: The storage fault /health reports, if any (storage_faults.py).
        self.faults = StorageFaults(storage)
        w = config.worker
        #: Whether extraction is paused because the model provider is down (the worker
        #: trips it; stats, /health and the inspector show it).
        self.extraction = ExtractionBreaker(w.breaker_threshold, w.breaker_probe,
                                            w.breaker_probe_max)

    @property
    def rankers(self) -> Sequence[RankerSlot]:
        return self.searcher.rankers

    # -- store ----------------------------------------------------------------------------
    @foreground
    async def store(self, who: Caller, text: Any, topic: Any = "", idempotency_key: Any = None,
                    session_id: Any = None, agent_id: Any = None,
                    created_at: Any = None, visibility: Any = None) -> dict[str, Any]:
        """`created_at` (ISO 8601, not in the future): when the text was said, for a
        conversation replayed after the fact. Its memories are placed at that time, as
        `recall import` places a line's `created_at`: in the fact timeline (a statement said
        before the current value's becomes history), for time-named searches ("in May
        2023"), `as_of`, recency and decay. Omitted: now. `visibility` picks the partition
        (`access.partitions.write_partition`): an agent's private one by default; `agent_id`
        is only recorded, it never decides."""
        namespace = write_partition(views.principal_of(who), visibility)
        text = v.text(text, "text", self.config.limits.max_text_bytes)
        topic = v.topic(topic)
        key = v.optional_str(idempotency_key, "idempotency_key") or str(uuid.uuid4())
        session_id = v.optional_str(session_id, "session_id")
        agent_id = v.optional_str(agent_id, "agent_id")
        said = v.said_at(created_at, utcnow())
        payload = {"text": text, "topic": topic, "session_id": session_id, "agent_id": agent_id}
        op = Operation(namespace=namespace, idempotency_key=key, kind="extract", payload=payload)
        if said is not None:
            op.created_at = said
        await self._room_in_queue(namespace)
        op, created = await self.storage.enqueue(op)
        if created:
            self.job_signal.set()
            return {"queued": True, "job_id": op.id, "idempotency_key": key}
        if not same_store(op.payload, text, topic) or (said is not None and op.created_at != said):
            raise InvalidParam(
                f"idempotency_key {key!r} was already used for a different text, topic or "
                f"created_at (job {op.id}). Use a new key for new content, or resend the "
                f"original call to retry safely.")
        return {"queued": False, "cached": True, "job_id": op.id, "status": op.status,
                "idempotency_key": key}

    async def _room_in_queue(self, namespace: str) -> None:
        """tenants.max_queued_jobs: one namespace's backlog is bounded (the queue takes turns
        across namespaces anyway; this bounds what one tenant can pile up)."""
        limit = self.config.tenants.max_queued_jobs
        if limit and await self.storage.count_jobs(namespace, "queued") >= limit:
            raise QueueFull(
                f"This namespace already has {limit} stores waiting for extraction (the "
                f"server's tenants.max_queued_jobs). Nothing was queued; retry after a few "
                f"seconds, or check progress with get_memory_stats (pending_extractions).",
                retry_after=10.0)

    # -- search / inspect -----------------------------------------------------------------
    @foreground
    async def search(self, who: Caller, query: Any, limit: Any = 20, recency_weight: Any = 0.3,
                     mmr_lambda: Any = 0.5, score_threshold: Any = 0.0,
                     max_tokens: Any = None, explain: bool = False,
                     as_of: Any = None) -> dict[str, Any]:
        """`explain=True` (the inspector) adds `data["explain"]`, a `SearchTrace` of every
        step, and records no access: looking at a search must not strengthen its results.

        `as_of` (ISO 8601; a bare date is the end of that day, UTC) searches the memories
        that were valid then, superseded ones included (search.pipeline); each result
        then carries valid_from and valid_until (null: still current)."""
        view = await view_of(self.storage, who)
        request = SearchRequest(
            view.namespace, v.query(query, self.config.limits.max_query_chars),
            limit=v.limit(limit, self.config.limits.page_cap),
            recency_weight=v.unit(recency_weight, "recency_weight"),
            mmr_lambda=v.unit(mmr_lambda, "mmr_lambda"),
            score_threshold=v.score_threshold(score_threshold),
            max_tokens=v.max_tokens(max_tokens), as_of=v.as_of(as_of),
            partitions=view.partitions if len(view.partitions) > 1 else ())
        if request.as_of is not None and not self.storage.capabilities.history:
            raise InvalidParam(f"as_of is not available: the storage backend "
                               f"({type(self.storage).__name__}) cannot read past states. "
                               f"Omit as_of to search what is true now.")
        if not self.rankers:
            raise RecallError("This service was built without rankers (an operator command "
                              "on the database); search through the server.")
        trace = SearchTrace() if explain else None
        outcome = await self.searcher.run(request, trace)
        if trace is None:
            # A look into the past strengthens only the results that are still current.
            for m, _ in outcome.results:
                if m.active:
                    self.access.record(m.namespace, [m.id])
        note = await self._other_model_note(view.partitions)
        if note:
            outcome.degraded.append(note)
        data = views.search_data(request, outcome)
        if trace is not None:
            data["explain"] = trace
        return data

    async def _other_model_note(self, spaces: Sequence[str]) -> str | None:
        """Say so when semantic search leaves out vectors of another embedding model (after a
        model change, until `recall reindex`). Counted once per namespace version."""
        if self.embedder is None or not self.storage.capabilities.embedding_models \
                or not self.storage.capabilities.vectors:
            return None
        count = 0
        for namespace in spaces:
            version = await self.storage.namespace_version(namespace)
            cached = self._other_models.get(namespace)
            if cached is None or cached[0] != version:
                n = await self.storage.other_model_vectors(namespace, model_id(self.embedder))
                cached = self._other_models[namespace] = (version, n)
                while len(self._other_models) > 1024:
                    self._other_models.pop(next(iter(self._other_models)))
            count += cached[1]
        if not count:
            return None
        return (f"dense: {count} memories have vectors of another embedding model and are "
                f"left out of semantic search until `recall reindex` re-embeds them with "
                f"{model_id(self.embedder)}")

    @foreground
    async def inspect(self, who: Caller, limit: Any = 20, offset: Any = 0) -> dict[str, Any]:
        limit = v.limit(limit, self.config.limits.page_cap)
        offset = v.offset(offset)
        view = await view_of(self.storage, who)
        rows, total = await views.list_page(self.storage, view.partitions, limit, offset)
        next_offset = offset + len(rows)
        has_more = next_offset < total
        return {"memories": [views.visible(m) for m in rows], "total": total, "has_more": has_more,
                "next_offset": next_offset if has_more else None}

    @foreground
    async def delete(self, who: Caller, memory_id: Any) -> dict[str, Any]:
        """An agent deletes only its own private memories (views.changeable_home)."""
        memory_id = v.memory_id(memory_id)
        view = await view_of(self.storage, who)
        space = await views.changeable_home(self.storage, view, memory_id, "delete")
        return await forget(self.storage, space, memory_id)

    @foreground
    async def stats(self, who: Caller) -> dict[str, Any]:
        # Pending jobs in ONE read per partition (a job being claimed is neither missed nor
        # counted twice), taken before the memory counts: when it says 0, every finished
        # job's memories are already in `total`.
        view = await view_of(self.storage, who)
        got = await views.stats_of(self.storage, view.partitions)
        pending, by_type, failed = got["pending"], got["by_type"], got["failed"]
        counts = {t: int(by_type.get(t, 0)) for t in MEMORY_TYPES}
        data: dict[str, Any] = {"by_type": counts, "total": sum(counts.values()),
                                "pending_extractions": pending,
                                "failed_extractions": failed}
        if self.extraction.open:  # the model provider is down: pending jobs wait
            data["extraction"] = self.extraction.status()
        if failed:
            data["recent_failures"] = [
                {"job_id": f["id"], "error": f["error"], "attempts": f["attempts"]}
                for f in await views.recent_failures(self.storage, view.partitions, 3)]
        return data

    @foreground
    async def delete_namespace(self, who: Caller, confirm: Any) -> dict[str, Any]:
        """The owner erases the namespace and every agent's partition (and revokes every
        token of the namespace); an agent erases its own private memories only (its tokens
        keep working: they belong to the owner's namespace)."""
        if confirm != CONFIRM_PHRASE:
            raise ConfirmRequired(
                f"Erasing a namespace cannot be undone. To confirm, call again with "
                f"confirm={CONFIRM_PHRASE!r} exactly.")
        principal = views.principal_of(who)
        namespace = home(principal)
        erased = [await erase_with_event(self.storage, namespace)]
        spaces = [namespace]
        if principal.is_owner:
            # After the namespace: its tokens (agents' too) are revoked, so no store can
            # open a partition after this list; a job still running in one finds its
            # operation gone with the partition and writes nothing.
            spaces += await self.storage.list_partitions(namespace)
            erased += [await self.storage.delete_namespace(s) for s in spaces[1:]]
        done = receipt(namespace, views.add_erased(erased))
        for hook in self.on_erase:  # in-process caches and pending audit rows of the namespace
            for space in spaces:
                try:
                    hook(space)
                except Exception:  # noqa: BLE001 - the erase itself is done; say what stayed
                    log.exception("erase hook %r failed for a namespace", hook)
        for after in self.on_receipt:  # the admin audit keeps the digest
            try:
                after(namespace, done)
            except Exception:  # noqa: BLE001
                log.exception("erase receipt hook %r failed", after)
        return {"memories_deleted": done["memories_deleted"],
                "tokens_revoked": done["tokens_revoked"], "receipt": done}

    @foreground
    async def history(self, who: Caller, entity: str, attribute: str) -> list[Memory]:
        """Every value one fact has had, oldest first (re-statement markers left out); with
        several partitions visible, each visibility's timeline (its own current value)."""
        view = await view_of(self.storage, who)
        return [m for space in view.partitions for m in told(
            await self.storage.history(space, norm_key(entity), norm_key(attribute)))]

    # -- a store written before the answer (A2A) -----------------------------------------
    async def record_store(self, namespace: str, task_id: str, args: dict[str, Any],
                           now: datetime) -> tuple[StoreInput, Operation]:
        """Validate a store's arguments and record it (its operation row, created done),
        before the slow extraction: an erase meanwhile deletes the record, and the write
        then finds it gone and writes nothing."""
        inp = StoreInput.parse(args, now, self.config.limits.max_text_bytes)
        return inp, await self.rerecord_store(namespace, task_id, inp, now)

    async def rerecord_store(self, namespace: str, task_id: str, inp: StoreInput,
                             now: datetime) -> Operation:
        """The record of a store resumed after a decision (found again, or made anew)."""
        return await record(self.storage, inp.operation(namespace, task_id, now))

    async def review_store(self, namespace: str, inp: StoreInput, op: Operation,
                           now: datetime) -> tuple[list[ExtractedMemory], list[Conflict]]:
        """Extract the text and find the contradictions the fact rules cannot settle."""
        extracted = await extract_with_known(
            self.storage, self._engine(self.extractor, "an extractor"), namespace, inp.text,
            inp.topic)
        return extracted, await find_conflicts(self.storage, namespace, extracted, now,
                                               op.created_at)

    async def write_store(self, op: Operation, extracted: Sequence[ExtractedMemory],
                          now: datetime, decision: str | None = None,
                          conflict_keys: Collection[tuple[str, str]] = ()) -> dict[str, Any]:
        """Write a reviewed store as the worker would, bent by the caller's decision."""
        return await store_extracted(self.storage, self.embedder, op, extracted, now,
                                     decision=decision, conflict_keys=conflict_keys,
                                     extractor=self.extractor)

    # -- consolidation --------------------------------------------------------------------
    @foreground
    async def consolidate(self, who: Caller, topic: Any, similarity_threshold: Any = 0.85,
                          dry_run: Any = False) -> dict[str, Any]:
        """Each partition the caller may change is consolidated on its own: groups never
        mix visibilities (the owner: the shared memories and each agent's; an agent: its
        private ones)."""
        topic = v.topic(topic)
        if not topic:
            raise InvalidParam("topic is empty. Pass the topic whose memories should be consolidated.")
        threshold = v.unit(similarity_threshold, "similarity_threshold")
        if not isinstance(dry_run, bool):
            raise InvalidParam(f"dry_run must be true or false, got {dry_run!r}.")
        if self.embedder is None:
            raise EmbeddingsRequired(
                "consolidate_memories clusters memories by embedding similarity, and no "
                "embedding model is installed. Install the embeddings plugin "
                "(pip install -e plugins/embeddings) and enable the 'dense' ranker, then retry.")
        budget = min(self.config.consolidation.time_budget, 0.8 * self.config.limits.tool_timeout)
        extractor = self._engine(self.extractor, "an extractor")
        view = await view_of(self.storage, who)
        return views.add_results([await consolidate(
            self.storage, self.embedder, extractor, space, topic, threshold, dry_run,
            self.config.consolidation.max_group, budget) for space in view.writable])

    @staticmethod
    def _engine(engine: T | None, what: str) -> T:
        if engine is None:  # only a CLI operator command builds a service without engines
            raise RecallError(f"This service was built without {what} (an operator command "
                              f"on the database); run the operation through the server.")
        return engine

    # -- internals ------------------------------------------------------------------------
    async def drain(self) -> None:
        """Write the access counts gathered so far (searches batch them, see access.py)."""
        await self.access.flush()

    async def close(self) -> None:
        await self.access.close()

