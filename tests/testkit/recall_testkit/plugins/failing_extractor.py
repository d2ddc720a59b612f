"""Test plugin: an extractor that fails the way a real one does.

Loaded into a real server with RECALL_PLUGIN_MODULES=plugins_for_tests.failing_extractor and
RECALL_EXTRACTOR=failing. By the text stored:
- contains "bad key": a non-retryable ExtractionError (like the haiku extractor on HTTP 401);
- contains "overloaded": a retryable ExtractionError, every attempt (like HTTP 529);
- contains "crash": a plain exception (a bug in an extractor);
- anything else: the stub extractor's answer.
"""

from recall_core import hookimpl
from recall_core.contracts import ExtractionError
from recall_core import Extractor

BAD_KEY_MESSAGE = ("Anthropic rejected the API key (HTTP 401 authentication_error: invalid "
                   "x-api-key). Set a valid key in ANTHROPIC_API_KEY and restart the server.")
OVERLOADED_MESSAGE = "Anthropic is overloaded (HTTP 529 overloaded_error) after 3 attempts."


class FailingExtractor(Extractor):
    name = "failing"

    def __init__(self):
        from recall_extractors.stub import StubExtractor

        self.inner = StubExtractor()

    async def extract(self, text, topic=""):
        if "bad key" in text:
            raise ExtractionError(BAD_KEY_MESSAGE, retryable=False)
        if "overloaded" in text:
            raise ExtractionError(OVERLOADED_MESSAGE, retryable=True)
        if "crash" in text:
            raise RuntimeError("extractor bug: list index out of range")
        return await self.inner.extract(text, topic)

    async def merge(self, memories, topic=""):
        return await self.inner.merge(memories, topic)


@hookimpl
def register_extractors(register):
    register("failing", lambda settings: FailingExtractor())
