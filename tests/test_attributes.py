"""The fact inventory's rules, held on every write path by facts.normalise (issue 27): an
extractor's free-form names land on the inventory's, a many-valued fact keeps one key per
value, and only an ending of that value supersedes it. Through the worker's write path
(writes.process) on both backends, with a scripted extractor so the rules, not an
extractor's wording, are what is tested."""

from __future__ import annotations

import uuid

import pytest
import pytest_asyncio

from recall_core import Extractor

from recall_core.server.runtime import build_runtime
from recall_core.kit.attributes import (ENDED, INVENTORY, canonical_entity, is_many,
                                    normalise_triple)
from recall_core.config import RecallConfig
from recall_core.models import ExtractedMemory, utcnow
from recall_core.memory.writes import process

from recall_testkit.backends import BACKENDS, PG_URL, bundled


class Scripted(Extractor):
    """Text "entity|attribute|value" -> that one fact, as a model might write it."""

    name = "scripted"

    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        entity, attribute, value = text.split("|")
        return [ExtractedMemory(text=text, entity=entity, attribute=attribute, value=value)]

    async def merge(self, memories, topic=""):  # pragma: no cover - not used here
        raise NotImplementedError


@pytest_asyncio.fixture(params=BACKENDS)
async def runtime(request, tmp_path):
    db = str(tmp_path / "r.db") if request.param == "sqlite" else PG_URL
    rt = await build_runtime(RecallConfig(db=db, rankers={"bm25": 1.0}, extractor="stub",
                                          worker={"concurrency": 0}, decay={"interval": 0}),
                             bundled(postgres=request.param == "postgres"))
    yield rt
    await rt.close()


async def say(rt, ns: str, *texts: str) -> None:
    """Store each text (a second apart, in order) and run its job through the write path."""
    for text in texts:
        await rt.service.store(ns, text)
        op = await rt.storage.claim_job(60)
        assert await process(rt.storage, Scripted(), None, op, utcnow())


async def current(rt, ns: str, entity: str, attribute: str) -> list[str]:
    return [m.value for m in await rt.service.history(ns, entity, attribute)
            if m.valid_until is None]


def ns() -> str:
    return f"attr-{uuid.uuid4().hex[:10]}"


async def test_an_alias_is_the_inventory_name_so_a_change_supersedes(runtime):
    n = ns()
    await say(runtime, n, "The User|Company|Acme Corp", "I|employer|Globex")
    assert await current(runtime, n, "user", "employer") == ["Globex"]
    assert [m.value for m in await runtime.service.history(n, "user", "employer")] == \
        ["Acme Corp", "Globex"]


async def test_a_short_spelling_of_favourite_is_the_same_fact(runtime):
    # "my fav food is sushi" then "ramen is my favourite food now": one favourite, whatever
    # spelling a model or a rule wrote
    n = ns()
    await say(runtime, n, "I|fav food|sushi", "I|Favourite Food|ramen", "I|fave_band|Blur")
    assert await current(runtime, n, "user", "favorite_food") == ["ramen"]
    assert await current(runtime, n, "user", "favorite_band") == ["Blur"]


async def test_two_words_for_one_kind_of_favourite_are_the_same_fact(runtime):
    # "my favourite movie is Inception" then "my favourite film now is Past Lives"
    n = ns()
    await say(runtime, n, "I|favorite_movie|Inception", "I|favourite film|Past Lives",
              "I|favorite tv show|Severance", "I|favourite series|Slow Horses")
    assert await current(runtime, n, "user", "favorite_movie") == ["Past Lives"]
    assert await current(runtime, n, "user", "favorite_show") == ["Slow Horses"]


async def test_a_many_valued_fact_keeps_every_value_and_an_ending_ends_only_its_own(runtime):
    n = ns()
    await say(runtime, n, "user|allergy|Peanuts", "user|allergies|shellfish",
              "user|allergies:peanuts|no")
    assert await current(runtime, n, "user", "allergies:peanut") == [ENDED]
    assert await current(runtime, n, "user", "allergies:shellfish") == ["shellfish"]
    # said again later, the value is current again
    await say(runtime, n, "user|allergies|peanuts")
    assert await current(runtime, n, "user", "allergies:peanut") == ["peanuts"]


async def test_an_ending_that_names_no_value_states_no_fact(runtime):
    n = ns()
    await say(runtime, n, "user|likes|coffee", "user|likes|no longer")
    assert await current(runtime, n, "user", "likes:coffee") == ["coffee"]
    page = await runtime.service.inspect(n)
    stored = {m["text"]: m.get("attribute") for m in page["memories"]}
    assert stored["user|likes|no longer"] is None  # kept as a memory, without a fact


async def test_different_subjects_never_share_a_key(runtime):
    n = ns()
    await say(runtime, n, "user|employer|Acme", "my wife|employer|Globex", "Mom|age|58")
    assert await current(runtime, n, "user", "employer") == ["Acme"]
    assert await current(runtime, n, "wife", "employer") == ["Globex"]
    assert await current(runtime, n, "mother", "age") == ["58"]


@pytest.mark.parametrize("name", sorted(INVENTORY))
def test_normalising_is_idempotent_for_every_attribute(name):
    once = normalise_triple("The User", name, "Some Value")
    assert once is not None and normalise_triple(*once) == once
    assert (":" in once[1]) == is_many(name)


@pytest.mark.parametrize("raw, entity", [
    ("I", "user"), ("our team", "team"), ("The Billing Service", "billing service"),
    ("my Mum", "mother"), ("Caroline's Dad", "caroline's father"), ("Sarah", "sarah")])
def test_entities(raw, entity):
    assert canonical_entity(raw) == entity


def test_words_that_say_when_a_value_holds_are_not_part_of_the_fact_name():
    from recall_core.kit.attributes import canonical_attribute
    assert canonical_attribute("new car") == "car"
    assert canonical_attribute("favourite band at the moment") == "favorite_band"
    assert canonical_attribute("current editor") == "editor"
    assert canonical_attribute("new_york") == "new_york"  # only names of the inventory


def test_a_plural_in_ies_of_a_noun_in_ie_keys_as_its_singular():
    # "horror movies" was keyed "horror_movy", so "a horror movie" was another value
    from recall_core.kit.attributes import value_key
    assert value_key("horror movies") == value_key("a horror movie") == "horror_movie"
    assert value_key("berries") == "berry" and value_key("Pilates") == "pilates"


@pytest.mark.parametrize("said,name", [
    ("other half", "partner"), ("better half", "partner"), ("uni", "school"),
    ("ride", "car"), ("handset", "phone"), ("machine", "laptop"), ("eating style", "diet"),
    ("ticketing system", "issue_tracker"), ("project management tool", "issue_tracker"),
    ("messaging app", "chat_tool"), ("VCS", "code_host"), ("codebase", "code_host"),
    ("observability stack", "monitoring"), ("host", "cloud"), ("day job", "occupation"),
])
def test_more_words_for_an_inventory_fact_are_its_name(said, name):
    # one vocabulary for every extractor: "My other half is Sam" was the key "other_half",
    # which a later "my partner is Alex" could not supersede
    from recall_core.kit.attributes import canonical_attribute
    assert canonical_attribute(said) == name
