"""The circuit breaker around extraction, against a REAL model server: llama-cpp-python's
OpenAI-compatible server with SmolLM2 (recall_testkit.llama_server), stopped for a while and
started again on the same port, under a real `recall serve` with the openai extractor.

While the model is down: the worker stops claiming after a few provider failures (their
attempts unspent), probes with backoff, and /health, get_memory_stats and the inspector say
extraction is paused and why. When it is back: every job queued meanwhile ends done, none
failed, each after exactly one counted attempt (none ran twice).
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from recall_testkit.llama_server import LlamaServer, unavailable
from recall_testkit.inspector import admin_token
from recall_testkit.serverproc import Agent, ServerProcess

_reason = unavailable()
pytestmark = [pytest.mark.skipif(_reason is not None, reason=f"no local model server: {_reason}"),
              pytest.mark.slow, pytest.mark.asyncio(loop_scope="function")]

TEXTS = ["I prefer tabs over spaces.", "I live in Lisbon.", "My favourite editor is Helix."]


def health(srv: ServerProcess, token: str | None = None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(srv.base + "/health", headers=headers, timeout=10).json()


def jobs(srv: ServerProcess, admin: str, status: str) -> list[dict]:
    r = httpx.get(srv.base + "/admin/jobs", params={"limit": 50, "status": status},
                  headers={"Authorization": f"Bearer {admin}"}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["jobs"]


def inspector_queue(srv: ServerProcess, admin: str) -> str:
    with httpx.Client(base_url=srv.base, headers={"Origin": srv.base}) as ui:
        r = ui.post("/ui/signin", data={"token": admin})
        assert r.status_code in (200, 303), r.text
        # The session cookie is Secure; sent by hand over loopback HTTP.
        cookie = "; ".join(f"{k}={v}" for k, v in r.cookies.items())
        page = ui.get("/ui/queue", params={"ns": "pia"}, headers={"Cookie": cookie})
        assert page.status_code == 200, page.status_code
        return page.text


async def until(check, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        got = await check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s")
        await asyncio.sleep(every)


async def test_a_model_outage_pauses_extraction_and_loses_nothing(tmp_path):
    llama = LlamaServer().start()
    env = {"RECALL_EXTRACTOR": "openai", "RECALL_WORKER__RETRY_BACKOFF": "0.2",
           "RECALL_WORKER__BREAKER_THRESHOLD": "2", "RECALL_WORKER__BREAKER_PROBE": "4",
           "RECALL_WORKER__BREAKER_PROBE_MAX": "12"}
    env.update({f"RECALL_PLUGIN_OPENAI_{k.upper()}": str(v)
                for k, v in llama.settings(timeout=60).items()})
    srv = ServerProcess(str(tmp_path / "recall.db"), tmp_path, env=env).start()
    port = llama.port
    try:
        token, admin = srv.token("pia"), admin_token(srv)
        async with Agent(srv.url, token) as a:
            await a.ok("store_memory", text="I drink green tea.", idempotency_key="up")
            await a.wait_idle(timeout=180)

            llama.stop()  # the model goes away
            for i, text in enumerate(TEXTS):
                await a.ok("store_memory", text=text, idempotency_key=f"down-{i}")

            async def paused():
                stats = await a.ok("get_memory_stats")
                return stats if stats.get("extraction", {}).get("paused") else None

            stats = await until(paused, timeout=60)
            assert "Could not reach" in stats["extraction"]["reason"]
            assert stats["failed_extractions"] == 0
            public = health(srv)
            assert public["status"] == "degraded"
            assert any(r.startswith("extraction: paused") for r in public["degraded"])
            detailed = health(srv, token)
            assert detailed["extraction"]["paused"] is True
            assert "Could not reach" in detailed["extraction"]["reason"]
            assert "paused since" in inspector_queue(srv, admin)

            await asyncio.sleep(25)  # down for a while: several probes (4, 8, 12 s), failing
            stats = await a.ok("get_memory_stats")
            assert stats["failed_extractions"] == 0, stats
            assert stats["pending_extractions"] == len(TEXTS), stats
            queued = jobs(srv, admin, "queued")
            assert len(queued) == len(TEXTS)
            assert all(j["attempts"] == 0 for j in queued), queued  # none spent

            llama = LlamaServer()
            llama.port = port  # back where the config points
            llama.start()
            stats = await a.wait_idle(timeout=300)
            assert stats["failed_extractions"] == 0, stats
            assert "extraction" not in stats
            assert health(srv)["status"] == "ok"
            done = jobs(srv, admin, "done")
            assert len(done) == len(TEXTS) + 1
            assert jobs(srv, admin, "failed") == []
            assert all(j["attempts"] == 1 for j in done), done  # once each, none twice
    finally:
        srv.stop()
        llama.stop()
