"""Test plugin: an extractor that returns what the text spells out, as a model might: the text
is a JSON list of memories (`text`, `entity`, `attribute`, `value`, ...), so a test can make
the extractor answer anything a model could (a 3,000-character key, a NUL or a lone surrogate
from a JSON escape). Any other text is one memory of that text, without a fact.

Loaded with RECALL_PLUGIN_MODULES=recall_testkit.plugins.literal_extractor and
RECALL_EXTRACTOR=literal.
"""

import json

from recall_core import Extractor, ExtractedMemory, hookimpl


class LiteralExtractor(Extractor):
    name = "literal"

    async def extract(self, text, topic=""):
        try:
            items = json.loads(text)
        except ValueError:
            return [ExtractedMemory(text=text)]
        return [ExtractedMemory(**item) for item in items]

    async def merge(self, memories, topic=""):
        return ExtractedMemory(text=" ".join(m.text for m in memories))


@hookimpl
def register_extractors(register):
    register("literal", lambda settings: LiteralExtractor())
