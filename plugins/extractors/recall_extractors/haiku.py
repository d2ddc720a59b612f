"""The Claude extractor: the anthropic SDK, a forced tool call, pydantic-validated output.

Retries and per-attempt timeouts are the SDK's own (408/409/429/5xx/529 and connection errors,
exponential backoff honouring retry-after). What is left when they are exhausted becomes an
`ExtractionError`: retryable for transient trouble (the worker re-queues the job), not
retryable for a bad key, a missing model or a refused request (the job fails at once with the
reason, which `store_memory`'s job status then shows).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, TypeVar

import anthropic
from pydantic import BaseModel, ValidationError

from recall_core.contracts import ExtractionError

from .llm import LLMExtractor, OutputCutOff, Reply, call_deadline
from .schema import (EXTRACT_TOOL, MERGE_TOOL, MemoryItem, RecordMemories,  # noqa: F401
                     problems, tool_schema)
from .settings import DEFAULT_MODEL, HaikuSettings

log = logging.getLogger("recall.extractors.haiku")


_Out = TypeVar("_Out", bound=BaseModel)


class HaikuExtractor(LLMExtractor):
    """Extracts and merges memories with a Claude model through a forced tool call."""

    name = "haiku"
    output_mode = "tool"

    def __init__(self, settings: HaikuSettings, *, api_key: str, http_client: Any = None):
        self.settings = settings
        # Claude's context (200k tokens) is never the limit here; the output budget is.
        super().__init__(
            plugin="haiku", model=settings.model, max_tokens=settings.max_tokens,
            prompt_file=settings.prompt_file, merge_prompt_file=settings.merge_prompt_file,
            concurrency=settings.concurrency, calls_per_minute=settings.calls_per_minute,
            tokens_per_minute=settings.tokens_per_minute, budget_wait=settings.budget_wait,
            chunk_tokens=settings.chunk_tokens, context_window=None)
        # An explicit key: the SDK then reads no other credential source (profiles, env).
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=settings.base_url, timeout=settings.timeout,
            max_retries=settings.max_retries, http_client=http_client)
        self.deadline = call_deadline(settings.timeout, settings.max_retries)

    async def aclose(self) -> None:
        await self._client.close()

    async def _request(self, system: str, content: str, tool: str, description: str,
                       schema: type[_Out]) -> Reply:
        try:
            async with asyncio.timeout(self.deadline):
                message = await self._client.messages.create(
                    model=self.model,
                    max_tokens=self.settings.max_tokens,
                    system=system,
                    messages=[{"role": "user", "content": content}],
                    tools=[{"name": tool, "description": description,
                            "input_schema": tool_schema(schema)}],
                    tool_choice={"type": "tool", "name": tool, "disable_parallel_tool_use": True},
                )
        except TimeoutError:
            raise ExtractionError(
                f"The Anthropic API call did not finish within {self.deadline:.0f}s "
                f"({self.settings.max_retries + 1} attempt(s) of {self.settings.timeout:g}s). "
                f"The job will be retried; if this keeps happening raise [plugins.haiku] timeout "
                f"(and the worker's lease_seconds).", retryable=True, provider=True) from None
        except anthropic.APIError as exc:
            raise self._api_error(exc) from exc
        usage = getattr(message, "usage", None)
        return Reply(self._parse(message, tool, schema),
                     getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None))

    def _parse(self, message: Any, tool: str, schema: type[_Out]) -> _Out:
        if message.stop_reason == "max_tokens":
            # The base class splits the piece and tries the halves; only a piece too small to
            # split ends the job, with this message.
            raise OutputCutOff(
                f"The reply of {self.model} was cut off at max_tokens "
                f"({self.settings.max_tokens}).", retryable=False)
        calls = [b for b in message.content if getattr(b, "type", None) == "tool_use"
                 and getattr(b, "name", None) == tool]
        if not calls:
            got = ", ".join(sorted({getattr(b, "type", "?") for b in message.content})) \
                or "no content"
            raise ExtractionError(
                f"Malformed model output from {self.model}: expected a {tool} tool call, got "
                f"{got} (stop_reason {message.stop_reason}).", retryable=True)
        try:
            return schema.model_validate(calls[0].input)
        except ValidationError as exc:
            raise ExtractionError(
                f"Malformed model output from {self.model}: the {tool} input does not match "
                f"its schema ({problems(exc)}).", retryable=True) from None

    def _api_error(self, exc: anthropic.APIError) -> ExtractionError:
        retries = self.settings.max_retries
        after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        if isinstance(exc, anthropic.APITimeoutError):
            return ExtractionError(
                f"The Anthropic API did not answer within {self.settings.timeout:g}s{after}. "
                f"The job will be retried; if this keeps happening raise [plugins.haiku] timeout.",
                retryable=True, provider=True)
        if isinstance(exc, anthropic.APIConnectionError):
            return ExtractionError(
                f"Could not reach the Anthropic API at {self._client.base_url}{after}: {exc}. "
                f"Check the network or [plugins.haiku] base_url; the job will be retried.",
                retryable=True, provider=True)
        if not isinstance(exc, anthropic.APIStatusError):
            return ExtractionError(f"Unexpected answer from the Anthropic API: {exc}. The job "
                                   f"will be retried.", retryable=True, provider=True)
        status = exc.status_code
        reason = exc.api_message or (exc.body if isinstance(exc.body, str) else None) or str(exc)
        detail = f"HTTP {status}" + (f" {exc.type}" if exc.type else "") + f": {reason}"
        if exc.request_id:
            detail += f"; request-id {exc.request_id}"
        if isinstance(exc, anthropic.AuthenticationError):
            return ExtractionError(
                f"Anthropic rejected the API key ({detail}). Set a valid key in ANTHROPIC_API_KEY "
                f"in the server's environment and restart, or use extractor = \"stub\".",
                retryable=False)
        if isinstance(exc, anthropic.PermissionDeniedError):
            return ExtractionError(
                f"The key in ANTHROPIC_API_KEY is not allowed to use model {self.model!r} "
                f"({detail}). Use a key with access, or change [plugins.haiku] model.",
                retryable=False)
        if isinstance(exc, anthropic.NotFoundError):
            example = f' (the default is "{DEFAULT_MODEL}")' if self.model != DEFAULT_MODEL else ""
            return ExtractionError(
                f"Model {self.model!r} was not found ({detail}). Set [plugins.haiku] model to a "
                f"model your key can use{example}.", retryable=False)
        if isinstance(exc, anthropic.RateLimitError):
            return ExtractionError(f"Rate limited by the Anthropic API{after} ({detail}). The job "
                                   f"will be retried.", retryable=True, provider=True)
        if status == 529 or exc.type == "overloaded_error":
            return ExtractionError(f"The Anthropic API is overloaded{after} ({detail}). The job "
                                   f"will be retried.", retryable=True, provider=True)
        if status >= 500 or status in (408, 409):
            return ExtractionError(f"The Anthropic API failed{after} ({detail}). The job will be "
                                   f"retried.", retryable=True, provider=True)
        # 400, 402, 413, 422...: the same request will be refused again.
        return ExtractionError(
            f"The Anthropic API refused the request ({detail}). Fix the cause (model "
            f"{self.model!r}, max_tokens {self.settings.max_tokens}, account or billing) and "
            f"store the text again.", retryable=False)
