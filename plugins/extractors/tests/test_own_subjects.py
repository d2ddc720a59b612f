"""Clauses with subjects of their own: each is its own memory, whether or not it states a fact
of the inventory; a story told in the past stays one memory."""

from __future__ import annotations

import pytest

from recall_extractors import StubSettings, make_stub


@pytest.fixture
def stub():
    return make_stub(StubSettings())


@pytest.mark.parametrize("text, texts", [
    # a person's name or a relation, and their verb
    ("Mei is our designer and Tom handles QA.", ["Mei is our designer", "Tom handles QA."]),
    ("Dad's a dentist in Cork and mum teaches piano",
     ["Dad's a dentist in Cork", "mum teaches piano"]),
    # "it" for the thing named as the subject before
    ("The API is written in Rust and it runs on Fly.io.",
     ["The API is written in Rust", "The API runs on Fly.io."]),
    ("The app is in Swift, it's hosted on Render",
     ["The app is in Swift", "The app is hosted on Render"]),
    # present statements of two subjects that name no fact of the inventory
    ("I catch the 7:10 train and my wife drops the kids at school",
     ["I catch the 7:10 train", "my wife drops the kids at school"]),
    # a verb whose subject was said once
    ("I drive a Mazda 3 and ride my bike on weekends",
     ["I drive a Mazda 3", "I ride my bike on weekends"]),
    ("My son is 7 and goes to Riverside Primary",
     ["My son is 7", "My son goes to Riverside Primary"]),
    ("We use Postgres with Prisma on top, and everything deploys to Vercel",
     ["We use Postgres with Prisma on top", "everything deploys to Vercel"]),
])
async def test_each_clause_with_its_subject_is_a_memory(stub, text, texts):
    assert [m.text for m in await stub.extract(text)] == texts


@pytest.mark.parametrize("text", [
    # a story: one memory
    "We had a barbecue with the neighbours and the kids played all day.",
    "I went to a support group yesterday and it was so powerful.",
    # "it" that is an opinion of what came before, not the subject's fact
    "We use Postgres and it's been rock solid.",
    # a list of nouns, not verbs
    "My son collects stamps and coins from Japan.",
    "I have a phone, watch and laptop.",
    # a preposition opening a sentence is nobody's name
    "To deploy, run make release and then tag the commit.",
])
async def test_what_leans_on_the_clause_before_stays_one_memory(stub, text):
    assert [m.text for m in await stub.extract(text)] == [text]


async def test_an_item_of_a_list_is_no_subject(stub):
    """ "a dog called Biscuit" is the list's next item (the user's pet), not a clause about a
    thing "a dog"."""
    out = await stub.extract("I've got two cats and a dog called Biscuit")
    assert ("user", "Biscuit") in {(m.entity, m.value) for m in out if m.attribute
                                   and m.attribute.startswith("pets")}
