"""Test plugin: the stub extractor made slow, so a kill lands while jobs are in flight.

Loaded into a real server process with RECALL_PLUGIN_MODULES=plugins_for_tests.slow_extractor."""

import asyncio
import os

from recall_core import hookimpl
from recall_core import Extractor


class SlowStub(Extractor):
    name = "slow"

    def __init__(self):
        from recall_extractors.stub import StubExtractor

        self.inner = StubExtractor()
        self.delay = float(os.environ.get("SLOW_EXTRACTOR_DELAY", "0.02"))

    async def extract(self, text, topic=""):
        await asyncio.sleep(self.delay)
        return await self.inner.extract(text, topic)

    async def merge(self, memories, topic=""):
        return await self.inner.merge(memories, topic)


@hookimpl
def register_extractors(register):
    register("slow", lambda settings: SlowStub())
