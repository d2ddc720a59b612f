"""Extraction failures are loud: a haiku extractor without a key stops start-up with the fix,
and a job its extractor cannot do ends `failed` with the reason where an operator looks
(get_memory_stats, `recall status`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from recall_testkit.plugins.failing_extractor import BAD_KEY_MESSAGE, OVERLOADED_MESSAGE
from recall_core.server.auth import create_token
from recall_sqlite import SQLiteSettings, make_storage
from recall_testkit.serverproc import Agent, ServerProcess, free_port, recall_cli


def no_key_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update({"RECALL_DISABLE_PLUGINS": "embeddings", **extra})
    return env


def serve(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "recall_core.cli", "serve", *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_haiku_without_api_key_is_a_startup_error_that_says_how_to_fix_it(tmp_path):
    cfg = tmp_path / "recall.toml"
    cfg.write_text('extractor = "haiku"\n')
    started = time.monotonic()
    proc = serve("--config", str(cfg), "--db", str(tmp_path / "r.db"), "--port", str(free_port()),
                 env=no_key_env())
    assert proc.returncode == 2, proc.stderr
    assert time.monotonic() - started < 30
    err = proc.stderr
    assert err.startswith("recall: error:") and "Traceback" not in err
    assert "ANTHROPIC_API_KEY" in err and 'extractor = "stub"' in err
    # the same from the environment, with a blank key
    proc = serve("--db", str(tmp_path / "r.db"), "--port", str(free_port()),
                 env=no_key_env(RECALL_EXTRACTOR="haiku", ANTHROPIC_API_KEY="  "))
    assert proc.returncode == 2 and "ANTHROPIC_API_KEY" in proc.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("failures")
    env = {"RECALL_PLUGIN_MODULES": "recall_testkit.plugins.failing_extractor",
           "RECALL_EXTRACTOR": "failing",
           "RECALL_WORKER__MAX_ATTEMPTS": "3", "RECALL_WORKER__RETRY_BACKOFF": "0"}
    srv = ServerProcess(str(work / "recall.db"), work, env=env).start()
    yield srv
    srv.stop()


async def token(srv: ServerProcess, namespace: str) -> str:
    storage = make_storage(f"sqlite:///{srv.db}", SQLiteSettings())
    await storage.open()
    try:
        return await create_token(storage, namespace)
    finally:
        await storage.close()


async def test_failed_jobs_show_their_reason_in_stats_and_status(server):
    async with Agent(server.url, await token(server, "erin")) as erin, \
            Agent(server.url, await token(server, "frank")) as frank:
        bad = await erin.ok("store_memory", text="Remember this (bad key).", idempotency_key="k1")
        busy = await erin.ok("store_memory", text="Remember that (overloaded).")
        crash = await erin.ok("store_memory", text="Remember it (crash).")
        await erin.ok("store_memory", text="The release train leaves every second Monday.")
        await frank.ok("store_memory", text="The printer is on the third floor.")
        stats = await erin.wait_idle()
        assert stats["total"] == 1 and stats["pending_extractions"] == 0
        assert stats["failed_extractions"] == 3
        failures = {f["job_id"]: f for f in stats["recent_failures"]}
        assert set(failures) == {bad["job_id"], busy["job_id"], crash["job_id"]}
        # not retryable: failed on the first attempt, with the extractor's own words
        assert failures[bad["job_id"]] == {"job_id": bad["job_id"], "error": BAD_KEY_MESSAGE,
                                           "attempts": 1}
        # retryable: tried max_attempts times, then failed with the last reason
        assert failures[busy["job_id"]]["attempts"] == 3
        assert failures[busy["job_id"]]["error"] == OVERLOADED_MESSAGE
        # a bug in an extractor is retried too, and named
        assert failures[crash["job_id"]]["attempts"] == 3
        assert failures[crash["job_id"]]["error"].startswith("RuntimeError: extractor bug")
        # retrying the failed store with its key reports the failure instead of "cached"
        again = await erin.ok("store_memory", text="Remember this (bad key).", idempotency_key="k1")
        assert again["queued"] is False and again["status"] == "failed"
        # another namespace sees none of it
        other = await frank.wait_idle()
        assert other["failed_extractions"] == 0 and "recent_failures" not in other
        assert other["total"] == 1

    status = json.loads(recall_cli("status", "--db", server.db, "--json", env=server.env).stdout)
    assert status["jobs"]["failed"] == 3 and status["extractor"] == "failing"
    listed = {f["id"]: f for f in status["recent_failures"]}
    assert set(listed) == {bad["job_id"], busy["job_id"], crash["job_id"]}
    assert listed[bad["job_id"]]["error"] == BAD_KEY_MESSAGE
    assert listed[bad["job_id"]]["namespace"] == "erin" and listed[bad["job_id"]]["attempts"] == 1
    text = recall_cli("status", "--db", server.db, env=server.env).stdout
    assert f"failed job {bad['job_id']}: {BAD_KEY_MESSAGE}" in text
