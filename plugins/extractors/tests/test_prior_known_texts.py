"""A known fact's own memory is one more example of its attribute (`prior`): a change told
in words no prototype was written for ("I've switched to green tea" after "My favourite drink
is coffee.") takes the known key, and a tool used among others that names no category is
what such a change may say. Needs the attribute classifier's model (the embeddings plugin)."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact
from recall_extractors.classifier import load

pytestmark = pytest.mark.skipif(load() is None, reason="no attribute classifier model")


def facts(out):
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


async def read_after(stub, first: str, later: str):
    known = [KnownFact(m.entity, m.attribute, m.value, m.text)
             for m in await stub.extract(first) if m.attribute]
    assert known, first
    return known, facts(await stub.extract(later, known=known))


@pytest.mark.parametrize("first,later,expected", [
    ("My favourite drink is coffee.", "I've switched to green tea.",
     ("user", "favorite_drink", "green tea")),
])
async def test_a_change_in_the_words_of_the_known_memory(stub, first, later, expected):
    _, out = await read_after(stub, first, later)
    assert expected in out


@pytest.mark.parametrize("first,later", [
    # no change said: a tool used among others stays one
    ("My favourite drink is coffee.", "I also like green tea."),
    # unsure, negated or someone else's: nothing changes
    ("My favourite drink is coffee.", "Maybe I should switch to green tea?"),
    ("My favourite drink is coffee.", "My sister switched to green tea."),
])
async def test_no_change_without_one_said(stub, first, later):
    known, out = await read_after(stub, first, later)
    keys = {(k.entity, k.attribute) for k in known}
    assert not [f for f in out if f[:2] in keys], out


async def test_without_the_known_text_the_statement_keeps_its_tool(stub):
    out = facts(await stub.extract("I've switched to green tea.",
                                   known=[KnownFact("user", "favorite_drink", "coffee")]))
    assert ("user", "favorite_drink", "green tea") not in out


@pytest.mark.parametrize("first,later,expected", [
    # a change in plain words (no name, no number the rules would classify)
    ("My handle is @jdoe.", "I changed my handle to @janedoe.", ("user", "handle", "@janedoe")),
])
async def test_a_change_in_plain_words(stub, first, later, expected):
    _, out = await read_after(stub, first, later)
    assert expected in out


async def test_the_known_memory_s_own_words_are_no_new_value(stub):
    """ "Driving to work" after "I take the bus to work": "work" is the fact's frame."""
    _, out = await read_after(stub, "I take the bus to work.",
                              "Driving to work now that I have a car.")
    assert ("user", "commute", "work") not in out
