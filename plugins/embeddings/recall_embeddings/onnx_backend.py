"""ONNX Runtime backend: the sentence-transformers model's vectors, computed faster on CPU.

Supported pipelines are sentence-transformers' ``[Transformer, Pooling (mean or cls),
optional Normalize]``. The transformer and the pooling are exported once with
``torch.onnx.export`` (the TorchScript exporter, ``dynamo=False``) to a file in a cache
directory; onnxruntime then runs that file. Tokenisation uses the loaded model's own tokenizer
with its ``max_seq_length``, so truncation matches the torch path. The result is L2-normalised
here, as the torch path does with ``normalize_embeddings=True``.

With ``quantize_queries`` (the default) the exported file is also quantized (onnxruntime's
dynamic quantization, int8 weights per output channel) into a second cached file that embeds
search queries only, checked against torch with a looser bound (MIN_COSINE_INT8); if that
fails, queries use the float32 export and the status says why.

The cache file name hashes the model directory's identity (every file's path, size and mtime)
and the export settings. It is written to a temporary file and atomically renamed, so processes
that start at once never read a half-written file; a cached file that does not load is exported
again. The built session is checked against the torch model on a few probe sentences, and it is
only used when they agree (cosine >= MIN_COSINE).

Nothing here is imported until the load thread needs it: importing the plugin stays light.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("recall.embeddings")

#: Bump when the exported graph changes (inputs, outputs, pooling code), to invalidate caches.
EXPORT_VERSION = 1
OPSET = 17
MIN_COSINE = 0.9999
#: Bump when the int8 quantization settings change, to invalidate cached int8 files.
QUANT_VERSION = 1
#: Lowest probe cosine accepted from the int8 model. MiniLM-L6 with per-channel weights:
#: 0.979 (corpus sentences 0.98-0.99); per-tensor weights gave 0.90, so they are not used.
MIN_COSINE_INT8 = 0.97
#: Above this the weights do not fit in one ONNX file (protobuf's 2 GB limit, with margin).
MAX_PARAM_BYTES = 1_500_000_000
# Short, mixed case, unicode, empty, and last one past max_seq_length (truncation).
PROBES = [
    "The user prefers dark mode in the code editor.",
    "Zürich, 東京 and São Paulo: déjà vu — naïve café ☕",
    "",
    " ".join(f"Deploy step {i} waits for the migration of table t{i}." for i in range(60)),
]
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxUnavailable(Exception):
    """The ONNX backend cannot serve this model; the message says why."""


@dataclass(frozen=True)
class Spec:
    """What the exported graph computes and how its inputs are made."""

    pooling: str  # "mean" | "cls"
    input_names: tuple[str, ...]
    max_length: int | None


def runtime_missing() -> str | None:
    """Why onnxruntime/onnx cannot be used here, or None when both import."""
    for name in ("onnxruntime", "onnx"):
        try:
            __import__(name)
        except Exception as exc:  # noqa: BLE001 - ImportError or a broken install
            return f"{name} is not importable ({type(exc).__name__}: {exc}); `pip install onnxruntime onnx`"
    return None


def inspect_pipeline(model: Any) -> Spec:
    """The export spec for a supported model; raises OnnxUnavailable naming what is not."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - the torch path needs it too
        raise OnnxUnavailable(f"sentence-transformers is not importable: {exc}") from None
    if not isinstance(model, SentenceTransformer):
        raise OnnxUnavailable(f"the loaded model is a {type(model).__name__}, not a SentenceTransformer")
    modules = list(model)
    names = [type(m).__name__ for m in modules]
    if names[:2] != ["Transformer", "Pooling"] or names[2:] not in ([], ["Normalize"]):
        raise OnnxUnavailable(f"module pipeline {names} is not supported; the ONNX backend handles "
                              f"[Transformer, Pooling] with an optional Normalize")
    if foreign := [f"{type(m).__module__}.{type(m).__name__}" for m in modules
                   if not type(m).__module__.startswith("sentence_transformers.")]:
        raise OnnxUnavailable(f"custom module code ({', '.join(foreign)}) is not supported")
    transformer, pooling = modules[0], modules[1]

    mode = getattr(pooling, "pooling_mode", None)
    if not isinstance(mode, str) and hasattr(pooling, "get_pooling_mode_str"):  # sentence-transformers < 6
        mode = pooling.get_pooling_mode_str()
    if mode not in ("mean", "cls"):
        raise OnnxUnavailable(f"pooling mode {mode!r} is not supported (only 'mean' and 'cls')")

    # Anything that changes what encode() feeds the transformer or returns.
    checks = {
        "a default prompt": getattr(model, "default_prompt_name", None),
        "truncate_dim": getattr(model, "truncate_dim", None),
        "do_lower_case": getattr(transformer, "do_lower_case", False),
        "query expansion": getattr(transformer, "query_expansion", None),
        "custom processing_kwargs": getattr(transformer, "processing_kwargs", None),
    }
    if (task := getattr(transformer, "transformer_task", "feature-extraction")) != "feature-extraction":
        checks[f"transformer task {task!r}"] = True
    if (backend := getattr(transformer, "backend", "torch")) != "torch":
        checks[f"transformer backend {backend!r}"] = True
    modality = getattr(transformer, "modality_config", None)
    if modality is not None and (set(modality) != {"text"} or modality["text"].get("method") != "forward"):
        checks[f"modality config {modality}"] = True
    if used := [what for what, value in checks.items() if value]:
        raise OnnxUnavailable(f"the model uses {', '.join(used)}, which the ONNX backend does not reproduce")

    hf_model = getattr(transformer, "auto_model", None)
    tokenizer = getattr(transformer, "tokenizer", None)
    if hf_model is None or tokenizer is None or not callable(tokenizer):
        raise OnnxUnavailable("the Transformer module has no Hugging Face model and tokenizer")
    params = list(hf_model.parameters())
    if not params or any(str(p.dtype) != "torch.float32" for p in params):
        raise OnnxUnavailable("only float32 weights are exported")
    if sum(p.numel() * p.element_size() for p in params) > MAX_PARAM_BYTES:
        raise OnnxUnavailable("the model is too large for a single-file ONNX export")
    accepted = set(inspect.signature(hf_model.forward).parameters)
    produced = set(getattr(tokenizer, "model_input_names", ()) or ("input_ids", "attention_mask"))
    input_names = tuple(n for n in _INPUTS if n in accepted and n in produced)
    if input_names[:2] != ("input_ids", "attention_mask"):
        raise OnnxUnavailable(f"the model takes {sorted(accepted & produced)}, not input_ids and attention_mask")
    max_length = getattr(transformer, "max_seq_length", None)
    return Spec(pooling=mode, input_names=input_names, max_length=max_length)


# -- cache ------------------------------------------------------------------------------------
def cache_file(model_path: Path, spec: Spec, cache_dir: Path) -> Path:
    """Where the export of this model directory with these settings lives."""
    import torch
    import transformers

    h = hashlib.sha256()
    h.update(json.dumps({"export": EXPORT_VERSION, "opset": OPSET, "pooling": spec.pooling,
                         "inputs": spec.input_names, "torch": torch.__version__,
                         "transformers": transformers.__version__}, sort_keys=True).encode())
    root = model_path.resolve()
    h.update(str(root).encode())
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts) or not f.is_file():
            continue
        st = f.stat()
        h.update(f"\0{rel.as_posix()}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{root.parent.name}-{root.name}").strip("._-")[:80]
    return cache_dir / f"{slug or 'model'}-{h.hexdigest()[:20]}.onnx"


def _traceable(hf_model: Any, spec: Spec) -> Any:
    """The nn.Module that torch.onnx traces: the transformer, then the pooling.

    The transformer is called with keyword arguments: a positional call breaks on
    transformers 5.x ("got multiple values for argument 'use_cache'").
    """
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = hf_model

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kwargs["token_type_ids"] = token_type_ids
            hidden = self.model(**kwargs).last_hidden_state
            if spec.pooling == "cls":  # the first real token, as sentence-transformers picks it
                first = attention_mask.to(torch.int32).argmax(dim=1)
                index = first.view(-1, 1, 1).expand(-1, 1, hidden.shape[-1])
                return torch.gather(hidden, 1, index).squeeze(1)
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1e-9)

    return Encoder()


def export(model: Any, spec: Spec, target: Path) -> None:
    """Export to `target` through a temporary file in the same directory and an atomic rename."""
    import torch

    transformer = list(model)[0]
    wrapper = _traceable(transformer.auto_model, spec).eval()
    sample = _tokenize(transformer.tokenizer, ["a probe sentence", "and a longer second probe sentence"],
                       spec, "pt")
    args = tuple(sample[n] for n in spec.input_names)
    axes = {n: {0: "batch", 1: "sequence"} for n in spec.input_names}
    axes["sentence_embedding"] = {0: "batch"}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        # The tracer warns about shape checks it freezes (padding length, is_causal); they are
        # constant for an encoder, and the probe check after loading would catch a bad trace.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(wrapper, args, tmp, input_names=list(spec.input_names),
                              output_names=["sentence_embedding"], dynamic_axes=axes,
                              opset_version=OPSET, dynamo=False, do_constant_folding=True)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a shared cache dir should stay readable
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# -- inference --------------------------------------------------------------------------------
def _tokenize(tokenizer: Any, texts: list[str], spec: Spec, tensors: str) -> Any:
    # As sentence-transformers' Transformer.preprocess: pad to the longest, truncate at max_seq_length.
    return tokenizer(texts, padding=True, truncation="longest_first", max_length=spec.max_length,
                     return_tensors=tensors)


def make_session(path: Path, threads: int | None) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads or 0  # 0: onnxruntime's default, one per physical core
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    # onnxruntime's pool threads spin-wait after each run by default, burning the CPU that the
    # search's full-text and vector work (and the HTTP server) need on a small machine.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])


class OnnxEncoder:
    """Texts -> unit vectors (float32 ndarray) with an onnxruntime session."""

    def __init__(self, session: Any, tokenizer: Any, spec: Spec, path: Path,
                 one_at_a_time: bool = False):
        self.session = session
        self.tokenizer = tokenizer
        self.spec = spec
        self.path = path
        #: The int8 model quantizes activations with one scale per forward pass, so a text's
        #: vector would depend on the texts batched with it (cosine down to 0.994, measured);
        #: one text per pass keeps every vector a function of its text alone, at about the
        #: float32 model's batched throughput (4.5 vs 4.2 ms a text here).
        self.one_at_a_time = one_at_a_time

    def encode(self, texts: list[str]) -> np.ndarray:
        if self.one_at_a_time and len(texts) > 1:
            return np.concatenate([self._encode(texts[i:i + 1]) for i in range(len(texts))])
        return self._encode(texts)

    def _encode(self, texts: list[str]) -> np.ndarray:
        enc = _tokenize(self.tokenizer, texts, self.spec, "np")
        feeds = {n: np.asarray(enc[n], dtype=np.int64) for n in self.spec.input_names}
        (out,) = self.session.run(None, feeds)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)  # as torch.nn.functional.normalize


def agreement(encoder: OnnxEncoder, model: Any) -> float:
    """Lowest cosine between the ONNX and torch vectors of the probe sentences.

    The long probe goes alone, so the short ones are not padded to max_seq_length (it keeps
    the check near 0.1 s instead of 0.4 s)."""
    lowest = 1.0
    for batch in (PROBES[:-1], PROBES[-1:]):
        got = encoder.encode(batch)
        want = model.encode(batch, batch_size=len(batch), normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)
        lowest = min(lowest, float(np.min(np.sum(got * want, axis=1))))
    return lowest


@dataclass
class Built:
    encoder: OnnxEncoder
    export_seconds: float | None  # None when the cached file was used
    cosine: float
    query_encoder: OnnxEncoder | None = None  # the int8 model, for search queries
    quantize_reason: str | None = None  # why not, when it was asked for


def build(model: Any, model_path: Path, cache_dir: Path, threads: int | None,
          quantize_queries: bool = False) -> Built:
    """An ONNX encoder verified against `model`; raises OnnxUnavailable with the reason."""
    if missing := runtime_missing():
        raise OnnxUnavailable(missing)
    spec = inspect_pipeline(model)
    path = cache_file(model_path, spec, cache_dir)
    tokenizer = list(model)[0].tokenizer
    built = _build_float32(model, spec, path, tokenizer, threads)
    if not quantize_queries:
        return built
    try:
        built.query_encoder, _ = _build_int8(model, spec, path, tokenizer, threads)
    except Exception as exc:  # noqa: BLE001 - the float32 encoder serves, and status says why
        reason = str(exc) if isinstance(exc, OnnxUnavailable) else f"{type(exc).__name__}: {exc}"
        log.warning("dense: int8 query model not used, float32 embeds queries too: %s", reason)
        built.quantize_reason = reason
    return built


def int8_file(float32_file: Path) -> Path:
    """Where the int8 version of an exported file lives (same cache key, plus QUANT_VERSION)."""
    return float32_file.with_name(f"{float32_file.stem}-int8v{QUANT_VERSION}.onnx")


def quantize_int8(source: Path, target: Path) -> None:
    """int8 weights per output channel, activations quantized at run time; written through a
    temporary file and an atomic rename like the export."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        quantize_dynamic(str(source), tmp, per_channel=True, weight_type=QuantType.QInt8)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _build_int8(model: Any, spec: Spec, float32_path: Path, tokenizer: Any,
                threads: int | None) -> tuple[OnnxEncoder, float]:
    path = int8_file(float32_path)
    if path.is_file():
        try:
            encoder = OnnxEncoder(make_session(path, threads), tokenizer, spec, path, True)
            cosine = agreement(encoder, model)
        except Exception as exc:  # noqa: BLE001 - a truncated or foreign file
            log.warning("dense: cached int8 file %s does not load (%s: %s); quantizing again",
                        path, type(exc).__name__, exc)
        else:
            if cosine >= MIN_COSINE_INT8:
                return encoder, cosine
            log.warning("dense: cached int8 file %s disagrees with torch (cosine %.4f); "
                        "quantizing again", path, cosine)
    started = time.perf_counter()
    quantize_int8(float32_path, path)
    log.info("dense: int8 quantization took %.1fs (cached as %s)", time.perf_counter() - started, path)
    encoder = OnnxEncoder(make_session(path, threads), tokenizer, spec, path, True)
    cosine = agreement(encoder, model)
    if cosine < MIN_COSINE_INT8:
        raise OnnxUnavailable(f"the int8 model disagrees with the torch model on probe sentences "
                              f"(lowest cosine {cosine:.4f} < {MIN_COSINE_INT8})")
    return encoder, cosine


def _build_float32(model: Any, spec: Spec, path: Path, tokenizer: Any,
                   threads: int | None) -> Built:
    if path.is_file():
        try:
            encoder = OnnxEncoder(make_session(path, threads), tokenizer, spec, path)
        except Exception as exc:  # noqa: BLE001 - a truncated or foreign file
            log.warning("dense: cached ONNX file %s does not load (%s: %s); exporting again",
                        path, type(exc).__name__, exc)
        else:
            cosine = agreement(encoder, model)
            if cosine >= MIN_COSINE:
                return Built(encoder, None, cosine)
            log.warning("dense: cached ONNX file %s disagrees with torch (cosine %.6f); "
                        "exporting again", path, cosine)
    exported = _export_timed(model, spec, path)
    encoder = OnnxEncoder(make_session(path, threads), tokenizer, spec, path)
    cosine = agreement(encoder, model)
    if cosine >= MIN_COSINE:
        return Built(encoder, exported, cosine)
    raise OnnxUnavailable(f"the ONNX export disagrees with the torch model on probe sentences "
                          f"(lowest cosine {cosine:.6f} < {MIN_COSINE})")


def _export_timed(model: Any, spec: Spec, path: Path) -> float:
    log.info("dense: exporting the model to ONNX (once; cached as %s)", path)
    started = time.perf_counter()
    try:
        export(model, spec, path)
    except Exception as exc:  # noqa: BLE001 - tracer and exporter errors are many and varied
        raise OnnxUnavailable(f"ONNX export failed: {type(exc).__name__}: {exc}") from exc
    seconds = time.perf_counter() - started
    log.info("dense: ONNX export took %.1fs", seconds)
    return seconds
