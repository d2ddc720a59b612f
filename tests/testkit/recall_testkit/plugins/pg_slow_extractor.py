"""A test plugin (loaded with RECALL_PLUGIN_MODULES): an extractor slow enough that a server
can be killed while it holds claimed jobs. One memory per text, verbatim."""

from __future__ import annotations

import asyncio

from recall_core import hookimpl
from recall_core.models import ExtractedMemory
from recall_core import Extractor


class SlowExtractor(Extractor):
    name = "slow"

    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        await asyncio.sleep(0.1)
        return [ExtractedMemory(text=text)]

    async def merge(self, memories, topic: str = "") -> ExtractedMemory:
        return ExtractedMemory(text=" ".join(m.text for m in memories))


@hookimpl
def register_extractors(register):
    register("slow", lambda settings: SlowExtractor())
