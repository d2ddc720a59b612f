"""Shared fixtures: the real packaged models, loaded once per session with the network cut.

`offline_ranker` is the default install's ranker (torch-free engine); `st_ranker` is the
packaged sentence-transformers MiniLM (the `[torch]` extra), which the backend tests use."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from recall_embeddings import DenseSettings, SentenceTransformerEmbedder, make_dense


class NetworkAttempt(AssertionError):
    pass


@pytest.fixture(scope="session", autouse=True)
def onnx_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    """RECALL_CACHE_DIR for the whole session, so no test writes the ONNX export to ~/.cache.
    Embedders with default settings share it: the session exports the model once."""
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("recall-cache")
    mp.setenv("RECALL_CACHE_DIR", str(root))
    yield root / "onnx"
    mp.undo()


@pytest.fixture(scope="session")
def network_attempts() -> list[str]:
    return []


#: The packaged sentence-transformers model (needs the [torch] extra).
ST_MODEL = "all-MiniLM-L6-v2"


def _load_offline(network_attempts: list[str], settings: dict[str, Any]) -> Any:
    """`make_dense(settings)`, exactly as core builds it, loaded while every socket connect
    and DNS lookup fails and is recorded. The offline switches are removed from the
    environment first: the plugin must be offline on its own."""
    mp = pytest.MonkeyPatch()

    def refuse(what: str):
        def _refuse(*args: Any, **kwargs: Any) -> Any:
            network_attempts.append(f"{what}{args[1:] if what.startswith('socket.') else args}")
            raise NetworkAttempt(f"network use during model load: {what}")
        return _refuse

    mp.delenv("HF_HUB_OFFLINE", raising=False)
    mp.delenv("TRANSFORMERS_OFFLINE", raising=False)
    mp.setattr(socket.socket, "connect", refuse("socket.connect"))
    mp.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    mp.setattr(socket, "create_connection", refuse("create_connection"))
    mp.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    try:
        ranker = make_dense(settings)
        assert ranker.embedder.wait_ready(timeout=180), ranker.embedder.status()
    finally:
        mp.undo()
    return ranker


@pytest.fixture(scope="session")
def offline_ranker(network_attempts: list[str]) -> Any:
    """The default settings' ranker: the torch-free engine."""
    return _load_offline(network_attempts, {})


@pytest.fixture(scope="session")
def st_ranker(network_attempts: list[str]) -> Any:
    """The packaged sentence-transformers MiniLM, on its default (onnx) backend."""
    pytest.importorskip("sentence_transformers", reason="the [torch] extra is not installed")
    return _load_offline(network_attempts, {"model": ST_MODEL})


@pytest.fixture(scope="session")
def shared_model(st_ranker: Any) -> Any:
    return st_ranker.embedder.model


@pytest.fixture
def make_embedder(shared_model: Any):
    """Embedders over the already-loaded model with other settings (prefixes, batch size)."""

    def _make(**settings: Any) -> SentenceTransformerEmbedder:
        emb = SentenceTransformerEmbedder(DenseSettings(**{"model": ST_MODEL, **settings}),
                                          loader=lambda s: shared_model)
        # Generous: some settings quantize or export again, slow on a busy 2-core machine.
        assert emb.wait_ready(timeout=120), emb.status()
        return emb

    return _make
