"""Embedders that never make the event loop or a tool call wait.

`PackagedEmbedder` runs a torch-free engine whose weights ship in a package (`engines`: the
default install). `SentenceTransformerEmbedder` runs any local sentence-transformers model
(the `[torch]` extra). Both share `BackgroundEmbedder`: the model loads in a daemon thread started by the constructor; until it is ready (or after
it failed) `embed` raises `NotReady` at once, and search answers from the other rankers.
Encoding runs in a worker thread, one chunk of `batch_size` texts at a time, so a search
query waits behind at most one chunk of a large write-time batch.

For sentence-transformers models two backends compute the same vectors: onnxruntime (`onnx_backend`, an export of the model
cached on disk and checked against torch when loaded) and sentence-transformers on torch.
`backend = "auto"` picks onnxruntime when it can and says why when it cannot.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from recall_core import Embedder, NotReady
from recall_core.contracts import REFERENCE_TOPIC_SCALE

from .engines import MINILM_INT8
from .settings import DenseSettings, ModelNotFound

#: MiniLM's calibration, also used for sentence-transformers models without their own.
MINILM_SCALE = MINILM_INT8.scale
QUERY_CACHE = 64

log = logging.getLogger("recall.embeddings")

# Builds the model object from settings. Tests inject one that can be held or made to fail;
# production always uses `load_sentence_transformer`.
Loader = Callable[[DenseSettings], Any]


def load_sentence_transformer(settings: DenseSettings) -> Any:
    """Load the configured model from disk, with every hub download switched off."""
    path = settings.resolve_model_path()
    # Belt and braces: huggingface_hub reads these at import time, local_files_only covers
    # the case where it was imported before us.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    if settings.threads is not None:
        torch.set_num_threads(settings.threads)
    return SentenceTransformer(str(path), device=settings.device, local_files_only=True,
                               trust_remote_code=False)


def _model_dim(model: Any) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter() or 0)


def peek_dim(path: Path) -> int:
    """The output dimension read from a sentence-transformers directory without loading it.

    Lets core size vector columns at start-up while the model still loads. 0 when unknown.
    """
    try:
        modules = json.loads((path / "modules.json").read_text())
        for module in reversed(modules):
            kind = module.get("type", "")
            cfg_path = path / module.get("path", "") / "config.json"
            if kind.endswith(".Dense"):
                return int(json.loads(cfg_path.read_text())["out_features"])
            if kind.endswith(".Pooling"):
                return int(json.loads(cfg_path.read_text())["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return 0


class BackendUnavailable(Exception):
    """backend = "onnx" was asked for and cannot be served; reported as a load failure."""


class BackgroundEmbedder(Embedder):
    """What every engine shares: loading in a daemon thread, NotReady until loaded (or after a
    failure), encoding in a worker thread one `batch_size` chunk at a time under one lock.
    Subclasses say how to build (`_build`, in the load thread) and run (`_run`) the model."""

    name = "dense"

    def __init__(self, settings: DenseSettings, *, start: bool = True):
        self.settings = settings
        self._model: Any = None
        self._backend: str | None = None
        self._error: str | None = None
        self._state = "idle"
        self._load_seconds: float | None = None
        self._done = threading.Event()
        self._encode_lock = threading.Lock()  # one forward pass at a time; the threads are shared
        self._thread: threading.Thread | None = None
        self._dim = 0
        #: The last QUERY_CACHE query vectors by text: one search may ask the same query of
        #: the dense ranker twice (over the namespace, then over a time window it names).
        self._queries: OrderedDict[str, list[float]] = OrderedDict()
        #: Identifies the vector space (stored with each vector; see `recall reindex`).
        self.model_id = ""
        #: The model's cosine -> evidence calibration (settings may override it).
        self._default_scale: tuple[float, float] = MINILM_SCALE
        self._default_topic_scale: tuple[float, float] = REFERENCE_TOPIC_SCALE
        if start:
            self.start()

    # -- loading --------------------------------------------------------------------------
    def start(self) -> None:
        """Begin loading (once): in a daemon thread, or right here if load_in_background=False."""
        if self._state != "idle":
            return
        self._state = "loading"
        if self.settings.load_in_background:
            self._thread = threading.Thread(target=self._load, name="recall-dense-load", daemon=True)
            self._thread.start()
        else:
            self._load()

    def _build(self) -> tuple[Any, int]:
        """Load the model (in the load thread); returns (model, dim)."""
        raise NotImplementedError

    def _known_errors(self) -> tuple[type[BaseException], ...]:
        return (ModelNotFound, BackendUnavailable)

    def _load(self) -> None:
        started = time.perf_counter()
        try:
            model, dim = self._build()
        except BaseException as exc:  # noqa: BLE001 - kept for status and NotReady, never raised
            known = isinstance(exc, self._known_errors())
            self._error = str(exc) if known else f"{type(exc).__name__}: {exc}"
            self._state = "failed"
            log.error("dense: model failed to load: %s", self._error)
        else:
            self._dim = dim
            self._model = model
            self._state = "ready"
            self._load_seconds = time.perf_counter() - started
            log.info("dense: model %s ready in %.2fs (dim %d, backend %s)", self.settings.model,
                     self._load_seconds, dim, self._backend)
        finally:
            self._done.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until loading finished (for the CLI and benchmarks). True when ready."""
        if self._state == "idle":
            self.start()
        self._done.wait(timeout)
        return self.ready

    @property
    def ready(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> Any:
        """The loaded model object, None until ready (benchmarks, sharing)."""
        return self._model

    @property
    def dim(self) -> int:
        """Vector length; known before the model is loaded where possible, 0 if unknown."""
        return self._dim

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def similarity_scale(self) -> tuple[float, float]:
        """(cosine that is no evidence, cosine that is full evidence); see relevance.py."""
        lo = self.settings.similarity_floor
        hi = self.settings.similarity_full
        return (self._default_scale[0] if lo is None else lo,
                self._default_scale[1] if hi is None else hi)

    @property
    def topic_scale(self) -> tuple[float, float]:
        """Where the model puts two stored texts (recall_core's REFERENCE_TOPIC_SCALE)."""
        return self.settings.topic_scale or self._default_topic_scale

    @property
    def backend(self) -> str | None:
        """What runs the model once loaded; None while loading or after a failure."""
        return self._backend

    def status(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self._state,  # idle | loading | ready | failed
            "ready": self.ready,
            "model": self.settings.model,
            "model_id": self.model_id,
            "dim": self._dim,
            "backend": self._backend,
            "load_seconds": None if self._load_seconds is None else round(self._load_seconds, 3),
            "error": self._error,
        }

    def _require_model(self) -> Any:
        model = self._model
        if model is not None:
            return model
        if self._error is not None:
            raise NotReady(f"dense: model failed to load: {self._error}")
        raise NotReady("dense: warming up")

    # -- encoding -------------------------------------------------------------------------
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for stored texts (passage side; `passage_prefix` is prepended)."""
        return await self._encode([self.settings.passage_prefix + t for t in _as_list(texts)])

    async def embed_query(self, query: str) -> list[float]:
        """Unit vector for a search query (`query_prefix` is prepended); recent ones cached."""
        text = self.settings.query_prefix + query
        hit = self._queries.get(text)
        if hit is not None:
            self._queries.move_to_end(text)
            return list(hit)
        vector = (await self._encode([text], query=True))[0]
        self._queries[text] = vector
        while len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)
        return list(vector)

    def forget_queries(self) -> None:
        """Drop the cached query vectors (benchmarks that time each search from cold)."""
        self._queries.clear()

    async def _encode(self, texts: list[str], query: bool = False) -> list[list[float]]:
        model = self._require_model()
        if not texts:
            return []
        size = self.settings.batch_size
        out: list[list[float]] = []
        for i in range(0, len(texts), size):
            out.extend(await asyncio.to_thread(self._encode_sync, model, texts[i:i + size], query))
        return out

    def _encode_sync(self, model: Any, chunk: list[str], query: bool = False) -> list[list[float]]:
        with self._encode_lock:
            arr = self._run(model, chunk, query)
        return arr.tolist()

    def _run(self, model: Any, chunk: list[str], query: bool) -> Any:
        raise NotImplementedError


class PackagedEmbedder(BackgroundEmbedder):
    """A torch-free engine from `engines` (the default install)."""

    def __init__(self, settings: DenseSettings, spec: Any, *, start: bool = True):
        self.spec = spec
        super().__init__(settings, start=False)
        self._dim = spec.dim
        self.model_id = _with_prefixes(spec.model_id, settings)
        self._default_scale = spec.scale
        self._default_topic_scale = spec.topic_scale
        if start:
            self.start()

    def _known_errors(self) -> tuple[type[BaseException], ...]:
        from .engines import EngineUnavailable

        return (EngineUnavailable,)

    def _build(self) -> tuple[Any, int]:
        from . import engines

        engine = engines.load(self.spec, self.settings.threads)
        self._backend = engine.backend
        return engine, self.spec.dim

    def _run(self, model: Any, chunk: list[str], query: bool) -> Any:
        return model.encode(chunk, query)

    def status(self) -> dict[str, Any]:
        path = getattr(self._model, "path", None)
        return {**super().status(), "model_path": None if path is None else str(path)}


class SentenceTransformerEmbedder(BackgroundEmbedder):
    """`recall_core.Embedder` backed by a local sentence-transformers model (needs torch:
    the `recall-embeddings[torch]` extra)."""

    def __init__(self, settings: DenseSettings, *, loader: Loader | None = None,
                 start: bool = True):
        super().__init__(settings, start=False)
        self._loader = loader or load_sentence_transformer
        self._onnx: Any = None  # onnx_backend.OnnxEncoder when that backend serves
        self._backend_reason: str | None = None
        self._onnx_export_seconds: float | None = None
        self._onnx_query: Any = None  # the int8 OnnxEncoder for search queries, if any
        self._quantize_reason: str | None = None  # why not, when it was asked for
        try:
            self._model_path: str | None = str(settings.resolve_model_path())
        except Exception:  # reported by the load itself, with the fix
            self._model_path = None
        self._dim = peek_dim(Path(self._model_path)) if self._model_path else 0
        self.model_id = _with_prefixes(settings.model_id(), settings)
        if start:
            self.start()

    def _build(self) -> tuple[Any, int]:
        model = self._loader(self.settings)
        dim = _model_dim(model)
        self._pick_backend(model)
        return model, dim
    def _pick_backend(self, model: Any) -> None:
        """Set up onnxruntime when the settings allow it and it works, else keep torch."""
        s = self.settings
        if s.backend == "torch":
            self._backend, self._backend_reason = "torch", 'backend = "torch" in the settings'
            return
        from . import onnx_backend

        try:
            if s.device != "cpu":
                raise onnx_backend.OnnxUnavailable(f"device {s.device!r}: the ONNX backend runs on CPU only")
            if self._model_path is None:
                raise onnx_backend.OnnxUnavailable("the model directory is unknown")
            built = onnx_backend.build(model, Path(self._model_path), s.resolve_onnx_cache_dir(),
                                       s.threads, s.quantize_queries)
        except Exception as exc:  # noqa: BLE001 - any failure means torch or, for "onnx", a load failure
            known = isinstance(exc, onnx_backend.OnnxUnavailable)
            reason = str(exc) if known else f"{type(exc).__name__}: {exc}"
            if s.backend == "onnx":
                raise BackendUnavailable(
                    f'backend "onnx" is not possible: {reason}. Set [plugins.dense] backend = '
                    f'"auto" (falls back to torch) or "torch"') from exc
            self._backend, self._backend_reason = "torch", f"onnx not used: {reason}"
            log.warning("dense: using the torch backend; %s", self._backend_reason)
            return
        self._onnx = built.encoder
        self._onnx_export_seconds = built.export_seconds
        self._backend, self._backend_reason = "onnx", None
        self._onnx_query, self._quantize_reason = built.query_encoder, built.quantize_reason
        log.info("dense: onnx backend (%s, %s; probe cosine %.6f; queries: %s)", built.encoder.path,
                 "cached" if built.export_seconds is None else f"exported in {built.export_seconds:.1f}s",
                 built.cosine, "int8" if built.query_encoder is not None else "float32")

    def status(self) -> dict[str, Any]:
        return {
            **super().status(),
            "model_path": self._model_path,
            "device": self.settings.device,
            "backend_setting": self.settings.backend,
            "backend_reason": self._backend_reason,  # why torch, when it is torch
            "onnx_file": None if self._onnx is None else str(self._onnx.path),
            "onnx_query_file": None if self._onnx_query is None else str(self._onnx_query.path),
            "quantize_queries": self._onnx_query is not None,  # what runs, not the setting
            "quantize_reason": self._quantize_reason,  # why not, when it was asked for
            "onnx_export_seconds": None if self._onnx_export_seconds is None
            else round(self._onnx_export_seconds, 2),  # None when the cached export was used
        }

    def _run(self, model: Any, chunk: list[str], query: bool) -> Any:
        onnx = (self._onnx_query if query else None) or self._onnx
        if onnx is not None:
            return onnx.encode(chunk)
        return model.encode(chunk, batch_size=len(chunk), normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)


def _with_prefixes(model_id: str, settings: DenseSettings) -> str:
    """Prefixes change the vectors, so they are part of the vector space's id."""
    extra = [f"{side}={p!r}" for side, p in (("query", settings.query_prefix),
                                            ("passage", settings.passage_prefix)) if p]
    return model_id + (f" [{', '.join(extra)}]" if extra else "")


def _as_list(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):  # a bare string would be embedded character by character
        raise TypeError("embed() takes a sequence of texts, not a single str; wrap it in a list")
    return list(texts)
