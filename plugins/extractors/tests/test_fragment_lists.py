"""Lists of verbless fragments ("Rust backend, Axum for the web layer, SQLite for storage"),
a copula said once for a list ("I'm 29, single, ..."), and a subject said once for a list of
verb phrases: each item its own memory with its own fact. Lists of one fact's values, places
and appositions stay as they were."""

from __future__ import annotations

import pytest


async def rows(stub, text: str) -> list[tuple[str, str | None, str | None, str | None]]:
    return [(m.text, m.entity, m.attribute, m.value) for m in await stub.extract(text)]


async def test_fragments_naming_a_value_and_its_role_are_one_memory_each(stub):
    assert await rows(stub, "Firefox for browsing, Warp as my terminal, fish as my shell") == [
        ("Firefox for browsing", "user", "browser", "Firefox"),
        ("Warp as my terminal", "user", "terminal", "Warp"),
        ("fish as my shell", "user", "shell", "fish")]
    out = await rows(stub, "Pixel 8 Pro as my phone, ThinkPad T14 as my laptop")
    assert [r[2:] for r in out] == [("phone", "Pixel 8 Pro"), ("laptop", "ThinkPad T14")]


async def test_a_role_noun_after_the_value_and_a_closing_and_item(stub):
    out = await rows(stub, "TypeScript everywhere, Next.js frontend, Drizzle as the ORM, "
                           "and Vitest for tests")
    assert [r[0] for r in out] == ["TypeScript everywhere", "Next.js frontend",
                                   "Drizzle as the ORM", "Vitest for tests"]
    assert out[-1][2:] == ("testing_framework", "Vitest")


async def test_a_label_of_ours_is_kept_on_each_item_and_makes_them_the_teams(stub):
    out = await rows(stub, "Our stack: React on the frontend, Express backend, MongoDB for data")
    assert [r[0] for r in out] == ["Our stack: React on the frontend",
                                   "Our stack: Express backend", "Our stack: MongoDB for data"]
    assert {r[1] for r in out} == {"team"}
    assert out[-1][2:] == ("database", "MongoDB")


async def test_a_copula_said_once_is_shared_by_the_bare_items_after_it(stub):
    out = await rows(stub, "I'm 29, single, and I live in Lyon.")
    assert [r[1:] for r in out] == [("user", "age", "29"),
                                    ("user", "relationship_status", "single"),
                                    ("user", "location", "Lyon")]
    out = await rows(stub, "i'm 27, she/her, and im studying nursing at Georgia State")
    assert ("user", "pronouns", "she/her") in [r[1:] for r in out]
    assert len(out) == 3


async def test_the_subject_of_a_list_of_verb_phrases_carries_to_an_unlisted_verb(stub):
    out = await rows(stub, "our eng team writes Go, runs on GCP, tracks issues in Linear and "
                           "chats on Discord")
    texts = [r[0].lower() for r in out]
    assert texts[-2:] == ["our eng team tracks issues in linear",
                          "our eng team chats on discord"]


@pytest.mark.parametrize("text", [
    "I'm from Austin, Texas",             # a place, not a list ("I'm Texas")
    "I'm in Portland, Oregon",
    "My wife Elena, a pediatrician, loves Lyon",  # an apposition
    "We have 1,200 users",                # a number
    "I'm vegan, gluten-free",             # two values of one fact
    "Uninstalled Chrome for good, Firefox only now",  # a verb, not a value
    "Chrome for work, Firefox for personal stuff",    # two values of one fact
])
async def test_what_is_no_list_of_fragments_stays_one_memory(stub, text):
    out = await rows(stub, text)
    # (a relation named keeps a memory of its own, "My wife is Elena.": no fragment of the
    # text's list is one)
    assert len({r[0] for r in out if r[0] != "My wife is Elena."}) == 1
    assert ("user", "name", "Texas") not in [r[1:] for r in out]


async def test_values_of_one_fact_key_as_before(stub):
    out = await rows(stub, "I like tea, coffee and juice")
    assert sorted(r[3] for r in out) == ["coffee", "juice", "tea"]
    assert {r[2].split(":")[0] for r in out} == {"likes"}


async def test_a_routine_and_a_time_zone_said_as_fragments(stub):
    out = await rows(stub, "I get up at 6, gym at 7, and I'm at my desk by 9.")
    # the time, as "I get up at 6" gives "6" (a gym said with a time is its schedule)
    assert ("gym at 7", "user", "gym_schedule", "7") in out
    out = await rows(stub, "email me at sam.r@fastmail.com, I'm usually online 9-5, Pacific time")
    assert out[-1] == ("Pacific time", "user", "timezone", "Pacific time")
    assert len(out) == 3


async def test_a_request_ending_in_please_is_its_own_memory(stub):
    assert await rows(stub, "Call me Jay, and keep answers short please.") == [
        ("Call me Jay", "user", "name", "Jay"),
        ("keep answers short please.", None, None, None)]


async def test_an_ing_aside_after_a_clause_is_a_statement_of_its_subject(stub):
    out = await rows(stub, "I'm doing a master's in econ at LSE while working part-time at "
                           "Barclays")
    assert out[-1] == ("I'm working part-time at Barclays", "user", "employer", "Barclays")
    out = await rows(stub, "I live in Austin and work at Dell, mostly doing sales engineering "
                           "stuff")
    assert [r[0] for r in out] == ["I live in Austin", "I work at Dell",
                                   "I'm mostly doing sales engineering stuff"]


@pytest.mark.parametrize("text", [
    "I switched to Firefox, mostly using it for work",  # the aside points back
    "I had a standup, morning sync with the team",       # a noun ending in -ing
    "I've stopped with the 6am alarms, waking up around 7:30 now",  # one change, said whole
])
async def test_what_is_no_aside_of_its_own_stays_with_its_clause(stub, text):
    out = await rows(stub, text)
    assert len({r[0] for r in out}) == 1


async def test_fragments_beside_a_clause_of_ours_are_the_teams(stub):
    assert await rows(stub, "we're on AWS, Terraform for infra") == [
        ("We're on AWS", "team", "cloud", "AWS"),
        ("Terraform for infra", "team", "uses:terraform", "Terraform")]
