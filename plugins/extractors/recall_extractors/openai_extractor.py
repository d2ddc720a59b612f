"""The OpenAI-compatible extractor: any server that speaks the chat completions API (OpenAI,
Ollama, vLLM, LM Studio, llama.cpp) through the official `openai` SDK.

Structured output is obtained the way the server supports it (`structured_output`):

- `json_schema`: `response_format` with the schema in strict form (OpenAI, vLLM, Ollama,
  LM Studio constrain generation to it);
- `json_object`: JSON mode with the schema attached as `response_format.schema`, which
  llama.cpp's servers turn into a grammar (their `json_schema` answers HTTP 500); servers that
  ignore the attached schema still see it in the prompt;
- `tool`: a function call forced by name;
- `prompt`: nothing enforced; the schema is in the prompt.

Whatever the mode, the reply is parsed and validated against the same pydantic models as the
Haiku extractor's (a grammar does not enforce min/max; small models drift from the shape). An
invalid reply gets one repair attempt: the model sees its reply and what was wrong. A reply
that is still invalid never becomes a memory: the job fails with a retryable error that keeps
the start of the reply, so an operator can see what the model said.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from recall_core.contracts import ExtractionError

from .chunking import estimate_tokens
from .llm import LLMExtractor, OutputCutOff, Reply, call_deadline
from .openai_errors import api_error
from .prompts import json_appendix
from .schema import (EXTRACT_DESCRIPTION, EXTRACT_TOOL, RecordMemories, problems,
                     strict_schema, tool_schema)
from .settings import OpenAISettings

log = logging.getLogger("recall.extractors.openai")

_Out = TypeVar("_Out", bound=BaseModel)
#: How much of a bad reply is kept on the job's error.
REPLY_EXCERPT = 300

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


class MalformedReply(Exception):
    def __init__(self, problem: str, raw: str):
        super().__init__(problem)
        self.problem = problem
        self.raw = raw


def excerpt(raw: str, limit: int = REPLY_EXCERPT) -> str:
    flat = " ".join(raw.split())
    return flat if len(flat) <= limit else flat[:limit] + f"... ({len(flat)} chars)"


def parse_reply(raw: str, schema: type[_Out]) -> _Out:
    """The reply as `schema`, or MalformedReply saying what is wrong with it.

    Lenient where the meaning is unambiguous: a code fence or a reasoning model's <think>
    block around the JSON, prose before it, a bare list of memories instead of the object
    that holds them, or one memory where a list was asked for.
    """
    text = _FENCE.sub("", _THINK.sub("", raw).strip()).strip()
    if not text:
        raise MalformedReply("the reply is empty", raw)
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            raise MalformedReply("the reply is not JSON", raw) from None
        try:
            data, _ = json.JSONDecoder().raw_decode(text[start:])
        except json.JSONDecodeError as exc:
            raise MalformedReply(f"the reply is not valid JSON ({exc.msg} at char "
                                 f"{exc.pos + start})", raw) from None
    if issubclass(schema, RecordMemories):
        if isinstance(data, list):
            data = {"memories": data}
        elif isinstance(data, dict) and "memories" not in data and "text" in data:
            data = {"memories": [data]}
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise MalformedReply(f"the JSON does not match the schema ({problems(exc)})",
                             raw) from None


class OpenAIExtractor(LLMExtractor):
    """Extracts and merges memories through an OpenAI-compatible chat completions API."""

    name = "openai"

    def __init__(self, settings: OpenAISettings, *, api_key: str, http_client: Any = None):
        self.settings = settings
        self.output_mode = settings.structured_output
        super().__init__(
            plugin="openai", model=settings.model, max_tokens=settings.max_tokens,
            prompt_file=settings.prompt_file, merge_prompt_file=settings.merge_prompt_file,
            concurrency=settings.concurrency, calls_per_minute=settings.calls_per_minute,
            tokens_per_minute=settings.tokens_per_minute, budget_wait=settings.budget_wait,
            chunk_tokens=settings.chunk_tokens, context_window=settings.context_window,
            prompt_extra=self._format(EXTRACT_TOOL, EXTRACT_DESCRIPTION, RecordMemories)[0])
        self._client = openai.AsyncOpenAI(
            api_key=api_key, base_url=settings.base_url, timeout=settings.timeout,
            max_retries=settings.max_retries, http_client=http_client)
        self.deadline = call_deadline(settings.timeout, settings.max_retries)

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    async def aclose(self) -> None:
        await self._client.close()

    def _format(self, tool: str, description: str, schema: type[BaseModel]
                ) -> tuple[str, dict[str, Any]]:
        """(system prompt appendix, request keywords) for the configured output mode."""
        mode = self.output_mode
        if mode == "json_schema":
            return json_appendix(tool, {}, with_schema=False), {"response_format": {
                "type": "json_schema", "json_schema": {
                    "name": tool, "description": description, "strict": True,
                    "schema": strict_schema(schema)}}}
        if mode == "json_object":
            plain = tool_schema(schema)
            return json_appendix(tool, plain, with_schema=True), {
                "response_format": {"type": "json_object", "schema": plain}}
        if mode == "tool":
            return "", {
                "tools": [{"type": "function", "function": {
                    "name": tool, "description": description,
                    "parameters": tool_schema(schema)}}],
                "tool_choice": {"type": "function", "function": {"name": tool}}}
        return json_appendix(tool, tool_schema(schema), with_schema=True), {}

    async def _request(self, system: str, content: str, tool: str, description: str,
                       schema: type[_Out]) -> Reply:
        appendix, fmt = self._format(tool, description, schema)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system + appendix},
                                          {"role": "user", "content": content}]
        completion = await self._create(messages, fmt)
        raw, finish = self._raw(completion, tool)
        tokens_in, tokens_out = _usage(completion)
        try:
            return Reply(parse_reply(raw, schema), tokens_in, tokens_out)
        except MalformedReply as bad:
            if finish == "length":
                raise OutputCutOff(
                    f"The reply of {self.model} was cut off at max_tokens "
                    f"({self.settings.max_tokens}) and is not valid: {bad.problem}.",
                    retryable=False) from None
            if not self.settings.repair:
                raise self._malformed(bad, repaired=False) from None
            first = bad
        log.info("reply of %s failed validation (%s); asking once for a repair", self.model,
                 first.problem)
        messages += [
            {"role": "assistant", "content": first.raw},
            {"role": "user", "content": (
                f"That reply cannot be used: {first.problem}. Answer again with only the "
                f"corrected input of the `{tool}` tool as one JSON object.")}]
        await self._reserve(estimate_tokens(system + content + first.raw)
                            + self.settings.max_tokens // 2)
        self.usage.calls += 1
        self.usage.by_reason["repair"] = self.usage.by_reason.get("repair", 0) + 1
        completion = await self._create(messages, fmt)
        raw, finish = self._raw(completion, tool)
        more_in, more_out = _usage(completion)
        self.usage.input_tokens += more_in or 0
        self.usage.output_tokens += more_out or 0
        try:
            value = parse_reply(raw, schema)
        except MalformedReply as bad:
            raise self._malformed(bad, repaired=True, cut=finish == "length") from None
        self.usage.by_reason["repaired"] = self.usage.by_reason.get("repaired", 0) + 1
        return Reply(value, tokens_in, tokens_out)

    def _malformed(self, bad: MalformedReply, *, repaired: bool, cut: bool = False
                   ) -> ExtractionError:
        how = " after one repair attempt" if repaired else ""
        hint = (f" The reply was cut off at max_tokens ({self.settings.max_tokens})."
                if cut else "")
        if self.output_mode == "prompt":
            hint += (' Nothing constrains the output with structured_output = "prompt": use '
                     '"json_schema", "json_object" or "tool" if the server supports one.')
        # Retryable: sampling, a busy server or a half-written reply may go better next time;
        # the worker's max_attempts bounds the cost.
        return ExtractionError(
            f"Malformed model output from {self.model}{how}: {bad.problem}.{hint} "
            f"Nothing was stored from it. Reply: {excerpt(bad.raw)!r}", retryable=True)

    async def _create(self, messages: list[dict[str, Any]], fmt: dict[str, Any]) -> Any:
        try:
            async with asyncio.timeout(self.deadline):
                return await self._client.chat.completions.create(
                    model=self.model, messages=messages, max_tokens=self.settings.max_tokens,
                    temperature=self.settings.temperature, **fmt)
        except TimeoutError:
            raise ExtractionError(
                f"The call to {self.model} at {self.base_url} did not finish within "
                f"{self.deadline:.0f}s ({self.settings.max_retries + 1} attempt(s) of "
                f"{self.settings.timeout:g}s). The job will be retried; if this keeps happening "
                f"raise [plugins.openai] timeout (and the worker's lease_seconds).",
                retryable=True, provider=True) from None
        except openai.APIError as exc:
            raise api_error(exc, self) from exc
        except (ValueError, TypeError) as exc:
            # The SDK decodes a 200 body as JSON before any check of its own: a proxy's HTML
            # error page arrives here as a JSONDecodeError.
            raise ExtractionError(
                f"{self.base_url} answered with something that is not a chat completion "
                f"({type(exc).__name__}: {excerpt(str(exc), 200)}). Check [plugins.openai] "
                f"base_url; the job will be retried.", retryable=True, provider=True) from None

    def _raw(self, completion: Any, tool: str) -> tuple[str, str | None]:
        """(the reply's JSON text, finish_reason): a forced tool call's arguments, else the
        message content."""
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise ExtractionError(f"Malformed answer from {self.base_url}: no choices in the "
                                  f"chat completion. The job will be retried.", retryable=True)
        choice = choices[0]
        message = choice.message
        for call in getattr(message, "tool_calls", None) or []:
            function = getattr(call, "function", None)
            if function is not None and function.name == tool:
                return function.arguments or "", choice.finish_reason
        return message.content or "", choice.finish_reason


def _usage(completion: Any) -> tuple[int | None, int | None]:
    usage = getattr(completion, "usage", None)
    return (getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
