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


class Forbidden(RecallError):
    """The credential is valid but lacks the scope the operation needs
    (`access.tool_scopes.require_scope` names the scope and how to get a token with it)."""

    code = "FORBIDDEN"


class EmbeddingsRequired(RecallError):
    code = "EMBEDDINGS_REQUIRED"


class ToolTimeout(RecallError):
    code = "TOOL_TIMEOUT"


class StorageFault(RecallError):
    """The database cannot take this call: full, read-only or unreachable. Raised by core
    (memory/storage_faults.py) from what the backend recognised (`Storage.classify_failure`);
    nothing of the call was written, and what was acknowledged before stays stored. `kind`
    is "full", "read_only" or "unavailable"."""

    code = "STORAGE_UNAVAILABLE"
    kind = "unavailable"


class StorageFull(StorageFault):
    code = "STORAGE_FULL"
    kind = "full"


class StorageReadOnly(StorageFault):
    code = "STORAGE_READ_ONLY"
    kind = "read_only"


class StorageUnavailable(StorageFault):
    code = "STORAGE_UNAVAILABLE"
    kind = "unavailable"


class Busy(RecallError):
    """Refused for now, not for good: `retry_after` (seconds) goes to the caller in the
    envelope's data, so an agent can wait that long instead of guessing."""

    def __init__(self, message: str, retry_after: float):
        super().__init__(message)
        self.retry_after = round(max(0.0, retry_after), 3)


class RateLimited(Busy):
    code = "RATE_LIMITED"


class QueueFull(Busy):
    code = "QUEUE_FULL"


class ConfigError(Exception):
    """Start-up configuration problem; the CLI prints it and exits non-zero."""


class PluginError(ConfigError):
    """A plugin failed to load, registered a duplicate, or broke a rule at start-up."""


class StorageConflict(RecallError):
    """A write the database refused because it would break an invariant: a memory id that
    exists already (`duplicate_id`), or a second current row for one (namespace, entity,
    attribute) (`second_current`). The transaction was rolled back; nothing was written."""

    code = "STORAGE_CONFLICT"

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


class StaleClaim(Exception):
    """Raised inside a write transaction when the job's claim went stale (another worker
    re-ran or finished it): the transaction rolls back and nothing is written."""


class NamespaceErased(RecallError):
    """The namespace was erased while this write was in flight: nothing is written."""

    code = "NAMESPACE_ERASED"


class TransientConflict(Exception):
    """The database aborted a write transaction to break a deadlock or a serialization
    conflict. It was rolled back entirely, so running it again is safe
    (`writes.transaction` does, a few times)."""
