"""What a ranker (and the embedding model a semantic ranker carries) promises core.

Rankers and embedders subclass these base classes. Every member core uses is declared here;
optional capabilities are attributes with defaults (as llm's `_BaseModel` declares
`can_stream`), and core checks the attribute, never `hasattr`:

* `Ranker.embedder` (default None): a ranker that searches by embedding carries the model,
  and core then embeds memories with it at write time, uses its vectors for MMR similarity
  and consolidation, and asks it again with the speaker-free query (search's speaker step).
* `Ranker.calibrated` (default False): its `evidence(score)` maps one of its own scores to
  0..1 evidence that a hit answers the query (`search.relevance`).
* `Ranker.forget_namespace` (default: nothing cached): drops what it keeps of an erased
  namespace.
* `Embedder.topic_scale` (default `REFERENCE_TOPIC_SCALE`): where the model puts two stored
  texts. Core's own bars between memories (search's newer-first rule) are written on the
  reference scale and read a model's cosines through `on_reference_scale`.

`recall_core.testing.RankerContract` checks a ranker against these promises.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import Memory, ScoredId

if TYPE_CHECKING:
    from .storage import Storage


class NotReady(Exception):
    """Raised by a ranker that cannot answer yet (e.g. its model is still loading).

    The search pipeline answers from the other rankers and reports the message in
    `data.degraded`."""


#: (median cosine of two unrelated stored texts, median cosine of two stored texts on one
#: topic) for all-MiniLM-L6-v2, the default model: the scale core's similarity bars between
#: memories were measured on. Read off issue 27's tune sets (`bench/topic_scale.py`: a change's
#: first and last text, against texts of other items). A model whose cosines sit elsewhere
#: declares its own `Embedder.topic_scale` (multilingual-e5: (0.80, 0.86)).
REFERENCE_TOPIC_SCALE: tuple[float, float] = (0.07, 0.42)


def on_reference_scale(cosine: Any, scale: tuple[float, float]) -> Any:
    """A cosine between two memories (or an array of them) of a model with topic scale
    `scale`, moved linearly onto the reference scale, so one bar means the same in every
    model's space."""
    (lo, hi), (ref_lo, ref_hi) = scale, REFERENCE_TOPIC_SCALE
    if (lo, hi) == REFERENCE_TOPIC_SCALE or hi <= lo:
        return cosine
    return ref_lo + (cosine - lo) * ((ref_hi - ref_lo) / (hi - lo))


class Embedder(abc.ABC):
    """An embedding model. `embed` returns unit-normalised vectors of width `dim`."""

    #: A short name ("dense").
    name: str = ""
    #: The vector width (0 until the model has loaded, for a model that loads late).
    dim: int = 0
    #: The id of the vector space this model writes, stored with every vector so that two
    #: models' vectors never mix; "" means `name` (see `model_id`).
    model_id: str = ""

    #: Whether `embed` answers now (a model loading in the background says False; a
    #: subclass may make it a property).
    ready: bool = True
    #: Where this model puts two stored texts: (median cosine of unrelated ones, median
    #: cosine of two on one topic); see REFERENCE_TOPIC_SCALE. A subclass may make it a
    #: property (it may depend on settings).
    topic_scale: tuple[float, float] = REFERENCE_TOPIC_SCALE

    @abc.abstractmethod
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text. Raises NotReady while the model is loading."""

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block (in a thread) until the model is ready or `timeout` passes; whether it is.
        The CLI's import and reindex wait this way."""
        return self.ready

    def status(self) -> dict[str, Any]:
        """Details for health and `recall status`; an `error` key says why it failed to load."""
        return {"ready": self.ready}


def model_id(embedder: Embedder) -> str:
    """The id of the vector space an embedder writes (stored with every vector)."""
    return embedder.model_id or embedder.name


class Ranker(abc.ABC):
    """Gives ranked candidate ids for a query. Fusion (RRF) happens in core."""

    #: The ranker's name, as registered and as `[rankers]` in the config names it.
    name: str = ""
    #: The embedding model a semantic ranker searches with (see the module docstring).
    embedder: Embedder | None = None
    #: Whether `evidence` calibrates this ranker's scores.
    calibrated: bool = False

    @abc.abstractmethod
    async def rank(self, storage: Storage, namespace: str, query: str,
                   limit: int) -> list[ScoredId]:
        """Up to `limit` active memories of the namespace, best first. Raise NotReady to be
        skipped with a note in the search's `degraded` list."""

    @abc.abstractmethod
    async def rank_pool(self, query: str, memories: Sequence[Memory],
                        vectors: Mapping[str, Sequence[float]], limit: int) -> list[ScoredId]:
        """Up to `limit` of the given `memories`, best first, ranked in process: the rows
        valid at a past time (an `as_of` search) or stored in a time window a query names.
        `vectors` holds the stored vectors of those rows that have one (of `embedder`'s
        model); it is empty for a ranker without an embedder. Only ids of `memories` may
        come back."""

    def evidence(self, score: float) -> float:
        """A score of this ranker's as 0..1 evidence of relevance; called only when
        `calibrated` is True."""
        raise NotImplementedError(f"ranker {self.name!r} is not calibrated")

    def forget_namespace(self, namespace: str) -> None:
        """Drop anything kept in memory about `namespace` (it was erased)."""


@dataclass
class RankerSlot:
    """A ranker and its weight in the fusion, as the config enabled it."""

    ranker: Ranker
    weight: float
