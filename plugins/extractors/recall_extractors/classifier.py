"""Which attribute a statement states, when no frame names it: nearest prototypes.

The rules (`person_frames`, `many_frames`, `tool_frames`) know the common wordings; people
use many more ("Took a full-time offer at Cyberdyne", "fish shell for me these days"). The
dense model already in the default install (all-MiniLM-L6-v2, int8 on onnxruntime, from the
embeddings plugin) places a statement's predicate near the example phrasings of its
attribute (`prototypes`): the attribute whose two nearest examples are closest wins, when
it is close enough (`MIN_SCORE`), clearly closer than the runner-up (`MIN_MARGIN`), and
closer than the examples of statements that state nothing (`prototypes.NONE`).

Optional: without the embeddings plugin (or its model package) `load()` gives None and the
extractor runs on rules alone. Nothing is downloaded. The examples' vectors are computed
once, when the classifier is first used (about 600 short texts: a few seconds), in the
worker's thread, never in a tool call.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from .prototypes import NONE, PROTOTYPES

log = logging.getLogger("recall.extractors")

#: The mean cosine of a statement to its attribute's two nearest examples must reach this
#: (chosen on the tune half of bench/understanding: see bench/RESULTS.md).
MIN_SCORE = 0.45
#: ... and exceed the runner-up attribute's by this much.
MIN_MARGIN = 0.04
NOTHING = "NONE"


@dataclass(frozen=True)
class Guess:
    attribute: str
    score: float
    margin: float


class AttributeClassifier:
    """Nearest-prototype attribute classifier over an `encode(texts) -> unit vectors` model."""

    def __init__(self, encode: Any):
        self._encode = encode
        self._labels: np.ndarray | None = None
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()
        self._names = _NameKinds(encode)

    def encode(self, texts: list[str]) -> Any:
        """Unit vectors of `texts` from the classifier's model."""
        return self._encode(texts)

    def name_kind(self, name: str) -> str | None:
        """"org" when a name reads clearly as a company or organisation, else None."""
        return self._names.kind(name)

    def person_like(self, word: str) -> bool:
        """Whether a word typed without capitals reads as a person's name ("leah") rather
        than a state ("great", "away")."""
        return self._names.person_like(word)

    def place_like(self, name: str) -> bool:
        """Whether a name typed without capitals reads as a place ("rotterdam") rather than
        a word that follows "live in" or "moved to" ("sales", "therapy")."""
        return self._names.place_like(name)

    def _prepare(self) -> None:
        with self._lock:
            if self._vectors is not None:
                return
            labels = [a for a, phrases in PROTOTYPES.items() for _ in phrases]
            texts = [p for phrases in PROTOTYPES.values() for p in phrases]
            labels += [NOTHING] * len(NONE)
            texts += list(NONE)
            self._vectors = np.asarray(self._encode(texts), dtype=np.float32)
            self._labels = np.asarray(labels)

    def scores(self, predicate: str) -> list[tuple[str, float]]:
        """Every attribute (and NONE) with its score, best first."""
        self._prepare()
        assert self._vectors is not None and self._labels is not None
        sims = self._vectors @ np.asarray(self._encode([predicate])[0], dtype=np.float32)
        out = []
        for label in np.unique(self._labels):
            top = np.sort(sims[self._labels == label])[-2:]
            out.append((str(label), float(top.mean())))
        return sorted(out, key=lambda x: -x[1])

    def guess(self, predicate: str) -> Guess | None:
        """The attribute `predicate` states, or None when no attribute is clearly nearest."""
        ranked = self.scores(predicate)
        (best, score), (_, second) = ranked[0], ranked[1]
        if best == NOTHING or score < MIN_SCORE or score - second < MIN_MARGIN:
            return None
        return Guess(best, score, score - second)


# Names of each kind, to tell "moved to Red Hat" (a company) from "moved to Austin".
PLACE_NAMES = ("Berlin", "Lisbon", "Tokyo", "New York", "Austin, Texas", "Manchester", "Kenya",
               "the Netherlands", "Ohio", "Queens", "a small town in Ohio", "Sao Paulo",
               "Cork", "Leeds")
ORG_NAMES = ("Google", "Red Hat", "Deloitte", "Stripe", "Mercy Hospital", "KPMG", "Salesforce",
             "Acme Corp", "Ohio State University", "the Blue Door cafe", "Pixelhaus", "Hooli",
             "Umbrella Health", "Monzo")
# Words that follow "live in", "moved to" or "I'm in" and name no place (the model is
# uncased: "rotterdam" and "Rotterdam" are one text to it).
NOT_PLACES = ("sales", "marketing", "engineering", "finance", "therapy", "love", "debt",
              "recovery", "retirement", "denial", "a hurry", "management", "the backend",
              "night shifts", "remote work", "python", "a bigger flat", "the office")
# A person's first name, to tell "my manager is leah" (typed without capitals) from "my
# manager is great": the uncased model places names near names and states near states.
PERSON_NAMES = ("Sarah", "Tom", "Priya", "Kenji", "Marcus", "Anna", "David", "Fatima",
                "Olusegun", "Mei")
STATES = ("great", "nice", "away", "sick", "busy", "new", "strict", "amazing", "on leave",
          "pregnant", "awesome", "out today", "the best", "retiring", "leaving", "terrible")
#: How much nearer the names a lower-case word must be than the states.
PERSON_MARGIN = 0.10
#: How much nearer the places a name must be than the words that are not one.
PLACE_MARGIN = 0.05
#: How much nearer the companies a name must be to count as one (unknown names sit in
#: between: only a clear company overrides the place a move verb suggests).
ORG_MARGIN = 0.10


class _NameKinds:
    #: the example sets a name is compared with, each encoded once
    EXAMPLES = {"place": PLACE_NAMES, "org": ORG_NAMES, "not_place": NOT_PLACES,
                "person": PERSON_NAMES, "state": STATES}

    def __init__(self, encode: Any):
        self._encode = encode
        self._sets: dict[str, np.ndarray] | None = None

    def _examples(self) -> None:
        """The example names' vectors, encoded once."""
        if self._sets is None:
            self._sets = {k: np.asarray(self._encode(list(names)), dtype=np.float32)
                          for k, names in self.EXAMPLES.items()}

    def _nearness(self, name: str) -> dict[str, float]:
        """How near `name` is to each set of examples: the mean cosine of its three nearest."""
        self._examples()
        assert self._sets is not None
        v = np.asarray(self._encode([name])[0], dtype=np.float32)
        return {k: float(np.sort(examples @ v)[-3:].mean()) for k, examples in self._sets.items()}

    def kind(self, name: str) -> str | None:
        """"org" when `name` reads clearly as an organisation, else None."""
        near = self._nearness(name)
        return "org" if near["org"] - near["place"] >= ORG_MARGIN else None

    def person_like(self, word: str) -> bool:
        """Whether a word typed without capitals reads as a person's name."""
        near = self._nearness(word)
        return near["person"] - near["state"] >= PERSON_MARGIN

    def place_like(self, name: str) -> bool:
        near = self._nearness(name)
        return near["place"] - max(near["not_place"], near["org"]) >= PLACE_MARGIN


_shared: AttributeClassifier | None = None
_tried = False
_load_lock = threading.Lock()


def load() -> AttributeClassifier | None:
    """The classifier on the packaged MiniLM, or None when the embeddings plugin or its
    model package is not installed (the rules then work alone). Loaded once per process."""
    global _shared, _tried
    with _load_lock:
        if _tried:
            return _shared
        _tried = True
        try:
            from recall_embeddings.engines import MINILM_INT8, available
        except ImportError:
            log.info("stub: no embeddings plugin, statements are read by rules alone")
            return None
        if not available(MINILM_INT8):
            log.info("stub: %s not installed, statements are read by rules alone",
                     MINILM_INT8.distribution)
            return None
        _shared = AttributeClassifier(_SharedEngine(MINILM_INT8).encode)
        return _shared


class _SharedEngine:
    """The packaged MiniLM, resolved at first use (in the worker's thread, never in a tool
    call): by then the dense ranker has usually loaded it, and the classifier runs on that
    session instead of a copy of its own (`engines.shared`)."""

    def __init__(self, spec: Any):
        self._spec = spec
        self._engine: Any = None
        self._lock = threading.Lock()

    def encode(self, texts: Any) -> Any:
        with self._lock:
            if self._engine is None:
                from recall_embeddings.engines import shared

                self._engine = shared(self._spec, 1)
        return self._engine.encode(list(texts), query=False)
