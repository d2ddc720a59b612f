"""Test plugin: the stub extractor, except that it fails (non-retryably) while the file named
by RECALL_TEST_FAIL_FILE exists. Lets a test fail a job, fix the cause, and retry it.

Loaded with RECALL_PLUGIN_MODULES=plugins_for_tests.switch_extractor and RECALL_EXTRACTOR=switch.
"""

import os

from recall_core import hookimpl
from recall_core.contracts import ExtractionError
from recall_core import Extractor

FAIL_MESSAGE = "the extraction service is switched off (test)"


class SwitchExtractor(Extractor):
    name = "switch"

    def __init__(self):
        from recall_extractors.stub import StubExtractor

        self.inner = StubExtractor()

    async def extract(self, text, topic=""):
        flag = os.environ.get("RECALL_TEST_FAIL_FILE")
        if flag and os.path.exists(flag):
            raise ExtractionError(FAIL_MESSAGE, retryable=False)
        return await self.inner.extract(text, topic)

    async def merge(self, memories, topic=""):
        return await self.inner.merge(memories, topic)


@hookimpl
def register_extractors(register):
    register("switch", lambda settings: SwitchExtractor())
