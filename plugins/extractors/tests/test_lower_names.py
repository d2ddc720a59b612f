"""A name typed without capitals ("my manager is leah"): the rules offer it, the attribute
classifier's model decides whether the word reads as a person's name (`classifier.person_like`),
and without the model no fact is read from it."""

from __future__ import annotations

import pytest

from recall_extractors import StubSettings
from recall_extractors.classifier import load

needs_model = pytest.mark.skipif(load() is None, reason="no attribute classifier model")


def facts(out):
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


@needs_model
@pytest.mark.parametrize("text,expected", [
    ("my manager is leah", [("user", "manager", "Leah")]),
    ("leah is my manager", [("user", "manager", "Leah")]),
    ("my wife is rachel now", [("user", "partner", "Rachel")]),
    # a state, not a name
    ("my boss is great", []),
    ("my manager is away", []),
    # another reading comes first: her diet, his city
    ("my partner is vegan", [("partner", "diet", "vegan")]),
    ("My boss is based in New York.", [("boss", "location", "New York")]),
])
async def test_a_name_typed_without_capitals(stub, text, expected):
    assert facts(await stub.extract(text)) == expected


async def test_without_the_model_no_lower_case_name_is_read():
    from recall_extractors.stub import StubExtractor
    rules = StubExtractor(StubSettings(), classifier=None)
    assert facts(await rules.extract("my manager is leah")) == []
    assert facts(await rules.extract("My manager is Leah")) == [("user", "manager", "Leah")]
