from __future__ import annotations

import pytest
import pytest_asyncio

from recall_testkit.backends import BACKENDS, PG_URL, bundled
from recall_testkit.serverproc import Agent, ServerProcess


@pytest.fixture
async def runtime(tmp_path):
    """A runtime on SQLite with the stub extractor and no worker, built from the plugins named
    here (no entry points), for service-level tests. Modules that need another one define
    their own `runtime`."""
    from recall_core.config import load_config
    from recall_core.server.runtime import build_runtime

    rt = await build_runtime(load_config(None, db=str(tmp_path / "r.db")), bundled(),
                             start_worker=False)
    yield rt
    await rt.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("srv")
    srv = ServerProcess(str(work / "recall.db"), work).start()
    yield srv
    srv.stop()


@pytest.fixture
def agent_factory(server):
    def make(token: str, srv: ServerProcess | None = None) -> Agent:
        return Agent((srv or server).url, token)
    return make


@pytest_asyncio.fixture(params=BACKENDS)
async def bm25_runtime(request, tmp_path):
    """A runtime with BM25 only and the stub extractor, no worker or decay, on SQLite and (with
    RECALL_TEST_PG_URL) Postgres: search steps that must behave the same on both backends."""
    from recall_core.config import RecallConfig
    from recall_core.server.runtime import build_runtime

    db = str(tmp_path / "r.db") if request.param == "sqlite" else PG_URL
    rt = await build_runtime(RecallConfig(db=db, rankers={"bm25": 1.0}, extractor="stub",
                                          worker={"concurrency": 0}, decay={"interval": 0}),
                             bundled(postgres=request.param == "postgres"))
    yield rt
    await rt.close()


@pytest.fixture(scope="module")
def dense_runtime(tmp_path_factory):
    """(loop, runtime) on SQLite with the real dense ranker (the embeddings plugin) beside
    BM25, the stub extractor and no worker, shared by a module's tests; skipped without the
    embeddings plugin."""
    pytest.importorskip("recall_embeddings")
    import asyncio

    from recall_core.config import RecallConfig
    from recall_core.server.runtime import build_runtime

    loop = asyncio.new_event_loop()
    rt = loop.run_until_complete(build_runtime(RecallConfig(
        db=str(tmp_path_factory.mktemp("dense") / "r.db"), extractor="stub",
        worker={"concurrency": 0}, decay={"interval": 0}), bundled(embeddings=True)))
    assert rt.embedder is not None and rt.embedder.wait_ready(120), rt.embedder.status()
    yield loop, rt
    loop.run_until_complete(rt.close())
    loop.close()
