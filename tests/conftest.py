from __future__ import annotations

import pytest

from serverproc import Agent, ServerProcess


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
