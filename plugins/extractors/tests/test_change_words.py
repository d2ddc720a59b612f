"""The words that end a value are one vocabulary (`change_words`), read alike by every rule:
before, "We ditched Teams for Slack" was a swap and "We dumped Teams for Slack" kept Teams
current, because only some rules knew "dumped" (issue 27)."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_core.kit.attributes import ENDED
from recall_extractors.change_words import DISCARDED

KNOWN = (K("team", "ci", "Jenkins"), K("user", "password_manager", "LastPass"))
# Each word as said ("gave up on" is the regex "gave up(?: on)?").
VERBS = [v.replace("(?: on)?", " on") for v in DISCARDED.split("|")]


def facts(out):
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


async def test_a_goodbye_ends_the_value_it_names(stub):
    # before: "said goodbye to Atlassian" stated Atlassian as the current employer again
    known = [K("user", "employer", "Atlassian")]
    out = await stub.extract("After five years I said goodbye to Atlassian.", known=known)
    assert facts(out) == [("user", "employer", ENDED)]


@pytest.mark.parametrize("verb", ["replaced", "swapped", "traded", "ditched", "dumped",
                                  "scrapped", "binned", "axed", "abandoned"])
async def test_a_swap_keeps_the_new_value_whatever_the_verb(stub, verb):
    out = await stub.extract(f"We {verb} Jenkins for Buildkite.", known=KNOWN)
    assert ("team", "ci", "Buildkite") in facts(out)
    out = await stub.extract(f"I {verb} LastPass for Bitwarden.", known=KNOWN)
    assert ("user", "password_manager", "Bitwarden") in facts(out)


@pytest.mark.parametrize("verb", VERBS)
async def test_every_discarding_word_ends_the_value_it_names(stub, verb):
    out = await stub.extract(f"We {verb} Jenkins last month.", known=KNOWN)
    assert facts(out) == [("team", "ci", ENDED)]


@pytest.mark.parametrize("first,later,key", [
    ("We use Redis and Kafka.", "We ripped out Kafka, it was overkill.", "uses:kafka"),
    ("I like jazz and techno.", "I've grown out of techno.", "likes:techno"),
])
async def test_an_ending_of_one_of_several_values(stub, first, later, key):
    known = [K(m.entity, m.attribute, m.value) for m in await stub.extract(first)
             if m.attribute]
    assert any(k.attribute == key for k in known), known
    out = facts(await stub.extract(later, known=known))
    assert (known[0].entity, key, ENDED) in out, out


async def test_gone_is_no_value(stub):
    # was ("user", "italian", "basically gone") beside the ending
    known = [K("user", "languages_spoken:italian", "Italian")]
    out = facts(await stub.extract("my Italian is basically gone, can't hold a convo anymore",
                                   known=known))
    assert out == [("user", "languages_spoken:italian", ENDED)]


@pytest.mark.parametrize("text,expected", [
    ("My major is history.", ("user", "field_of_study", "history")),
    ("My favourite band is the Grateful Dead.", ("user", "favorite_band", "Grateful Dead")),
])
async def test_words_of_an_ending_are_still_values_where_they_name_one(stub, text, expected):
    assert facts(await stub.extract(text)) == [expected]
