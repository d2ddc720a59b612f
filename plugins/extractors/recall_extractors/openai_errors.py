"""What an `openai` SDK error means for the job: retry later, split the text, or stop.

Retries and backoff are the SDK's own (408/409/429/5xx and connection errors). What is left
when they are exhausted is mapped here. The messages name the server, since with
OpenAI-compatible servers "which one" is the first question.
"""

from __future__ import annotations

import re
from typing import Protocol

import openai

from recall_core.contracts import ExtractionError

from .llm import OutputCutOff
from .settings import OpenAISettings


class Endpoint(Protocol):
    """What an error message names of the extractor that met it (an OpenAIExtractor)."""

    model: str
    base_url: str
    settings: OpenAISettings


# How servers say "the prompt does not fit the context": OpenAI and vLLM
# (context_length_exceeded / "maximum context length"), llama-cpp-python ("exceed context
# window"), llama.cpp's llama-server ("exceeds the available context size"), Ollama, LM Studio.
_CONTEXT = re.compile(r"context[_ ]length|context (window|size)|maximum context|too many tokens"
                      r"|exceeds? (the )?(available )?context", re.I)
_FORMAT = re.compile(r"response_format|json_schema|tool_choice|tools?\b|grammar", re.I)
_MODES = {"json_schema": 'structured_output = "json_object" (llama.cpp) or "tool"',
          "json_object": 'structured_output = "json_schema" or "tool"',
          "tool": 'structured_output = "json_schema" or "json_object"',
          "prompt": "another model"}


def api_error(exc: openai.APIError, ex: Endpoint) -> ExtractionError:
    s = ex.settings
    after = (f" after {s.max_retries} retr{'y' if s.max_retries == 1 else 'ies'}"
             if s.max_retries else "")
    where = f"{ex.base_url} (model {ex.model!r})"
    if isinstance(exc, openai.APITimeoutError):
        return ExtractionError(
            f"{where} did not answer within {s.timeout:g}s{after}. The job will be retried; if "
            f"this keeps happening raise [plugins.openai] timeout (a local model on a CPU can "
            f"need minutes for a long reply).", retryable=True, provider=True)
    if isinstance(exc, openai.APIConnectionError):
        return ExtractionError(
            f"Could not reach {where}{after}: {exc}. Check that the server is running and "
            f"[plugins.openai] base_url (it ends in /v1 for most servers); the job will be "
            f"retried.", retryable=True, provider=True)
    if not isinstance(exc, openai.APIStatusError):
        return ExtractionError(f"Unexpected answer from {where}: {exc}. The job will be "
                               f"retried.", retryable=True, provider=True)
    status = exc.status_code
    body = exc.body if isinstance(exc.body, dict) else {}
    reason = (exc.message or str(body) or str(exc)).strip()
    if len(reason) > 400:
        reason = reason[:400] + "..."
    detail = f"HTTP {status}" + (f" {exc.code}" if exc.code else "") + f": {reason}"
    if isinstance(exc, openai.AuthenticationError):
        return ExtractionError(
            f"{where} rejected the API key ({detail}). Put a valid key in the environment "
            f"variable {s.api_key_env} (set [plugins.openai] api_key_env to use another one) "
            f"and restart.", retryable=False)
    if isinstance(exc, openai.PermissionDeniedError):
        return ExtractionError(
            f"The API key is not allowed to use model {ex.model!r} at {ex.base_url} "
            f"({detail}). Use a key with access, or change [plugins.openai] model.",
            retryable=False)
    if isinstance(exc, openai.NotFoundError):
        return ExtractionError(
            f"{where} answered 404 ({detail}): the model is not served there, or base_url "
            f"misses its path (most servers want .../v1). Check [plugins.openai] model and "
            f"base_url (Ollama: pull the model first).", retryable=False)
    if status == 429:
        if exc.code == "insufficient_quota":
            return ExtractionError(
                f"{where} says the account has no quota left ({detail}). Add credit or use "
                f"another key; retrying will not help.", retryable=False)
        return ExtractionError(f"Rate limited by {where}{after} ({detail}). The job will be "
                               f"retried; set [plugins.openai] calls_per_minute / "
                               f"tokens_per_minute to stay under the limit.", retryable=True,
                               provider=True)
    if status in (400, 413, 422) and _CONTEXT.search(reason):
        # The base class splits the piece and tries again; only a piece too small to split
        # ends the job with this message.
        return OutputCutOff(
            f"{where} says the request does not fit its context ({detail}). Set "
            f"[plugins.openai] context_window to the server's context size (or lower "
            f"max_tokens) so texts are split to fit.", retryable=False)
    hint = ""
    if _FORMAT.search(reason) or (status >= 500 and s.structured_output in ("json_schema",)):
        hint = (f" If this server does not support structured_output = "
                f"{s.structured_output!r}, try {_MODES[s.structured_output]}.")
    if status >= 500 or status in (408, 409):
        return ExtractionError(f"{where} failed{after} ({detail}). The job will be retried."
                               f"{hint}", retryable=True, provider=True)
    return ExtractionError(
        f"{where} refused the request ({detail}).{hint} Fix the cause and store the text "
        f"again.", retryable=False)
