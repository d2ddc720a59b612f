"""The providers a person is a customer of (issue 27): a bank, a mobile carrier, an internet
provider, a gym, a health or car insurer. Each is a single-valued fact of its own, so "moved
everything to Ally" replaces Chase, and none of them is ever read as the person's employer or
school ("I bank with Chase" after "I work at Acme" changed the employer to Chase)."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_core.kit.attributes import normalise_triple


def triples(out) -> list[tuple]:
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


EMPLOYER = K("user", "employer", "Acme", "I work at Acme.")


@pytest.mark.parametrize("text,expected", [
    ("I bank with Chase", ("user", "bank", "Chase")),
    ("I bank with First Tech Credit Union", ("user", "bank", "First Tech Credit Union")),
    ("I'm with Verizon", ("user", "mobile_carrier", "Verizon")),
    ("I go to Planet Fitness", ("user", "gym", "Planet Fitness")),
    ("I'm a member at Equinox", ("user", "gym", "Equinox")),
    ("I joined Equinox last month", ("user", "gym", "Equinox")),
    ("I'm insured with Geico", ("user", "car_insurance", "Geico")),
    ("I moved everything to Ally", ("user", "bank", "Ally")),
])
async def test_a_provider_is_no_employer_or_school(stub, text, expected):
    got = triples(await stub.extract(text, known=[EMPLOYER]))
    assert got == [expected]


@pytest.mark.parametrize("text,expected", [
    ("I work at Chase", ("user", "employer", "Chase")),
    ("I'm a teller at Chase", ("user", "employer", "Chase")),
    ("I'm contracting at HSBC right now.", ("user", "employer", "HSBC")),
    ("I start at Monzo on monday", ("user", "employer", "Monzo")),
    ("My brother's at Monzo now, way happier", ("brother", "employer", "Monzo")),
])
async def test_a_word_of_work_keeps_a_bank_the_employer(stub, text, expected):
    assert expected in triples(await stub.extract(text))


@pytest.mark.parametrize("first,later,expected", [
    ("My phone carrier is Verizon", "ported my number to T-Mobile yesterday",
     ("user", "mobile_carrier", "T-Mobile")),
    ("My gym is Equinox", "equinox got too pricey so i switched to the YMCA",
     ("user", "gym", "YMCA")),
    ("I bank with Chase", "got sick of the fees and moved everything to Ally",
     ("user", "bank", "Ally")),
    ("my car insurance is with Geico", "I went with Progressive when I renewed",
     ("user", "car_insurance", "Progressive")),
])
async def test_a_new_provider_takes_the_known_ones_key(stub, first, later, expected):
    known = [K(m.entity, m.attribute, m.value, m.text) for m in await stub.extract(first)
             if m.attribute]
    assert [k.attribute for k in known] == [expected[1]]
    assert expected in triples(await stub.extract(later, known=known))


async def test_a_first_name_that_names_a_bank_is_still_a_person(stub):
    assert triples(await stub.extract("Chase moved to Denver")) == \
        [("chase", "location", "Denver")]


@pytest.mark.parametrize("value,attribute", [
    ("Tuesdays and Thursdays", "gym_schedule"), ("7", "gym_schedule"),
    ("in the evenings", "gym_schedule"), ("7am", "gym_schedule"),
    ("Equinox", "gym"), ("24 Hour Fitness", "gym"), ("Planet Fitness", "gym"),
])
def test_a_gym_said_with_a_time_is_when_one_goes(value, attribute):
    """The rule is core's, so every extractor's "gym" is held to it."""
    assert normalise_triple("user", "gym", value)[1] == attribute
    assert normalise_triple(*normalise_triple("user", "gym", value)) == \
        normalise_triple("user", "gym", value)
