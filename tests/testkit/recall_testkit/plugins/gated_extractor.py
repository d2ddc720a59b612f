"""Test plugin: the stub extractor held at a gate, then slow.

Loaded with RECALL_PLUGIN_MODULES=plugins_for_tests.gated_extractor and RECALL_EXTRACTOR=gated.
Every extraction waits until the file named by GATED_EXTRACTOR_GATE exists (so a test can keep
every worker slot busy for as long as it likes), then sleeps GATED_EXTRACTOR_DELAY seconds."""

import asyncio
import os
from pathlib import Path

from recall_core import hookimpl
from recall_core import Extractor


class GatedStub(Extractor):
    name = "gated"

    def __init__(self):
        from recall_extractors.stub import StubExtractor

        self.inner = StubExtractor()
        self.gate = Path(os.environ["GATED_EXTRACTOR_GATE"])
        self.delay = float(os.environ.get("GATED_EXTRACTOR_DELAY", "0"))

    async def extract(self, text, topic=""):
        while not self.gate.exists():
            await asyncio.sleep(0.02)
        await asyncio.sleep(self.delay)
        return await self.inner.extract(text, topic)

    async def merge(self, memories, topic=""):
        return await self.inner.merge(memories, topic)


@hookimpl
def register_extractors(register):
    register("gated", lambda settings: GatedStub())
