"""Recall extractors: `stub` (rule-based, offline), `haiku` (Claude through the anthropic SDK)
and `openai` (any OpenAI-compatible chat API: OpenAI, Ollama, vLLM, LM Studio, llama.cpp).

Registered through the `recall` entry point like any third-party plugin. The SDKs are imported
only when their extractor is built, so a stub-only server never pays for them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from recall_core import hookimpl
from recall_core import ConfigError

from .settings import HaikuSettings, OpenAISettings, StubSettings
from .stub import StubExtractor

if TYPE_CHECKING:
    from .haiku import HaikuExtractor
    from .openai_extractor import OpenAIExtractor

__all__ = ["HaikuSettings", "OpenAISettings", "StubExtractor", "StubSettings", "make_haiku",
           "make_openai", "make_stub", "register_extractors"]

API_KEY_ENV = "ANTHROPIC_API_KEY"
OPENAI_API = "api.openai.com"
#: Sent where a local server needs no key: the SDK insists on one, local servers ignore it.
NO_KEY = "no-key-needed"


def make_stub(settings: StubSettings | None = None) -> StubExtractor:
    return StubExtractor(settings or StubSettings())


def make_haiku(settings: HaikuSettings | None = None) -> "HaikuExtractor":
    """Build the haiku extractor; ConfigError with the fix when it cannot work."""
    settings = settings or HaikuSettings()
    api_key = os.environ.get(API_KEY_ENV, "").strip()
    if not api_key:
        raise ConfigError(
            f'The "haiku" extractor needs an Anthropic API key, but {API_KEY_ENV} is not set. '
            f"Export it in the server's environment ({API_KEY_ENV}=sk-ant-...; it is never read "
            f'from recall.toml), or use the offline rule-based extractor: extractor = "stub" '
            f"in recall.toml (or RECALL_EXTRACTOR=stub)."
        )
    from .haiku import HaikuExtractor

    return HaikuExtractor(settings, api_key=api_key)


def make_openai(settings: OpenAISettings | None = None) -> "OpenAIExtractor":
    """Build the OpenAI-compatible extractor; ConfigError with the fix when it cannot work.

    The key is optional for any server but OpenAI's own: Ollama, vLLM, LM Studio and llama.cpp
    accept requests without one unless they were started with one.
    """
    settings = settings or OpenAISettings()
    api_key = os.environ.get(settings.api_key_env, "").strip()
    base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL", "").strip() or None
    if not api_key and (base_url is None or OPENAI_API in base_url):
        raise ConfigError(
            f'The "openai" extractor talks to {base_url or "https://" + OPENAI_API + "/v1"}, '
            f"which needs an API key, but {settings.api_key_env} is not set. Export it in the "
            f"server's environment (it is never read from recall.toml), or point "
            f"[plugins.openai] base_url at a local server (e.g. http://127.0.0.1:11434/v1 for "
            f'Ollama), or use the offline extractor: extractor = "stub".')
    from .openai_extractor import OpenAIExtractor

    try:
        return OpenAIExtractor(settings.model_copy(update={"base_url": base_url}),
                               api_key=api_key or NO_KEY)
    except ValueError as exc:  # the context window leaves no room for text
        raise ConfigError(f"[plugins.openai]: {exc}") from None


def _anthropic_key_set() -> bool:
    return bool(os.environ.get(API_KEY_ENV))


@hookimpl
def register_extractors(register) -> None:
    # With `extractor = "auto"` (the default): Claude when its key is set, else the offline
    # rules; the OpenAI-compatible one only when the config names it (it needs a server).
    register("stub", make_stub, settings=StubSettings, automatic=lambda: True, preference=0)
    register("haiku", make_haiku, settings=HaikuSettings, automatic=_anthropic_key_set,
             preference=10)
    register("openai", make_openai, settings=OpenAISettings)
