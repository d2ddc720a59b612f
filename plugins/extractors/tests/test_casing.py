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
    # languages are always written with a capital; a word that only contains one is not
    ("i speak french and arabic.", "I speak French and Arabic."),
    ("answers in english please", "Answers in English please"),
    ("frenchie the dog, polishing", "Frenchie the dog, polishing"),
    ("nail polish", "Nail polish"),
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


async def facts_of(ex, text: str) -> list[tuple[str, str, str]]:
    return [(m.entity, m.attribute, m.value) for m in await ex.extract(text) if m.attribute]


@pytest.mark.parametrize("typed,fact", [
    ("finally moved to rotterdam", ("user", "location", "Rotterdam")),
    ("i live in berlin", ("user", "location", "Berlin")),
    ("i moved to new york last month", ("user", "location", "New York")),
    ("we relocated to porto", ("user", "location", "Porto")),   # the household's "we"
])
async def test_a_place_typed_without_capitals_is_a_place_when_the_model_reads_one(typed, fact):
    assert await facts_of(make_stub(StubSettings()), typed) == [fact]


@pytest.mark.parametrize("typed", ["I'm in sales now.", "I moved to marketing.",
                                   "I live in fear."])
async def test_words_that_follow_the_same_verbs_are_no_place(typed):
    assert not [f for f in await facts_of(make_stub(StubSettings()), typed)
                if f[1] == "location"]


async def test_another_reading_comes_before_a_place_typed_without_capitals():
    ex = make_stub(StubSettings())
    assert await facts_of(ex, "Melanie: I moved into ux research") == [
        ("melanie", "occupation", "ux research")]
    assert await facts_of(ex, "I'm in a relationship now.") == [
        ("user", "relationship_status", "in a relationship")]


async def test_a_speaker_typed_in_lower_case_is_the_speaker_and_no_model_reads_no_place():
    # "caroline:" in lower case is read as "Caroline:" would be: her place, not the user's
    # (two speakers' facts would otherwise supersede each other); a label is no speaker
    ex = make_stub(StubSettings())
    assert await facts_of(ex, "caroline: i live in boston.") == [
        ("caroline", "location", "Boston")]
    assert await facts_of(ex, "gina: i work at a clothing store.") == [
        ("gina", "employer", "clothing store")]
    assert await facts_of(ex, "update: i moved to rotterdam") == [
        ("user", "location", "Rotterdam")]
    assert await facts_of(ex, "tldr: i moved to rotterdam") == [
        ("user", "location", "Rotterdam")]
    # without the model nothing checks the name
    assert await facts_of(make_stub(StubSettings(classifier="off")), "i live in berlin") == []
    assert await facts_of(make_stub(StubSettings(classifier="off")), "I live in Berlin") == [
        ("user", "location", "Berlin")]


async def test_languages_typed_without_capitals_are_read():
    ex = make_stub(StubSettings())
    got = [(m.text, m.attribute, m.value) for m in await ex.extract("i speak french and arabic.")]
    assert got == [("I speak French.", "languages_spoken:french", "French"),
                   ("I speak Arabic.", "languages_spoken:arabic", "Arabic")]
    got = [(m.attribute, m.value) for m in await ex.extract("i prefer answers in spanish")]
    assert got == [("answer_language", "Spanish")]
