"""Ends of a many-valued fact said in other words (issue 27), and lists of activities whose
later items are words in -ing ("yoga, running, and swimming")."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K


def triples(out) -> list[tuple]:
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


async def test_a_list_of_activities_keeps_its_later_items_in_ing(stub):
    got = triples(await stub.extract("I do yoga, running, and swimming"))
    assert [t[1] for t in got] == ["hobbies:yoga", "hobbies:running", "hobbies:swimming"]
    # a clause after the value is still no item
    assert triples(await stub.extract("I work at Google, consulting mostly")) == \
        [("user", "employer", "Google")]


async def known_of(stub, text):
    return [K(m.entity, m.attribute, m.value, m.text) for m in await stub.extract(text)
            if m.attribute]


@pytest.mark.parametrize("first,later,ended", [
    ("We use Kafka and Redis", "we ripped Kafka out last month", "uses:kafka"),
    ("We use Netflix and Hulu", "we cut Hulu, nobody watched it", "uses:hulu"),
    ("We use Slack and Loom", "our Loom license didn't get renewed", "uses:loom"),
    ("I play tennis and squash", "squash is off the table after the knee surgery",
     "hobbies:squash"),
])
async def test_an_end_said_in_other_words(stub, first, later, ended):
    known = await known_of(stub, first)
    got = triples(await stub.extract(later, known=known))
    assert [t for t in got if t[1] == ended] == [(known[0].entity, ended, "no longer")]


@pytest.mark.parametrize("first,later", [
    ("We use Netflix and Hulu", "we cut back on Hulu a bit"),
    ("I play tennis and squash", "we're cutting the squash session short today"),
])
async def test_cutting_back_ends_nothing(stub, first, later):
    known = await known_of(stub, first)
    got = triples(await stub.extract(later, known=known))
    assert not [t for t in got if t[2] == "no longer"]


async def test_a_pet_by_its_breed_and_a_pet_lost(stub):
    got = triples(await stub.extract("I got a corgi named Waffles last week"))
    assert [t[1:] for t in got] == [("pets:waffle", "Waffles")]
    known = await known_of(stub, "We have a cat named Biscuit")
    got = triples(await stub.extract(
        "we lost Biscuit in march and just adopted a retired greyhound, Pepper.", known=known))
    assert ("user", "pets:biscuit", "no longer") in got
    assert ("user", "pets:pepper", "Pepper") in got


async def test_things_of_ones_own_said_bare_are_each_a_statement(stub):
    got = triples(await stub.extract(
        "phone's a OnePlus 12, laptop's a Framework 13, browser is Brave"))
    assert got == [("user", "phone", "OnePlus 12"), ("user", "laptop", "Framework 13"),
                   ("user", "browser", "Brave")]
    texts = [m.text for m in await stub.extract(
        "Dr. Moreau is my dermatologist, for general stuff I see Dr. Kaur")]
    assert texts == ["Dr. Moreau is my dermatologist", "for general stuff I see Dr. Kaur"]


async def test_how_well_one_speaks_is_no_part_of_the_language(stub):
    known = await known_of(stub, "I speak English, Spanish and a bit of Japanese")
    assert [k.attribute for k in known] == ["languages_spoken:english", "languages_spoken:spanish",
                                            "languages_spoken:japanese"]
