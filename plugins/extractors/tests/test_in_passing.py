"""New values said in passing (issue 27, seventeenth round): what a request or a complaint
takes as given is the value held now. The speaker's own thing named before a negation ("my
Pixel 8 won't sync"), a town named after the kind of home ("a bungalow in Worthing", "the new
flat in Chichester"), where one lives named in a request ("a GP near us in Bristol?")."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K


async def facts(stub, text, *known):
    return [(m.entity, m.attribute, m.value) for m in await stub.extract(text, known=known)
            if m.attribute]


@pytest.mark.parametrize("text", [
    "my Pixel 8 won't sync with the family calendar, how do I fix that",
    "Ugh, my new Pixel 8 doesn't charge past 80%. Is that a setting?",
])
async def test_the_speakers_own_thing_before_a_negation_is_the_new_value(stub, text):
    assert ("user", "phone", "Pixel 8") in await facts(
        stub, text, K("user", "phone", "iPhone 12"))


@pytest.mark.parametrize("text", [
    "I don't have my Pixel 8 anymore",            # the negation comes first
    "I'm not getting a Pixel 8, my iPhone is fine",
    "my Pixel 8 was my phone years ago",         # history
    "Tom's Pixel 8 won't sync with the family calendar",  # not the speaker's
])
async def test_a_denied_or_past_or_anothers_thing_is_no_new_value(stub, text):
    assert ("user", "phone", "Pixel 8") not in await facts(
        stub, text, K("user", "phone", "iPhone 12"))


@pytest.mark.parametrize("text,town", [
    ("We live in a bungalow in Worthing.", "Worthing"),
    ("we're in the new flat in Chichester now, still surrounded by boxes", "Chichester"),
    ("Mum is living at home in Harrogate", "Harrogate"),
    ("My sister lives up in Aberdeen", "Aberdeen"),
])
async def test_a_town_after_the_kind_of_home_is_where_one_lives(stub, text, town):
    assert any(f[1:] == ("location", town) for f in await facts(stub, text))


@pytest.mark.parametrize("text", [
    "I'm in a meeting in Berlin",
    "We live in a house in the suburbs",
    "I'm at home in bed",
])
async def test_no_town_no_home(stub, text):
    assert not [f for f in await facts(stub, text) if f[1] == "location"]


@pytest.mark.parametrize("text", [
    "can you find me a GP surgery near us in Bristol that's taking new patients?",
    "any good coworking spaces near my flat in Bristol?",
])
async def test_a_request_names_where_one_lives(stub, text):
    assert ("user", "location", "Bristol") in await facts(
        stub, text, K("user", "location", "Swindon"))


async def test_a_request_about_somewhere_else_names_no_home(stub):
    assert not [f for f in await facts(stub, "any good hotels in Bristol near the station?",
                                       K("user", "location", "Swindon"))
                if f[1] == "location"]


@pytest.mark.parametrize("text,fact", [
    ("my Pixel 6 keeps dropping wifi at night, any idea why??", ("user", "phone", "Pixel 6")),
    ("my iPhone 11 battery dies by lunchtime", ("user", "phone", "iPhone 11")),
    ("My Honda Civic failed its MOT", ("user", "car", "Honda Civic")),
    ("can you find the tyre pressure for my Honda Jazz?", ("user", "car", "Honda Jazz")),
    ("the fan on my ThinkPad X1 is so loud", ("user", "laptop", "ThinkPad X1")),
    # asked or complained about, one's own thing is taken as given
    ("should I upgrade my iPhone 12 or wait?", ("user", "phone", "iPhone 12")),
    ("my iPhone 11 battery dies by lunchtime, should I replace the battery?",
     ("user", "phone", "iPhone 11")),
    ("my Pixel 8 won't sync with the family calendar", ("user", "phone", "Pixel 8")),
])
async def test_the_speakers_phone_laptop_or_car_named_as_theirs(stub, text, fact):
    """Said in passing, with nothing stored yet: the one they have."""
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "my wife's iPhone keeps crashing",          # someone else's
    "I sold my old Honda Civic",                # ended
    "my iPhone 11 was stolen at the gig",       # lost
    "I used to love my Pixel 3",                # the past
    "Tom's Pixel 8 is great",                   # not named as the speaker's
    "I don't have my Pixel 8 any more",         # denied
])
async def test_no_phone_laptop_or_car_of_the_speakers_now(stub, text):
    assert not [f for f in await facts(stub, text) if f[1] in ("phone", "car", "laptop")]


@pytest.mark.parametrize("text,known", [
    ("How does my Civic's fuel economy stack up against a Prius?",
     K("user", "car", "Honda Civic")),
    ("my Pixel's in the repair shop so I'm borrowing a spare this week",
     K("user", "phone", "Pixel 7")),
])
async def test_ones_own_thing_named_in_part_is_the_one_stored(stub, text, known):
    """"my Civic" for the stored "Honda Civic": the same one, not a vaguer new value (a
    possessive ends the name: not "Civic fuel")."""
    assert [f for f in await facts(stub, text, known) if f[1] == known.attribute] == \
        [(known.entity, known.attribute, known.value)]
