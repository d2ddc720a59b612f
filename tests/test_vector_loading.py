"""Honest readiness (issue 31): after a restart, a namespace whose vectors are too many to
load inline answers its first searches from full text, saying so in `degraded`, while its
vectors load in the background; then semantic search joins. Over real HTTP against `recall
serve` with the real embedding model, on SQLite (the real[] fallback of Postgres runs the same
kit code: plugins/postgres/tests/test_pg_vectors.py)."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = pytest.mark.asyncio

TEXTS = [f"Note {i}: the {w} project review happened on day {i}." for i, w in enumerate(
    ["apollo", "zephyr", "orion", "lyra", "vega", "atlas", "nova", "rigel", "draco", "hydra",
     "cygnus", "perseus"])]


def wait_healthy(srv: ServerProcess, timeout: float = 120) -> dict:
    """/health once the embedding model is warm (its own degraded note gone)."""
    deadline = time.monotonic() + timeout
    while True:
        body = httpx.get(srv.base + "/health", timeout=5).json()
        if not any("warming up" in r for r in body["degraded"]):
            return body
        if time.monotonic() > deadline:
            raise AssertionError(body)
        time.sleep(0.2)


async def test_first_search_after_restart_answers_from_full_text_while_vectors_load(tmp_path):
    env = {"RECALL_DISABLE_PLUGINS": "", "RECALL_PLUGIN_SQLITE_VECTOR_INLINE_ROWS": "5"}
    srv = ServerProcess(str(tmp_path / "r.db"), tmp_path, env=env).start()
    try:
        token = srv.token("vera")
        wait_healthy(srv)
        async with Agent(srv.url, token) as a:
            for text in TEXTS:
                await a.ok("store_memory", text=text)
            await a.wait_idle(timeout=120)
        srv.stop()
        srv.start()
        assert wait_healthy(srv)["status"] == "ok"
        async with Agent(srv.url, token) as a:
            first = await a.ok("search_memories", query="orion project review", limit=3)
            assert any("loading this namespace's" in d for d in first["degraded"]), first
            assert first["results"] and "orion" in first["results"][0]["text"]  # full text
            for _ in range(100):
                later = await a.ok("search_memories", query="orion project review", limit=3)
                if not later["degraded"]:
                    break
                await asyncio.sleep(0.1)
            assert later["degraded"] == [] and "orion" in later["results"][0]["text"]
        assert httpx.get(srv.base + "/health", timeout=5).json()["status"] == "ok"
    finally:
        srv.stop()
