"""Recall core: the public API plugins are written against.

A plugin imports from here (and, where it needs them, from three declared public
subpackages: `recall_core.contracts` for the full contracts, `recall_core.kit` for helpers
shared with core such as the vector index and the text rules, `recall_core.testing` for the
conformance suites). Everything else in recall_core is internal and may move; a test keeps
the bundled plugins to this surface.
"""

__version__ = "0.1.0"

from .contracts import (Capabilities, Embedder, ExtractionError, Extractor, NotReady, Ranker,  # noqa: E402
                        Storage, WriteTx)
from .config import RecallConfig, load_config  # noqa: E402
from .errors import (ConfigError, InvalidParam, PluginError, RecallError, StorageConflict,  # noqa: E402
                     TransientConflict)
from .hookspecs import hookimpl  # noqa: E402
from .models import (MEMORY_TYPES, ExtractedMemory, Memory, Operation, ScoredId,  # noqa: E402
                     ToolCallRecord, exhausted_message, new_id, utcnow)
from .server.mcp.envelope import error as error_envelope  # noqa: E402
from .server.mcp.envelope import ok as ok_envelope  # noqa: E402

__all__ = [
    "__version__", "hookimpl",
    # the contracts
    "Capabilities", "Embedder", "ExtractionError", "Extractor", "NotReady", "Ranker", "Storage",
    "WriteTx",
    # data shapes
    "MEMORY_TYPES", "ExtractedMemory", "Memory", "Operation", "ScoredId", "ToolCallRecord",
    "exhausted_message", "new_id", "utcnow",
    # the server's configuration (recall.toml, RECALL_* variables, flags)
    "RecallConfig", "load_config",
    # errors
    "ConfigError", "InvalidParam", "PluginError", "RecallError", "StorageConflict",
    "TransientConflict",
    # the envelope every tool answers with ({status, data, error, code})
    "ok_envelope", "error_envelope",
]
