"""Self-contained memories from the rule-based extractor: speakers carried, fragments kept
with the sentence they belong to."""

from __future__ import annotations

import pytest

from recall_extractors.fragments import group_fragments, split_speaker, stands_alone
from recall_extractors.stub import StubExtractor


@pytest.fixture
def stub() -> StubExtractor:
    return StubExtractor()


async def texts(stub: StubExtractor, text: str) -> list[str]:
    return [m.text for m in await stub.extract(text)]


async def test_a_fragment_stays_with_its_sentence_and_the_speaker_with_both(stub):
    assert await texts(stub, "Caroline: I went to the group yesterday. It was so powerful.") == [
        "Caroline: I went to the group yesterday. It was so powerful."]


async def test_full_sentences_stay_separate_and_each_carries_the_speaker(stub):
    got = await texts(stub, "Melanie: I painted a lake sunrise last year. "
                            "My kids love going camping in the mountains.")
    assert got == ["Melanie: I painted a lake sunrise last year.",
                   "Melanie: My kids love going camping in the mountains."]


async def test_a_leading_fragment_joins_the_sentence_after_it(stub):
    assert await texts(stub, "Jon: Yes, last week. I finally opened my dance studio downtown.") == [
        "Jon: Yes, last week. I finally opened my dance studio downtown."]


async def test_chitchat_is_still_dropped_around_fragments(stub):
    assert await texts(stub, "Melanie: Wow, thanks! That's great.") == []


async def test_speakers_are_the_entity_of_first_person_triples(stub):
    out = await stub.extract("Caroline: I live in Boston. I use vim for coding.")
    assert [(m.text, m.entity, m.attribute, m.value) for m in out] == [
        ("Caroline: I live in Boston.", "caroline", "location", "Boston"),
        ("Caroline: I use vim for coding.", "caroline", "editor", "vim")]
    # Another speaker's statement is about them, so it cannot supersede Caroline's.
    [other] = await stub.extract("Melanie: I live in Paris.")
    assert (other.entity, other.attribute) == ("melanie", "location")


async def test_sentences_with_their_own_triple_are_never_merged(stub):
    out = await stub.extract("I use vim. I switched to VS Code.")
    assert [(m.text, m.entity, m.value) for m in out] == [
        ("I use vim.", "user", "vim"), ("I switched to VS Code.", "user", "VS Code")]


@pytest.mark.parametrize("text", ["Important: I always use Emacs for everything.",
                                  "Note: deploys are frozen on Fridays.",
                                  "TODO: rotate the API keys.",
                                  "the plan: ship it on Monday",
                                  # a fact's name (the inventory's, any alias or spelling)
                                  "Skills: SQL, Tableau, Excel.", "Allergies: peanuts",
                                  "Favourite Colour: green", "Company: Globex"])
def test_labels_that_are_not_speakers(text):
    assert split_speaker(text) == (None, text)


async def test_a_line_that_names_a_fact_states_it(stub):
    out = await stub.extract("Skills: SQL, Tableau, Excel.")
    assert [(m.entity, m.attribute) for m in out] == [
        ("user", "skills:sql"), ("user", "skills:tableau"), ("user", "skills:excel")]


@pytest.mark.parametrize("text,speaker", [("Caroline: hi there", "Caroline"),
                                          ("Dr. Jane Doe: the results are in", "Dr. Jane Doe"),
                                          ("user: I prefer tea", "user")])
def test_speaker_labels(text, speaker):
    assert split_speaker(text)[0] == speaker


async def test_user_label_keeps_the_user_entity(stub):
    [m] = await stub.extract("user: I prefer tea over coffee.")
    assert (m.entity, m.text) == ("user", "user: I prefer tea over coffee.")


def test_groups_stop_growing_past_max_words():
    long = " ".join(["word"] * 30) + "."
    groups = group_fragments([(long, None), ("It was fine and so on and so forth " + long, None)])
    assert len(groups) == 2
    assert not stands_alone("So fun!") and stands_alone("I went hiking with my dog on Sunday.")
