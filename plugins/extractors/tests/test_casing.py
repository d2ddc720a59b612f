"""Text typed without capitals is read as if the sentence were written normally: a lone "i"
is "I" and a sentence's first word gets its capital, so a person named first is still the
subject ("sam works at Globex now"). Names elsewhere stay as typed."""

from __future__ import annotations

import pytest

from recall_extractors import StubSettings, make_stub
from recall_extractors.sentences import cased


@pytest.mark.parametrize("typed,read", [
    ("i moved to berlin, i love it", "I moved to berlin, I love it"),
    ("i'm vegan and i've got a cat", "I'm vegan and I've got a cat"),
    ("sam works at Globex", "Sam works at Globex"),
    ("i.e. not a pronoun", "I.e. not a pronoun"),
    ("my hi-fi and i-pod", "My hi-fi and i-pod"),
    ("Already Cased.", "Already Cased."),
    ("", ""),
])
def test_cased(typed, read):
    assert cased(typed) == read


async def test_a_person_named_first_in_lowercase_is_the_subject():
    ex = make_stub(StubSettings())
    got = [(m.entity, m.attribute, m.value)
           for m in await ex.extract("maria lives in Porto, i live in Lisbon.")]
    assert ("maria", "location", "Porto") in got
    assert ("user", "location", "Lisbon") in got
