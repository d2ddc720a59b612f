"""Errors with a stable code. Each message says what was wrong, what was expected and what to
do next; the envelope carries it to the agent unchanged."""

from __future__ import annotations


class RecallError(Exception):
    """An error a caller can act on. `code` is stable; the message is for humans and models."""

    code = "INTERNAL"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code


class InvalidParam(RecallError):
    code = "INVALID_PARAM"


class TextTooLarge(RecallError):
    code = "TEXT_TOO_LARGE"


class MemoryNotFound(RecallError):
    code = "MEMORY_NOT_FOUND"


class ConfirmRequired(RecallError):
    code = "CONFIRM_REQUIRED"


class EmbeddingsRequired(RecallError):
    code = "EMBEDDINGS_REQUIRED"


class ToolTimeout(RecallError):
    code = "TOOL_TIMEOUT"


class ConfigError(Exception):
    """Start-up configuration problem; the CLI prints it and exits non-zero."""


class PluginError(ConfigError):
    """A plugin failed to load, registered a duplicate, or broke a rule at start-up."""
