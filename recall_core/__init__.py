"""Recall core: hookspecs, plugin manager, config, the memory service and the MCP server."""

from .hookspecs import hookimpl
from .contracts.storage import Embedder, ExtractionError, Extractor, NotReady, Ranker, Storage

__version__ = "0.1.0"
__all__ = ["hookimpl", "Embedder", "ExtractionError", "Extractor", "NotReady", "Ranker", "Storage",
           "__version__"]
