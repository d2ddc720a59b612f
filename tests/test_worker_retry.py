"""Retryable extraction failures back off in the queue itself and then succeed."""

from __future__ import annotations

import asyncio
import time

import recall_extractors
import recall_sqlite
from recall_core import ExtractionError, hookimpl
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.models import ExtractedMemory
from recall_core.plugins import get_plugin_manager
from recall_core import Extractor


class Flaky(Extractor):
    name = "flaky"

    def __init__(self):
        self.calls: list[float] = []

    async def extract(self, text, topic=""):
        self.calls.append(time.monotonic())
        if len(self.calls) <= 2:
            raise ExtractionError("429 rate limited", retryable=True)
        return [ExtractedMemory(text=text)]

    async def merge(self, memories, topic=""):
        raise NotImplementedError


async def test_retryable_failure_backs_off_then_completes(tmp_path):
    flaky = Flaky()

    class Plugin:
        @hookimpl
        def register_extractors(self, register):
            register("flaky", lambda settings: flaky)

    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    pm.register(Plugin(), name="flaky-plugin")
    config = load_config(None, db=str(tmp_path / "r.db"), extractor="flaky",
                         worker={"concurrency": 2, "retry_backoff": 0.3, "poll_interval": 0.05})
    rt = await build_runtime(config, pm)
    try:
        ack = await rt.service.store("ns", "Retries must not lose this.")
        deadline = time.monotonic() + 15
        while (await rt.service.stats("ns"))["pending_extractions"]:
            assert time.monotonic() < deadline, "job never completed"
            await asyncio.sleep(0.05)
        op = await rt.storage.get_operation("ns", ack["job_id"])
        assert op.status == "done" and op.attempts == 3
        gaps = [b - a for a, b in zip(flaky.calls, flaky.calls[1:])]
        assert gaps[0] >= 0.25 and gaps[1] >= 0.55  # 0.3 s then 0.6 s, even with 2 workers
        assert (await rt.service.inspect("ns"))["total"] == 1
    finally:
        await rt.close()
