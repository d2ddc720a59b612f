"""Typed settings of the extractors, validated from `[plugins.stub]` / `[plugins.haiku]` /
`[plugins.openai]`.

Unknown keys are errors. API keys are never settings: they come only from the environment
(ANTHROPIC_API_KEY; for openai the variable named by `api_key_env`), so they never land in a
config file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_MODEL = "claude-haiku-4-5"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

#: How an OpenAI-compatible server is asked for structured output (see the README's table).
OutputMode = Literal["json_schema", "json_object", "tool", "prompt"]


class StubSettings(BaseModel):
    """The rule-based extractor."""

    model_config = ConfigDict(extra="forbid")

    #: "auto": statements no rule reads go to the attribute classifier on the packaged
    #: MiniLM when the embeddings plugin is installed; "off": rules alone.
    classifier: Literal["auto", "off"] = "auto"


class LLMSettings(BaseModel):
    """What every LLM extractor shares: prompts, output budget, splitting, concurrency, and a
    per-minute budget."""

    model_config = ConfigDict(extra="forbid")

    #: Output budget of one call. Long texts are split so that each piece's extraction fits
    #: it; a reply that is still cut off is split again (see chunk_tokens).
    max_tokens: int = Field(4096, ge=256, le=64000)
    #: Estimated tokens of text per call (one token per 3 bytes, a safe overestimate); default:
    #: half of max_tokens, since an extraction restates its input. Capped by context_window.
    chunk_tokens: int | None = Field(None, ge=64)
    #: Calls this extractor makes at once, across all jobs (the pieces of one long text, and
    #: the worker's concurrent jobs).
    concurrency: int = Field(4, ge=1, le=64)
    #: Per-minute budget of calls and of tokens (prompt + reply); unset = unlimited.
    calls_per_minute: int | None = Field(None, ge=1)
    tokens_per_minute: int | None = Field(None, ge=1000)
    #: Seconds a call may wait for room in the budget before its job goes back to the queue
    #: (a retry, with the worker's backoff) instead of holding its lease.
    budget_wait: float = Field(30.0, ge=0)
    #: Replacement system prompt for extraction (a file path); default: the packaged
    #: prompts/extract_v2.md.
    prompt_file: Path | None = None
    #: Replacement system prompt for consolidation merges; default: prompts/merge_v1.md.
    merge_prompt_file: Path | None = None


class HaikuSettings(LLMSettings):
    #: Anthropic model id.
    model: str = Field(DEFAULT_MODEL, min_length=1)
    #: Seconds per HTTP attempt (connect, read, write). A call, retries included, is also cut
    #: off after timeout x (max_retries + 1) + backoff; the defaults (about 100 s) stay under
    #: the worker's default lease of 120 s, so keep that true if you raise them.
    timeout: float = Field(30.0, gt=0)
    #: SDK retries on 408/409/429/5xx/529 and connection errors, with exponential backoff
    #: (0.5 s doubling, at most 8 s, honouring retry-after). The worker retries the job after.
    max_retries: int = Field(2, ge=0, le=10)
    #: API base URL (a proxy or gateway); default: ANTHROPIC_BASE_URL or the public API.
    base_url: str | None = None


class OpenAISettings(LLMSettings):
    #: The server's OpenAI-compatible API root, e.g. http://127.0.0.1:11434/v1 (Ollama);
    #: default: OPENAI_BASE_URL or https://api.openai.com/v1.
    base_url: str | None = None
    #: Model name as the server knows it (Ollama: "qwen2.5:7b"; vLLM: the served model).
    model: str = Field(DEFAULT_OPENAI_MODEL, min_length=1)
    #: Environment variable holding the API key. Required for api.openai.com; optional for a
    #: local server (then a placeholder is sent, which local servers ignore).
    api_key_env: str = Field("OPENAI_API_KEY", min_length=1)
    #: How to get structured output: "json_schema" (OpenAI, vLLM, Ollama, LM Studio),
    #: "json_object" (JSON mode with the schema attached: llama.cpp / llama-cpp-python),
    #: "tool" (a function call forced by name), "prompt" (no constraint; validation and one
    #: repair only).
    structured_output: OutputMode = "json_schema"
    #: One repair attempt when a reply fails validation: the model sees its reply and the
    #: problems, and answers again.
    repair: bool = True
    #: Sampling temperature; 0 makes extractions repeatable.
    temperature: float = Field(0.0, ge=0, le=2)
    #: The server's context size in tokens (llama.cpp's --n_ctx / Ollama's num_ctx); pieces of
    #: long texts are sized so prompt + piece + max_tokens fit. Unset: no cap (hosted models).
    context_window: int | None = Field(None, ge=512)
    #: Seconds per HTTP attempt. A call, retries included, is also cut off after
    #: timeout x (max_retries + 1) + backoff (about 105 s by default), under the worker's
    #: default lease of 120 s; a slow local model needs both raised together.
    timeout: float = Field(50.0, gt=0)
    #: SDK retries on 408/409/429/5xx and connection errors (0.5 s doubling, at most 8 s).
    max_retries: int = Field(1, ge=0, le=10)
    max_tokens: int = Field(2048, ge=256, le=64000)

    @model_validator(mode="after")
    def _fits(self) -> "OpenAISettings":
        if self.context_window is not None and self.max_tokens >= self.context_window:
            raise ValueError(f"max_tokens ({self.max_tokens}) must be below context_window "
                             f"({self.context_window}): the prompt and the text need room too")
        return self
