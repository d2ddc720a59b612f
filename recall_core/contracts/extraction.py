"""What an extractor promises core: typed memories from text, and merges for consolidation."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import NamedTuple

from ..models import ExtractedMemory, Memory


class KnownFact(NamedTuple):
    """A fact already current in the namespace: (entity, attribute, value) as stored, and the
    text of the memory that states it ("" when not given)."""

    entity: str
    attribute: str
    value: str
    text: str = ""


class KnownStatement(NamedTuple):
    """A current memory of the namespace that states no fact (no triple), newest first: what
    was said before in words no rule keyed ("We monitor with Nagios"), so a later statement
    that gives the fact a new value can say which earlier statement it replaces."""

    id: str
    text: str


class Extractor(abc.ABC):
    """Turns stored text into typed memories. Subclass it; `extract` and `merge` are required.

    `model` and `prompt_version` (default "") are recorded as the provenance of the memories
    an extractor makes (`recall status` says what made them)."""

    #: The extractor's name, as registered and as `extractor` in the config names it.
    name: str = ""
    #: The model it asks, if any.
    model: str = ""
    #: The version of its prompt or rules, changed whenever their output changes.
    prompt_version: str = ""
    #: True: `extract` accepts `known=`, the namespace's current facts about the subjects the
    #: text may be about, so a statement of a new value can reuse the stored fact's key ("I'm
    #: at Globex now" after user.employer = Acme). Core passes `known` only to extractors that
    #: set this, so an extractor written against `extract(text, topic)` keeps working.
    reads_known: bool = False
    #: True (with `reads_known`): `extract` also accepts `statements=`, the namespace's newest
    #: current memories that state no fact (`KnownStatement`), and may name in a memory's
    #: `replaces` the ids of those that stated an earlier value of its single-valued fact.
    #: Core ends them when the memory is written, as a superseded value is ended.
    reads_statements: bool = False

    @abc.abstractmethod
    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        """Typed memories in `text`; [] for chit-chat. Raise `ExtractionError` on failure.

        With `reads_known = True`, also accept `known: Sequence[KnownFact] = ()`: a small,
        bounded list of facts current before this text (newest first; possibly empty). They
        are context, never output: return only what `text` says. Reuse a known fact's
        (entity, attribute) for a statement that gives it a new value; when unsure, use a key
        of your own (a missed supersession is cheaper than a lost fact).

        With `reads_statements = True`, also accept `statements: Sequence[KnownStatement] =
        ()`; set `ExtractedMemory.replaces` only on a memory with a single-valued fact, only to
        ids given, and only when sure the statement gave that fact's earlier value."""

    @abc.abstractmethod
    async def merge(self, memories: Sequence[Memory], topic: str = "") -> ExtractedMemory:
        """One canonical memory that says what the cluster says (consolidation)."""


class ExtractionError(Exception):
    """An extractor failure. `retryable=False` fails the job at once (e.g. bad API key).

    `provider=True`: the model provider failed (unreachable, timed out, overloaded, 5xx, rate
    limited), not the job: the worker gives the job back with its attempt unspent, and after
    several in a row pauses extraction until the provider answers (jobs/breaker.py). Leave it
    False for what the job's own text or output caused (malformed output, too long)."""

    def __init__(self, message: str, retryable: bool = True, *, provider: bool = False):
        super().__init__(message)
        self.retryable = retryable
        self.provider = provider
