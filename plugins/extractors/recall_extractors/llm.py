"""What every LLM extractor does the same way, whatever API it speaks.

- Long texts are split (chunking.py) so each call fits the model's context and output budget;
  a piece whose reply is still cut off at max_tokens is split again, down to a floor.
- Calls go through one semaphore (`concurrency`) and one per-minute budget (budget.py).
- Finished pieces are remembered for a while (keyed by model, prompt version, output mode,
  topic and text), and a piece being extracted is shared: when a job is retried after one of
  its pieces failed, or taken over after its lease ran out, the pieces already paid for are
  not paid for again.
- `merge` sends a consolidation cluster, oldest first, through the merge prompt.

A subclass supplies `_request(system, content, tool, description, schema) -> Reply`, one
structured call (with whatever repair its API needs), raising `ExtractionError` on failure
and `OutputCutOff` when the reply was cut off at the output budget.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from recall_core import ExtractedMemory, Extractor, Memory
from recall_core.contracts import ExtractionError, KnownFact, KnownStatement
from recall_core.kit.inventory_text import (earlier_statements_text, known_facts_text,
                                           related_statements)

from .budget import BudgetExceeded, RateBudget, Reservation
from .chunking import estimate_tokens, split_text
from .prompts import load_prompt
from .schema import (EXTRACT_DESCRIPTION, EXTRACT_TOOL, MERGE_DESCRIPTION, MERGE_TOOL,
                     MemoryItem, RecordMemories, RecordReplacing, to_extracted)

_Out = TypeVar("_Out", bound=BaseModel)

# A piece is never split below this many estimated tokens: a reply that is cut off even then
# means max_tokens is set too low for any useful extraction.
MIN_PIECE_TOKENS = 64
_MEMO_SIZE = 512
_MEMO_TTL = 3600.0
# What the prompt costs besides the text (tags, topic), in estimated tokens.
_ENVELOPE_TOKENS = 64


class OutputCutOff(ExtractionError):
    """The reply stopped at the output budget (max_tokens): the piece was too long for it."""


@dataclass
class Reply:
    """One structured answer and what it cost (None where the server does not say)."""

    value: Any
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass
class Usage:
    """Running totals of one extractor (the benchmark reads these)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    pieces: int = 0
    memo_hits: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)


_MAX_BACKOFF = 8.0  # the SDKs' cap on one retry wait, seconds


def call_deadline(timeout: float, max_retries: int) -> float:
    """A hard ceiling on one call, the SDK's retries and backoff included: httpx timeouts are
    per read, so a server that trickles bytes could otherwise hold a job past its lease."""
    backoff = sum(min(0.5 * 2 ** i, _MAX_BACKOFF) for i in range(max_retries))
    return timeout * (max_retries + 1) + backoff + min(5.0, timeout)


def piece_tokens(context_window: int | None, max_tokens: int, prompt: str,
                 chunk_tokens: int | None) -> int:
    """How many estimated tokens of text one call may carry.

    The output restates the input (plus JSON keys and triples), so a piece gets half the output
    budget; and prompt + piece + output must fit the context window. An explicit
    `chunk_tokens` is honoured but still capped by the context window.
    """
    size = chunk_tokens or max(MIN_PIECE_TOKENS, max_tokens // 2)
    if context_window:
        room = context_window - estimate_tokens(prompt) - _ENVELOPE_TOKENS - max_tokens
        if room < MIN_PIECE_TOKENS:
            raise ValueError(
                f"context_window = {context_window} leaves no room for text: the prompt takes "
                f"about {estimate_tokens(prompt)} tokens and max_tokens = {max_tokens} is "
                f"reserved for the reply. Raise context_window (the server's context size) or "
                f"lower max_tokens.")
        size = min(size, room)
    return max(MIN_PIECE_TOKENS, size)


class LLMExtractor(Extractor):
    name = "llm"
    #: The model is told the current facts (`inventory_text.known_facts_text`), to reuse keys.
    reads_known = True
    #: ... and the earlier statements stored without a fact that share a word with the text
    #: (`inventory_text.related_statements`, at most 10), numbered for `replaces`.
    reads_statements = True
    #: Part of the memo key: how the structured output is obtained.
    output_mode = "tool"

    def __init__(self, *, plugin: str, model: str, max_tokens: int, prompt_file: Path | None,
                 merge_prompt_file: Path | None, concurrency: int,
                 calls_per_minute: int | None, tokens_per_minute: int | None,
                 budget_wait: float, chunk_tokens: int | None,
                 context_window: int | None, prompt_extra: str = "",
                 clock: Callable[[], float] = time.monotonic):
        self.plugin = plugin
        self.model = model
        self.max_tokens = max_tokens
        self.prompt, self.prompt_version = load_prompt(
            prompt_file, "extract_v2", "prompt_file", plugin)
        self.merge_prompt, self.merge_prompt_version = load_prompt(
            merge_prompt_file, "merge_v1", "merge_prompt_file", plugin)
        # prompt_extra: what the subclass adds to the system prompt (an output-format appendix).
        self.chunk_tokens = piece_tokens(context_window, max_tokens, self.prompt + prompt_extra,
                                         chunk_tokens)
        self._slots = asyncio.Semaphore(concurrency)
        self.budget = RateBudget(calls_per_minute, tokens_per_minute, budget_wait, clock=clock)
        self.usage = Usage()
        self._clock = clock
        self._memo: OrderedDict[str, tuple[float, list[ExtractedMemory]]] = OrderedDict()
        self._inflight: dict[str, asyncio.Future[list[ExtractedMemory]]] = {}

    async def _request(self, system: str, content: str, tool: str, description: str,
                       schema: type[_Out]) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- extraction -----------------------------------------------------------------------

    async def extract(self, text: str, topic: str = "", known: Sequence[KnownFact] = (),
                      statements: Sequence[KnownStatement] = ()) -> list[ExtractedMemory]:
        if not text.strip():
            return []
        pieces = split_text(text, self.chunk_tokens)
        results = await asyncio.gather(*(self._piece(p, topic, 0, *self._context(p, known,
                                                                                 statements))
                                         for p in pieces), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            # A permanent reason decides the job's fate; otherwise the first one is reported.
            worst = next((e for e in errors if isinstance(e, ExtractionError)
                          and not e.retryable), errors[0])
            if len(pieces) > 1 and isinstance(worst, ExtractionError):
                done = len(pieces) - len(errors)
                raise type(worst)(f"{worst} ({len(errors)} of {len(pieces)} pieces of a long "
                                  f"text failed; the {done} finished ones are kept for the "
                                  f"retry.)", retryable=worst.retryable,
                                  provider=worst.provider) from worst
            raise worst
        return [m for r in results for m in r]  # type: ignore[union-attr]

    @staticmethod
    def _context(piece: str, known: Sequence[KnownFact],
                 statements: Sequence[KnownStatement]) -> tuple[str, tuple[str, ...]]:
        """What the model reads before a piece (known facts, related earlier statements) and
        the ids its numbered statements stand for."""
        earlier = related_statements(piece, [(s.id, s.text) for s in statements])
        return (known_facts_text(known) + earlier_statements_text(earlier),
                tuple(i for i, _ in earlier))

    def _memo_key(self, topic: str, piece: str, context: str) -> str:
        raw = json.dumps([self.plugin, self.model, self.prompt_version, self.output_mode,
                          self.max_tokens, topic, piece, context], ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    async def _piece(self, piece: str, topic: str, depth: int, context: str = "",
                     earlier: tuple[str, ...] = ()) -> list[ExtractedMemory]:
        # The ids too: one text and context in two namespaces names two sets of statements.
        key = self._memo_key(topic, piece, context + "\n".join(earlier))
        now = self._clock()
        hit = self._memo.get(key)
        if hit is not None and now - hit[0] < _MEMO_TTL:
            self._memo.move_to_end(key)
            self.usage.memo_hits += 1
            return [m.model_copy() for m in hit[1]]
        running = self._inflight.get(key)
        if running is not None:
            return [m.model_copy() for m in await asyncio.shield(running)]
        future: asyncio.Future[list[ExtractedMemory]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            out = await self._extract_piece(piece, topic, depth, context, earlier)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody shares it
            raise
        finally:
            self._inflight.pop(key, None)
        future.set_result(out)
        self._memo[key] = (self._clock(), out)
        while len(self._memo) > _MEMO_SIZE:
            self._memo.popitem(last=False)
        return [m.model_copy() for m in out]

    async def _extract_piece(self, piece: str, topic: str, depth: int, context: str = "",
                             earlier: tuple[str, ...] = ()) -> list[ExtractedMemory]:
        content = ((f"<topic>{topic}</topic>\n" if topic else "") + context
                   + f"<text>\n{piece}\n</text>")
        try:
            schema = RecordReplacing if earlier else RecordMemories
            reply = await self._metered(self.prompt + content, lambda: self._request(
                self.prompt, content, EXTRACT_TOOL, EXTRACT_DESCRIPTION, schema))
        except OutputCutOff as exc:
            size = estimate_tokens(piece)
            halves = split_text(piece, max(MIN_PIECE_TOKENS, size // 2 + 1))
            if size // 2 < MIN_PIECE_TOKENS or len(halves) < 2 or depth >= 6:
                raise OutputCutOff(
                    f"{exc} Even a piece of about {size} tokens does not fit: raise "
                    f"[plugins.{self.plugin}] max_tokens.", retryable=False) from None
            self.usage.by_reason["split_after_cutoff"] = \
                self.usage.by_reason.get("split_after_cutoff", 0) + 1
            parts = [await self._piece(h, topic, depth + 1, context, earlier) for h in halves]
            return [m for part in parts for m in part]
        self.usage.pieces += 1
        return [m for m in (to_extracted(i, earlier) for i in reply.value.memories)
                if m is not None]

    async def _metered(self, prompt_text: str, call: Callable[[], Awaitable[Reply]]) -> Reply:
        """Run one request inside the concurrency limit and the per-minute budget, and count
        what it cost."""
        estimate = estimate_tokens(prompt_text)
        async with self._slots:
            reservation = await self._reserve(estimate + min(self.max_tokens, 2 * estimate + 256))
            self.usage.calls += 1
            reply = await call()
            self.usage.input_tokens += reply.input_tokens or 0
            self.usage.output_tokens += reply.output_tokens or 0
            if reply.input_tokens is not None or reply.output_tokens is not None:
                reservation.settle((reply.input_tokens or 0) + (reply.output_tokens or 0))
            return reply

    async def _reserve(self, tokens: int) -> Reservation:
        """Room in the per-minute budget for one call, or the ExtractionError that says why
        not (a retry later, or a setting to change)."""
        try:
            return await self.budget.reserve(tokens)
        except BudgetExceeded as exc:
            if exc.permanent:
                raise ExtractionError(
                    f"Cannot call {self.model}: {exc}. Raise [plugins.{self.plugin}] "
                    f"tokens_per_minute or lower max_tokens / chunk_tokens.",
                    retryable=False) from None
            raise ExtractionError(
                f"Not calling {self.model} yet: {exc}. The job goes back to the queue and is "
                f"retried; raise [plugins.{self.plugin}] calls_per_minute / tokens_per_minute "
                f"if this happens often.", retryable=True) from None

    # -- consolidation --------------------------------------------------------------------

    async def merge(self, memories: Sequence[Memory], topic: str = "") -> ExtractedMemory:
        if not memories:
            raise ExtractionError("merge() needs at least one memory; got an empty cluster.",
                                  retryable=False)
        if len(memories) == 1:
            m = memories[0]
            return ExtractedMemory(text=m.text, type=m.type, importance=m.importance,
                                   entity=m.entity, attribute=m.attribute, value=m.value)
        ordered = sorted(memories, key=lambda m: m.created_at)
        rows = [{"created_at": m.created_at.isoformat(), "type": m.type,
                 "importance": round(m.importance, 3), "entity": m.entity,
                 "attribute": m.attribute, "value": m.value, "text": m.text} for m in ordered]
        content = ((f"<topic>{topic}</topic>\n" if topic else "")
                   + "<memories>\n" + "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
                   + "\n</memories>")
        reply = await self._metered(self.merge_prompt + content, lambda: self._request(
            self.merge_prompt, content, MERGE_TOOL, MERGE_DESCRIPTION, MemoryItem))
        merged = to_extracted(reply.value)
        if merged is None:
            raise ExtractionError(f"Malformed model output from {self.model}: the merged memory "
                                  f"has an empty text.")
        return merged
