"""The Claude extractor: the anthropic SDK, a forced tool call, pydantic-validated output.

Retries and per-attempt timeouts are the SDK's own (408/409/429/5xx/529 and connection errors,
exponential backoff honouring retry-after). What is left when they are exhausted becomes an
`ExtractionError`: retryable for transient trouble (the worker re-queues the job), not
retryable for a bad key, a missing model or a refused request (the job fails at once with the
reason, which `store_memory`'s job status then shows).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

import anthropic
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from recall_core.errors import ConfigError
from recall_core.models import ExtractedMemory, Memory
from recall_core.protocols import ExtractionError

from .settings import DEFAULT_MODEL, HaikuSettings
from .vocabulary import canonical_triple

log = logging.getLogger("recall.extractors.haiku")

EXTRACT_TOOL = "record_memories"
MERGE_TOOL = "record_merged_memory"
_MAX_BACKOFF = 8.0  # the SDK's cap on one retry wait, seconds


# -- output schema ----------------------------------------------------------------------------

class MemoryItem(BaseModel):
    """One memory as the model records it."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, description="The memory as one short standalone sentence, "
                      "in the original wording.")
    type: Literal["preference", "fact", "decision", "procedure"]
    importance: float = Field(ge=0.0, le=1.0, description="How much this matters later, 0..1.")
    entity: str | None = Field(None, description='"user" for the speaker, "team" for we/our, '
                               "else the lowercase name; null when there is no triple.")
    attribute: str | None = Field(None, description="Canonical snake_case attribute; null when "
                                  "there is no triple.")
    value: str | None = Field(None, description="The current value as written; null when "
                              "there is no triple.")

    @field_validator("type", mode="before")
    @classmethod
    def _lower_type(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("importance", mode="before")
    @classmethod
    def _clamp(cls, v: Any) -> Any:
        # 1.2 is a model's way of saying "very": clamp rather than fail the job over it.
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return min(1.0, max(0.0, float(v)))
        return v

    @field_validator("value", mode="before")
    @classmethod
    def _str_value(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class RecordMemories(BaseModel):
    """Input of the record_memories tool."""

    model_config = ConfigDict(extra="ignore")

    memories: list[MemoryItem] = Field(description="Every memory in the text; empty for "
                                       "chit-chat.")


def tool_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with $refs inlined and titles dropped: self-contained and short,
    which is what tool input schemas should be."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: ({name: resolve(sub) for name, sub in v.items()} if k == "properties"
                        else resolve(v))
                    for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


# -- prompts ----------------------------------------------------------------------------------

def load_prompt(override: Path | None, builtin: str, setting: str) -> tuple[str, str]:
    """(prompt text, version). Built-in prompts are versioned by file name (`extract_v1`); an
    override is versioned by its name and content hash, so stored results can be traced to
    the exact prompt that produced them."""
    if override is None:
        text = resources.files("recall_extractors").joinpath(f"prompts/{builtin}.md").read_text(
            encoding="utf-8")
        return text, builtin
    path = Path(override).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"[plugins.haiku] {setting} = {str(override)!r} cannot be read "
            f"({exc.strerror or exc}). "
            f"Point it at an existing UTF-8 text file, or remove the key to use the built-in "
            f"prompt {builtin}.md.") from None
    if not text.strip():
        raise ConfigError(f"[plugins.haiku] {setting} = {str(override)!r} is empty. Write the "
                          f"prompt into it, or remove the key to use the built-in {builtin}.md.")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return text, f"custom:{path.name}@{digest}"


# -- the extractor ----------------------------------------------------------------------------

_Out = TypeVar("_Out", bound=BaseModel)


class HaikuExtractor:
    """Extracts and merges memories with a Claude model through a forced tool call."""

    name = "haiku"

    def __init__(self, settings: HaikuSettings, *, api_key: str, http_client: Any = None):
        self.settings = settings
        self.model = settings.model
        self.prompt, self.prompt_version = load_prompt(
            settings.prompt_file, "extract_v1", "prompt_file")
        self.merge_prompt, self.merge_prompt_version = load_prompt(
            settings.merge_prompt_file, "merge_v1", "merge_prompt_file")
        # An explicit key: the SDK then reads no other credential source (profiles, env).
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=settings.base_url, timeout=settings.timeout,
            max_retries=settings.max_retries, http_client=http_client)
        backoff = sum(min(0.5 * 2 ** i, _MAX_BACKOFF) for i in range(settings.max_retries))
        # A hard ceiling on one call, retries included: httpx timeouts are per read, so a
        # server that trickles bytes could otherwise hold a job past its lease.
        self.deadline = settings.timeout * (settings.max_retries + 1) + backoff \
            + min(5.0, settings.timeout)

    async def aclose(self) -> None:
        await self._client.close()

    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        if not text.strip():
            return []
        content = (f"<topic>{topic}</topic>\n" if topic else "") + f"<text>\n{text}\n</text>"
        out = await self._call(self.prompt, content, EXTRACT_TOOL,
                               "Record the memories found in the text.", RecordMemories)
        return [m for m in (_to_extracted(item) for item in out.memories) if m is not None]

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
        item = await self._call(self.merge_prompt, content, MERGE_TOOL,
                                "Record the one memory that replaces the cluster.", MemoryItem)
        merged = _to_extracted(item)
        if merged is None:
            raise ExtractionError(f"Malformed model output from {self.model}: the merged memory "
                                  f"has an empty text.")
        return merged

    async def _call(self, system: str, content: str, tool: str, description: str,
                    schema: type[_Out]) -> _Out:
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
                f"(and the worker's lease_seconds).", retryable=True) from None
        except anthropic.APIError as exc:
            raise self._api_error(exc) from exc
        return self._parse(message, tool, schema)

    def _parse(self, message: Any, tool: str, schema: type[_Out]) -> _Out:
        cut = (f" The output was cut off at max_tokens ({self.settings.max_tokens}); raise "
               f"[plugins.haiku] max_tokens." if message.stop_reason == "max_tokens" else "")
        calls = [b for b in message.content if getattr(b, "type", None) == "tool_use"
                 and getattr(b, "name", None) == tool]
        if not calls:
            got = ", ".join(sorted({getattr(b, "type", "?") for b in message.content})) \
                or "no content"
            raise ExtractionError(
                f"Malformed model output from {self.model}: expected a {tool} tool call, got "
                f"{got} (stop_reason {message.stop_reason}).{cut}", retryable=True)
        try:
            return schema.model_validate(calls[0].input)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors()[:5])
            raise ExtractionError(
                f"Malformed model output from {self.model}: the {tool} input does not match "
                f"its schema ({problems}).{cut}", retryable=True) from None

    def _api_error(self, exc: anthropic.APIError) -> ExtractionError:
        retries = self.settings.max_retries
        after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        if isinstance(exc, anthropic.APITimeoutError):
            return ExtractionError(
                f"The Anthropic API did not answer within {self.settings.timeout:g}s{after}. "
                f"The job will be retried; if this keeps happening raise [plugins.haiku] timeout.",
                retryable=True)
        if isinstance(exc, anthropic.APIConnectionError):
            return ExtractionError(
                f"Could not reach the Anthropic API at {self._client.base_url}{after}: {exc}. "
                f"Check the network or [plugins.haiku] base_url; the job will be retried.",
                retryable=True)
        if not isinstance(exc, anthropic.APIStatusError):
            return ExtractionError(f"Unexpected answer from the Anthropic API: {exc}. The job "
                                   f"will be retried.", retryable=True)
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
                                   f"will be retried.", retryable=True)
        if status == 529 or exc.type == "overloaded_error":
            return ExtractionError(f"The Anthropic API is overloaded{after} ({detail}). The job "
                                   f"will be retried.", retryable=True)
        if status >= 500 or status in (408, 409):
            return ExtractionError(f"The Anthropic API failed{after} ({detail}). The job will be "
                                   f"retried.", retryable=True)
        # 400, 402, 413, 422...: the same request will be refused again.
        return ExtractionError(
            f"The Anthropic API refused the request ({detail}). Fix the cause (model "
            f"{self.model!r}, max_tokens {self.settings.max_tokens}, account or billing) and "
            f"store the text again.", retryable=False)


def _to_extracted(item: MemoryItem) -> ExtractedMemory | None:
    text = " ".join(item.text.split())
    if not text:
        return None
    triple = canonical_triple(item.entity, item.attribute, item.value)
    if triple is None and (item.entity or item.attribute or item.value):
        log.debug("dropping partial triple %r/%r/%r", item.entity, item.attribute, item.value)
    return ExtractedMemory(
        text=text, type=item.type, importance=item.importance,
        entity=triple[0] if triple else None, attribute=triple[1] if triple else None,
        value=triple[2] if triple else None)
