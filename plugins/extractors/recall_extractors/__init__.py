"""Recall extractors: `stub` (rule-based, offline) and `haiku` (Claude through the anthropic SDK).

Registered through the `recall` entry point like any third-party plugin. The anthropic SDK is
imported only when the haiku extractor is built, so a stub-only server never pays for it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from recall_core import hookimpl
from recall_core.errors import ConfigError

from .settings import HaikuSettings, StubSettings
from .stub import StubExtractor

if TYPE_CHECKING:
    from .haiku import HaikuExtractor

__all__ = ["HaikuSettings", "StubExtractor", "StubSettings", "make_haiku", "make_stub",
           "register_extractors"]

API_KEY_ENV = "ANTHROPIC_API_KEY"


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


@hookimpl
def register_extractors(register) -> None:
    register("stub", make_stub, settings=StubSettings)
    register("haiku", make_haiku, settings=HaikuSettings)
