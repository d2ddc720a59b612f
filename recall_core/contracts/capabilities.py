"""What a storage may offer beyond the required `Storage` protocol, declared by flags.

A backend says what it offers in `Storage.capabilities` (a `Capabilities`), and core checks
the flag, never `hasattr` or `isinstance`: a feature that needs a capability the backend did
not declare is skipped (search) or refused with a message naming it (as_of). Each flag names
the protocol of the methods it promises; `recall_core.testing.StorageContract` checks that a
declared capability's methods are there and behave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..models import Memory, ScoredId
from .events import Webhooks
from .records import VectorToRedo


@dataclass(frozen=True)
class Capabilities:
    """Optional parts of the storage contract a backend implements (all False by default)."""

    #: `search_fulltext` is backed by a native index (FTS5, tsvector). Without it the BM25
    #: ranker keeps an in-process index per namespace.
    fulltext: bool = False
    #: `search_vectors`, `set_embeddings`, `get_embeddings` and `ids_missing_embeddings`
    #: work; without it semantic search and write-time embeddings are off.
    vectors: bool = False
    #: `NearDuplicateSearch`: the worker's near-duplicate check scores few rows.
    near_duplicates: bool = False
    #: `HistoricalReads`: `search_memories(as_of=...)`.
    history: bool = False
    #: `SessionNeighbours`: search's neighbour step.
    session_neighbours: bool = False
    #: `TimeRanges`: search's time-window step.
    time_ranges: bool = False
    #: `EmbeddingModels`: `recall reindex`, and search's note about other models' vectors.
    embedding_models: bool = False
    #: `MemorySources`: `recall status` says what made the memories.
    memory_sources: bool = False
    #: `recall_core.contracts.admin.AdminStorage`: the admin API, the inspector, admin tokens.
    admin: bool = False
    #: `recall_core.contracts.oauth.OAuthStorage`: Recall's own OAuth authorization server
    #: ([oauth] mode = "builtin").
    oauth: bool = False
    #: `recall_core.contracts.events.Webhooks`: subscriptions and the outbox's deliveries
    #: (`WriteTx.emit` writes events; without this flag core never calls it).
    webhooks: bool = False

    def missing(self) -> list[str]:
        """Names of the capabilities not offered (for `recall status` and error messages)."""
        return [name for name, on in vars(self).items() if not on]


#: Each capability flag and the protocol whose methods it promises.
PROTOCOLS: dict[str, type] = {}


@runtime_checkable
class NearDuplicateSearch(Protocol):
    """Optional storage capability for the worker's near-duplicate check (`memory.writes`)."""

    async def search_near_duplicates(self, namespace: str, terms: Sequence[str],
                                     max_missing: int, limit: int) -> list[ScoredId]:
        """Up to `limit` active memories ranked for `terms`, among which is every memory
        holding all but at most `max_missing` of the terms (if any). A storage can thus
        score only the memories that hold one of the `max_missing + 1` rarest terms (any
        near-duplicate must), instead of every memory sharing a common word."""


@runtime_checkable
class HistoricalReads(Protocol):
    """Optional storage capability for `search_memories(as_of=...)` (`search.pipeline`)."""

    async def memories_at(self, namespace: str, at: datetime) -> list[Memory]:
        """Every memory of the namespace that was valid at `at`: valid_from <= at and
        (valid_until is None or at < valid_until). Superseded rows are included for the time
        they were current; rows that began after `at` are not. Oldest valid_from first."""


@runtime_checkable
class SessionNeighbours(Protocol):
    """Optional storage capability: which memories were said just before and just after
    others in their session (search's neighbour step, `search.steps.apply_neighbours`)."""

    async def session_neighbours(self, namespace: str, ids: Sequence[str]
                                 ) -> dict[str, tuple[str | None, str | None]]:
        """For each id of an active memory with a session: (the active memory just before
        it, the active memory just after it) in that session, ordered by created_at, then
        insertion order, as `latest_in_session`; None at either end. Ids that are unknown,
        superseded, of another namespace or without a session are left out."""


@runtime_checkable
class TimeRanges(Protocol):
    """Optional storage capability: the memories stored in given time ranges (search's
    time-window step, `search.window.window_relevance`)."""

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
        source job recorded in its result (`memory.writes.provenance`): dicts with `extractor`,
        `model`, `prompt_version` (None when not recorded) and `memories`, most first.
        `extractor` is None for memories without a source job (verbatim import) and ""
        for a job that recorded no provenance (stored before it was recorded)."""


PROTOCOLS.update(near_duplicates=NearDuplicateSearch, history=HistoricalReads,
                 session_neighbours=SessionNeighbours, time_ranges=TimeRanges,
                 embedding_models=EmbeddingModels, memory_sources=MemorySources,
                 webhooks=Webhooks)
