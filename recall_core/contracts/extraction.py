"""What an extractor promises core: typed memories from text, and merges for consolidation."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from ..models import ExtractedMemory, Memory


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

    @abc.abstractmethod
    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        """Typed memories in `text`; [] for chit-chat. Raise `ExtractionError` on failure."""

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
