from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from fastmcp import Client

from serverproc import ServerProcess


class Agent:
    """An MCP client as an agent uses it: bearer token, real HTTP, envelopes back."""

    def __init__(self, url: str, token: str):
        self.client = Client(url, auth=token, timeout=30)

    async def __aenter__(self) -> Agent:
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args, raise_on_error=False)
        env = result.structured_content
        if env is None:  # fall back to the text block
            env = json.loads(result.content[0].text)
        assert set(env) == {"status", "data", "error", "code"}, env
        return env

    async def ok(self, tool: str, **args: Any) -> Any:
        env = await self.call(tool, **args)
        assert env["status"] == "ok", env
        return env["data"]

    async def wait_idle(self, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            stats = await self.ok("get_memory_stats")
            if stats["pending_extractions"] == 0:
                return stats
            if time.monotonic() > deadline:
                raise AssertionError(f"extractions still pending: {stats}")
            await asyncio.sleep(0.1)


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
