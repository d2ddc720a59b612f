"""Values the rules read wrongly or not at all before (issue 27, seventeenth round): who one's
supplier is, a name with where they are after it, a time zone that is one, the makers'
laptop and phone lines."""

from __future__ import annotations

import pytest


async def facts(stub, text):
    return [(m.entity, m.attribute, m.value) for m in await stub.extract(text) if m.attribute]


@pytest.mark.parametrize("text,fact", [
    # a supplier, a client or a competitor is someone else's own ("our biggest competitor
    # migrated to Snowflake"), but naming who it is states a fact of the owner's
    ("My energy supplier is Octopus", ("user", "energy_supplier", "Octopus")),
    ("Our main supplier is Brakes now", ("team", "supplier", "Brakes")),
])
async def test_who_ones_supplier_is(stub, text, fact):
    assert fact in await facts(stub, text)


async def test_what_a_competitor_does_is_still_its_own(stub):
    assert await facts(stub, "our biggest competitor migrated to Snowflake") == []


@pytest.mark.parametrize("text,fact", [
    ("My dentist is Dr Mehta on MG Road", ("user", "dentist", "Dr Mehta")),
    ("My boss is Dana on the platform team", ("user", "manager", "Dana")),
])
async def test_a_name_ends_before_where_they_are(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "I'm on Aetna through work",
    "we're on Blue Cross through my husband's job",
])
async def test_an_insurer_is_no_time_zone(stub, text):
    assert not [f for f in await facts(stub, text) if f[1] == "timezone"]


@pytest.mark.parametrize("text,zone", [
    ("I'm on Pacific time", "Pacific time"),
    ("My timezone is CET", "CET"),
    ("my timezone is UTC+2 now", "UTC+2"),
])
async def test_a_time_zone_is_still_read(stub, text, zone):
    assert ("user", "timezone", zone) in await facts(stub, text)


@pytest.mark.parametrize("text,fact", [
    ("I use a Dell Inspiron for everything", ("user", "laptop", "Dell Inspiron")),
    ("My laptop is a Lenovo IdeaPad 5", ("user", "laptop", "Lenovo IdeaPad 5")),
    ("I've got a Redmi Note 12", ("user", "phone", "Redmi Note 12")),
])
async def test_the_makers_lines_are_laptops_and_phones(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "I do yoga twice a week",        # a line named like a common word is left out
    "I write Swift at work",
])
async def test_common_words_stay_what_they_are(stub, text):
    assert not [f for f in await facts(stub, text) if f[1] in ("laptop", "phone")]


@pytest.mark.parametrize("text,fact", [
    # a school one teaches at is where one works; read as nothing, the statement was taken
    # for the school a later "part-time master's with the Open University" replaced
    ("I teach maths at St Anne's, mostly lower sets.", ("user", "employer", "St Anne's")),
    ("I teach Year 6 at Riverside Primary", ("user", "employer", "Riverside Primary")),
])
async def test_what_one_teaches_then_where(stub, text, fact):
    assert fact in await facts(stub, text)

