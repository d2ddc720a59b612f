"""Several real `recall serve` processes on one Postgres queue; one is killed with SIGKILL
while it holds jobs. No job may be lost and none may complete twice."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from recall_core.models import Operation

pytestmark = pytest.mark.slow

WORDS = ["amber", "basalt", "cobalt", "dahlia", "ember", "fjord", "garnet", "harbor", "indigo",
         "juniper", "kestrel", "lagoon", "magnet", "nectar", "obsidian", "pepper"]


class Server:
    def __init__(self, db_url: str, log: Path):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {**os.environ,
               "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.pg_slow_extractor",
               "RECALL_DISABLE_PLUGINS": "embeddings",  # no model load in this test
               "RECALL_EXTRACTOR": "slow", "RECALL_WORKER__CONCURRENCY": "2",
               "RECALL_WORKER__LEASE_SECONDS": "1.5", "RECALL_WORKER__POLL_INTERVAL": "0.05",
               "RECALL_DECAY__INTERVAL": "0"}
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "recall_core.cli", "serve", "--db", db_url,
             "--port", str(self.port)], stdout=log.open("ab"), stderr=subprocess.STDOUT, env=env)

    def wait_healthy(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"server not healthy:\n{self.log.read_text()[-3000:]}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def test_servers_share_the_queue_and_a_killed_one_loses_nothing(db_url, make_storage,
                                                                      tmp_path):
    storage = await make_storage(db_url)  # migrates before the servers start
    texts = [f"Project {a} ships with {b} support." for a in WORDS[:8] for b in WORDS[8:16]]
    servers = [Server(db_url, tmp_path / f"s{i}.log") for i in range(2)]
    try:
        for s in servers:
            await asyncio.to_thread(s.wait_healthy)
        for i, text in enumerate(texts):
            await storage.enqueue(Operation(namespace="team", idempotency_key=f"k{i}",
                                            payload={"text": text, "topic": ""}))
        # Kill the first server while both hold claims (running jobs of two owners), so the
        # victim dies with jobs in hand.
        victim, survivor = servers
        for _ in range(500):
            owners = await storage.pool.fetchval(
                "SELECT count(DISTINCT claimed_by) FROM operations WHERE status = 'running'")
            if owners >= 2 and await storage.count_jobs("team", "done") >= 4:
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the two servers never worked at the same time")
        victim.stop(signal.SIGKILL)
        # A fresh server joins (its start-up re-queues the dead one's jobs at once).
        late = Server(db_url, tmp_path / "s2.log")
        servers.append(late)
        await asyncio.to_thread(late.wait_healthy)

        deadline = asyncio.get_running_loop().time() + 60
        while await storage.count_jobs("team", "done") < len(texts):
            assert asyncio.get_running_loop().time() < deadline, "jobs were lost"
            assert await storage.count_jobs("team", "failed") == 0
            await asyncio.sleep(0.1)
        per_job = await storage.pool.fetch(
            "SELECT source_job_id, count(*) AS n FROM memories GROUP BY source_job_id")
        assert len(per_job) == len(texts) and {r["n"] for r in per_job} == {1}
        page, total = await storage.list_memories("team", 100, 0)
        assert total == len(texts) and sorted(m.text for m in page) == sorted(texts)
        assert survivor.proc.poll() is None and late.proc.poll() is None
        # The victim's jobs ran again (a second attempt) but completed once.
        assert await storage.pool.fetchval("SELECT count(*) FROM operations WHERE attempts > 1") >= 1
    finally:
        for s in servers:
            s.stop()
