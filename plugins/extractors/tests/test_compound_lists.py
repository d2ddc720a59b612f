"""Compound statements the rule-based extractor splits: a list of tools of different kinds,
and a request said after a fact, each its own memory."""

from __future__ import annotations

import pytest


async def rows(stub, text: str) -> list[tuple[str, str | None, str | None]]:
    return [(m.text, m.attribute, m.value) for m in await stub.extract(text)]


async def test_a_list_of_tools_of_different_kinds_is_one_memory_each(stub):
    assert await rows(stub, "I use Bitwarden and Logseq.") == [
        ("I use Bitwarden.", "password_manager", "Bitwarden"),
        ("I use Logseq.", "notes_app", "Logseq")]
    # Not a list: the words between the values say more than "and".
    out = await rows(stub, "I use vim inside tmux.")
    assert out and all("vim" in t and "tmux" in t for t, _, _ in out)


async def test_a_request_after_a_fact_is_its_own_memory(stub):
    assert await rows(stub, "I'm in Lisbon, and please use metric units.") == [
        ("I'm in Lisbon", "location", "Lisbon"), ("please use metric units.", None, None)]


async def test_a_clause_that_leaves_its_subject_out_after_and_is_its_own_statement(stub):
    # Verbs the splitter does not list ("goes", "do"): the rules read the second part with
    # the first part's subject given back, and it states a fact of that subject.
    out = await stub.extract("my son is 7 and goes to Riverside Primary")
    assert [(m.entity, m.attribute, m.value) for m in out] == [
        ("son", "age", "7"), ("son", "school", "Riverside Primary")]
    out = await stub.extract("I knit and do pottery on weekends.")
    assert [(m.attribute, m.value) for m in out] == [
        ("hobbies:knitting", "knitting"), ("hobbies:pottery", "pottery")]
    assert out[1].text == "I do pottery on weekends."
    # so a later "Gave up pottery" has a value to end, and knitting stays
    # Not cut where the second part states nothing of its own with the subject given back.
    assert [m.text for m in await stub.extract("I tried sushi and hated it")] == [
        "I tried sushi and hated it"]
    assert [m.text for m in await stub.extract("My wife and I live in Boston.")] == [
        "My wife and I live in Boston."]


@pytest.mark.parametrize("text,expected", [
    # names that end like a verb the speaker left its "I" off ("Started at Google")
    ("Ahmed lives in Camden.", ("ahmed", "location", "Camden")),
    ("Mohammed drives to work.", ("mohammed", "commute", "drive")),
    ("Started at Google last week.", ("user", "employer", "Google")),
    # ... and a verb in -s no list holds: once "the user's employer is Ahmed"
    ("Ahmed freelances for Globex now.", ("ahmed", "employer", "Globex")),
    ("Jared cycles to work now.", ("jared", "commute", "bike")),
    # after a relation, a word in -s is its verb, whatever the verb
    ("My roommate eats meat again.", ("roommate", "diet", "omnivore")),
])
async def test_who_the_statement_is_about(stub, text, expected):
    out = [(m.entity, m.attribute, m.value) for m in await stub.extract(text) if m.attribute]
    assert out == [expected]


async def test_a_list_of_hobbies_after_do_is_every_hobby(stub):
    # the single "do <gerund>" frame once read the first item only
    out = await stub.extract("I do climbing, yoga and cycling.")
    assert [(m.attribute, m.value) for m in out] == [
        ("hobbies:climbing", "climbing"), ("hobbies:yoga", "yoga"), ("hobbies:cycling", "cycling")]
    assert [m.attribute for m in await stub.extract("I do woodturning.")] == ["hobbies:woodturning"]


@pytest.mark.parametrize("text,expected", [
    # frames written for "I am ..." read "is"/"are" too
    ("Nadia is learning the cello.", ("nadia", "learning", "cello")),
    ("My wife is reporting to Omar now.", ("wife", "manager", "Omar")),
    ("Tom is studying at MIT.", ("tom", "school", "MIT")),
])
async def test_frames_read_the_third_person(stub, text, expected):
    assert [(m.entity, m.attribute, m.value) for m in await stub.extract(text)
            if m.attribute] == [expected]


@pytest.mark.parametrize("text,expected", [
    # "as of <when>" opens a statement like "as of today" does
    ("As of Monday I work at Globex.", [("user", "employer", "Globex")]),
    ("As of last month I live in Leeds.", [("user", "location", "Leeds")]),
    # a role said with "the", as with "a"
    ("I'm the lead data scientist on the fraud team.",
     [("user", "occupation", "lead data scientist")]),
    ("I'm the one who fixed it.", []),
    ("I'm the oldest of three.", []),
])
async def test_as_of_and_the_role(stub, text, expected):
    assert [(m.entity, m.attribute, m.value) for m in await stub.extract(text)
            if m.attribute] == expected


async def test_either_ends_a_value_as_too_does(stub):
    # "cilantro either" was the value (as "tea too" is not)
    assert [(m.attribute, m.value) for m in await stub.extract("I can't stand cilantro either.")
            if m.attribute] == [("dislikes:cilantro", "cilantro")]


@pytest.mark.parametrize("text,expected", [
    # a capitalised word in -s before a verb's base form is a plural noun, not a person
    # ("Errors go to Rollbar" was a person "errors" whose school is Rollbar)
    # (and "go" in lower case is no language: Rollbar is the team's monitoring)
    ("Errors go to Rollbar now.", [("team", "monitoring", "Rollbar")]),
    ("Deploys happen on Fridays.", [("team", "deploy_day", "Fridays")]),
    ("James lives in Leeds.", [("james", "location", "Leeds")]),
])
async def test_a_plural_noun_is_no_person(stub, text, expected):
    assert [(m.entity, m.attribute, m.value) for m in await stub.extract(text)
            if m.attribute] == expected


async def test_a_clause_opened_by_a_two_word_name_or_an_acronym_is_its_own(stub):
    # was one memory "I'm on a Mac, VS Code is my editor" keyed os = Mac only: a later change
    # of the OS would have superseded the editor's statement with it
    out = await stub.extract("I'm on a Mac, VS Code is my editor and my shell is zsh")
    assert [(m.attribute, m.value) for m in out] == [
        ("os", "Mac"), ("editor", "VS Code"), ("shell", "zsh")]
    out = await stub.extract("We use GitHub, AWS is our cloud.")
    assert [(m.attribute, m.value) for m in out] == [("code_host", "GitHub"), ("cloud", "AWS")]
