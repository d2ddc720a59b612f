"""Ordinary first statements of a fact, said casually (issue 27): a later change supersedes
only a fact that was read, so the first statement must be read as its (entity, attribute,
value) whatever padding it carries."""

from __future__ import annotations

import pytest


def facts(out):
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


@pytest.mark.parametrize("text,expected", [
    # a person introduced by what they are is the name
    ("my boss is this guy Pete, super chill, never micromanages", ("user", "manager", "Pete")),
    ("My manager is a woman called Ines.", ("user", "manager", "Ines")),
    # "like" before a number
    ("I usually work from like 7am to 3pm", ("user", "work_hours", "from 7am to 3pm")),
    # the owner left out of "<attribute>'s"
    ("name's Kwame btw", ("user", "name", "Kwame")),
    # a version number stays with the tool's name
    ("Our database is Postgres 15.", ("team", "database", "Postgres 15")),
])
async def test_padding_is_no_part_of_the_value(stub, text, expected):
    assert expected in facts(await stub.extract(text))


@pytest.mark.parametrize("text", [
    "I like 90s music",            # "like" the verb stays
    "Leo's wedding was lovely",     # a noun in -ing after a name's 's
])
async def test_words_that_look_like_fillers_stay(stub, text):
    out = facts(await stub.extract(text))
    assert all(a != "work_hours" and e != "leo" for e, a, _ in out)


async def test_all_our_x_is_our_x(stub):
    assert [(e, a) for e, a, _ in facts(await stub.extract(
        "all our repos are on GitHub under the company org"))] == [("team", "code_host")]


@pytest.mark.parametrize("text,expected", [
    # words that say how big, old or worn a thing is, and a generic noun after it, name no
    # other thing: the lexicon's category is reached through them
    ("we keep everything in one big Postgres 15 instance", ("team", "database", "Postgres 15")),
    ("my roommate drives this beat up Jeep Wrangler", ("roommate", "car", "Jeep Wrangler")),
    ("running Debian 12 on my desktop, rock solid", ("user", "os", "Debian 12")),
])
async def test_a_tool_reached_through_its_description(stub, text, expected):
    assert expected in facts(await stub.extract(text))


def test_a_name_the_lexicon_knows_whole_keeps_its_words():
    from recall_extractors.lexicon import category_of

    assert category_of("New Relic") == "monitoring"
    assert category_of("Windows Terminal") == "terminal"
    assert category_of("SQL Server") == "database"


async def test_running_a_race_is_no_tool(stub):
    assert facts(await stub.extract("I run marathons")) == []


@pytest.mark.parametrize("text,expected", [
    ("my dad's been an electrician for 30 years", ("father", "occupation", "electrician")),
    ("my brother writes firmware for a living", ("brother", "occupation", "writes firmware")),
    ("Leo's doing his PhD at ETH Zurich", ("leo", "school", "ETH Zurich")),
    ("been trying to pick up Rust in the evenings", ("user", "learning", "Rust")),
    ("Ana goes by they/them", ("ana", "pronouns", "they/them")),
    ("Ana's pronouns are they/them", ("ana", "pronouns", "they/them")),  # was the user's
    ("my pronouns are she/her", ("user", "pronouns", "she/her")),
])
async def test_what_a_person_is_does_and_goes_by(stub, text, expected):
    assert expected in facts(await stub.extract(text))


@pytest.mark.parametrize("text,expected", [
    ("Arc is the only browser I can tolerate tbh", ("user", "browser", "Arc")),
    ("Go is the language we write everything in", ("team", "language", "Go")),
    ("kitty is my terminal of choice, GPU rendering ftw", ("user", "terminal", "Kitty")),
    ("JetBrains fanboy here, IntelliJ all day every day", ("user", "editor", "JetBrains")),
    ("my husband's a Fedora guy, won't touch anything else", ("husband", "os", "Fedora")),
])
async def test_the_one_of_its_kind(stub, text, expected):
    assert expected in facts(await stub.extract(text))


@pytest.mark.parametrize("text", [
    "Chrome is the only browser I hate",
    "vim is the editor I used to love",
    "Sleep is the only thing I want",
    "I don't do anything for a living",
])
async def test_not_the_one_used(stub, text):
    assert facts(await stub.extract(text)) == []


@pytest.mark.parametrize("text,expected", [
    ("by day I'm a UX researcher, by night a pretty terrible bassist",
     ("user", "occupation", "UX researcher")),
    ("it's a 20 min walk to the office, which I actually kinda love", ("user", "commute", "walk")),
    ("work gave me a Dell XPS 15, it's ok", ("user", "laptop", "Dell XPS 15")),
    ("we cut a release every six weeks or so", ("team", "release_schedule", "every six weeks")),
    ("our team comms happen on Mattermost, self-hosted", ("team", "chat_tool", "Mattermost")),
    ("Our error tracking is Sentry.", ("team", "monitoring", "Sentry")),
    # a noun that names no kind of value: the thing named decides
    ("My daily driver is a Honda Civic.", ("user", "car", "Honda Civic")),
    ("My cell is a Pixel 8.", ("user", "phone", "Pixel 8")),
    ("My work laptop is a ThinkPad.", ("user", "laptop", "ThinkPad")),
    # a role's name is the owner's fact of that role
    ("My partner's name is Alex.", ("user", "partner", "Alex")),
])
async def test_first_statements_of_every_day_facts(stub, text, expected):
    assert expected in facts(await stub.extract(text))


@pytest.mark.parametrize("text,wrong", [
    ("Sam gave me a ride in his Tesla", "car"),
    ("My dream car is a Porsche 911.", "car"),
    ("my cell is 555-123-4567", "phone"),
    ("My brother's name is Tom.", "partner"),
])
async def test_and_not_where_none_is_stated(stub, text, wrong):
    assert all(a != wrong for _, a, _ in facts(await stub.extract(text)))
