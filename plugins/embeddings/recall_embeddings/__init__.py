"""Recall dense ranker: offline sentence-transformers embeddings.

Registers the ranker ``dense`` (settings: ``[plugins.dense]``, see ``DenseSettings``). Its
``embedder`` gives core write-time embeddings; the model loads in the background so neither
start-up nor a tool call waits for it.
"""

from __future__ import annotations

from recall_core import hookimpl

from .embedder import SentenceTransformerEmbedder, load_sentence_transformer
from .ranker import DenseRanker, make_dense
from .settings import DEFAULT_MODEL, DenseSettings, ModelNotFound

__version__ = "0.1.0"
__all__ = ["DEFAULT_MODEL", "DenseRanker", "DenseSettings", "ModelNotFound",
           "SentenceTransformerEmbedder", "load_sentence_transformer", "make_dense",
           "register_rankers"]


@hookimpl
def register_rankers(register):
    register("dense", make_dense, settings=DenseSettings, default_weight=0.7)
