"""Typed settings of the two extractors, validated from `[plugins.stub]` / `[plugins.haiku]`.

Unknown keys are errors. The Anthropic API key is never a setting: it comes only from the
ANTHROPIC_API_KEY environment variable, so it never lands in a config file.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MODEL = "claude-haiku-4-5"


class StubSettings(BaseModel):
    """The rule-based extractor has nothing to configure (yet); the table must be empty."""

    model_config = ConfigDict(extra="forbid")


class HaikuSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: Anthropic model id.
    model: str = Field(DEFAULT_MODEL, min_length=1)
    #: Seconds per HTTP attempt (connect, read, write). A call, retries included, is also cut
    #: off after timeout x (max_retries + 1) + backoff; the defaults (about 100 s) stay under
    #: the worker's default lease of 120 s, so keep that true if you raise them.
    timeout: float = Field(30.0, gt=0)
    #: SDK retries on 408/409/429/5xx/529 and connection errors, with exponential backoff
    #: (0.5 s doubling, at most 8 s, honouring retry-after). The worker retries the job after.
    max_retries: int = Field(2, ge=0, le=10)
    #: Output budget of one call; raise it if long texts report "cut off at max_tokens".
    max_tokens: int = Field(4096, ge=256, le=64000)
    #: Replacement system prompt for extraction (a file path); default: the packaged
    #: prompts/extract_v1.md.
    prompt_file: Path | None = None
    #: Replacement system prompt for consolidation merges; default: prompts/merge_v1.md.
    merge_prompt_file: Path | None = None
    #: API base URL (a proxy or gateway); default: ANTHROPIC_BASE_URL or the public API.
    base_url: str | None = None
