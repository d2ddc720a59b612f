"""Run `recall serve` as a real process for end-to-end tests (a user's view of the product)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from fastmcp import Client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recall_cli(*args: str, env: dict[str, str] | None = None, check: bool = True,
               timeout: float = 60, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """`recall ARGS` as a user runs it: a process (in `cwd`), its output and exit code."""
    proc = subprocess.run([sys.executable, "-m", "recall_core.cli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout, cwd=cwd)
    if check and proc.returncode != 0:
        raise AssertionError(f"recall {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


class ServerProcess:
    """One `recall serve` process on a free port; restartable on the same database."""

    def __init__(self, db: str, workdir: Path, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()):
        self.db = db
        self.workdir = workdir
        self.env = {**os.environ, "RECALL_DISABLE_PLUGINS": "embeddings", **(env or {})}
        self.args = args
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log_path = workdir / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> ServerProcess:
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "recall_core.cli", "serve", "--db", self.db,
             "--port", str(self.port), *self.args],
            stdout=self._log, stderr=subprocess.STDOUT, env=self.env, cwd=self.workdir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited ({self.proc.returncode}):\n{self.log()}")
            try:
                if httpx.get(self.base + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"server did not become healthy:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "_log", None):
            self._log.close()

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def token(self, namespace: str) -> str:
        out = recall_cli("create-token", namespace, "--db", self.db, "--json", env=self.env)
        data = json.loads(out.stdout)
        assert data["namespace"] == namespace
        return data["token"]


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
        # Clients and models that only check the MCP flag must see every failure.
        assert result.is_error == (env["status"] == "error"), (result.is_error, env)
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


async def token_in_process(db: str, namespace: str, *, agent: str | None = None,
                           scopes: Any = None) -> str:
    """A token made in this process on a server's database (SQLite path or Postgres URL),
    with the same function the CLI and admin API use: the CLI costs seconds per call."""
    from recall_core.admin.tokens import create_token
    from recall_core.cli.common import open_storage
    from recall_core.config import load_config

    storage = await open_storage(load_config(None, db=db))
    try:
        return await create_token(storage, namespace, agent=agent, scopes=scopes)
    finally:
        await storage.close()
