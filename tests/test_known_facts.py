"""Extraction reads what is known (`Extractor.reads_known`, `recall_core.memory.known`), through
the service and the worker on real storage (SQLite, and Postgres with RECALL_TEST_PG_URL).

The worker hands an extractor that reads them the namespace's current facts about the text's
subjects: never another namespace's, never a superseded value, and an extractor written
against `extract(text, topic)` keeps working. With the default (rule-based) extractor, a new
value said in words that name no fact takes the stored fact's key, so it supersedes."""

from __future__ import annotations

import uuid

import pytest

from recall_core import Extractor
from recall_core.contracts import KnownFact
from recall_core.memory.known import KEEP, relevant
from recall_core.models import ExtractedMemory

from recall_testkit.backends import BACKENDS
from recall_testkit.extraction import runtime, stored


class Recording(Extractor):
    """Says "<entity> | <attribute> | <value>" texts as facts, and records what it was told."""

    name = "recording"
    reads_known = True

    def __init__(self) -> None:
        self.told: list[tuple[str, list[tuple[str, ...]]]] = []

    async def extract(self, text, topic="", known=()):
        self.told.append((text, [k[:3] for k in known]))
        entity, attribute, value = text.split(" | ")
        return [ExtractedMemory(text=text, entity=entity, attribute=attribute, value=value)]

    async def merge(self, memories, topic=""):
        raise NotImplementedError


class Plain(Recording):
    """A third-party extractor written before `known` existed."""

    name = "plain"
    reads_known = False

    async def extract(self, text, topic=""):  # type: ignore[override]
        return await super().extract(text, topic)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_worker_tells_current_facts_of_this_namespace_only(backend, tmp_path):
    rec = Recording()
    rt = await runtime(backend, tmp_path, "recording", rec)
    try:
        ns, other = (f"known-{uuid.uuid4().hex[:8]}" for _ in range(2))
        await stored(rt, ns, "user | editor | vim", 1)
        await stored(rt, other, "user | employer | Initech", 1)
        await stored(rt, ns, "user | editor | helix", 2)   # supersedes vim
        await stored(rt, ns, "billing service | deploy_day | Friday", 3)
        await stored(rt, ns, "wife | employer | Globex", 4)
        await stored(rt, ns, "user | shell | zsh", 5)
        text, known = rec.told[-1]
        assert text == "user | shell | zsh"
        # current facts of the namespace, newest first; vim is history, Initech another
        # tenant's; the billing service and the wife are not what this text is about
        assert known == [("user", "editor", "helix")]
        await stored(rt, ns, "billing | deploy_day | Tuesday", 6)
        assert rec.told[-1][1] == [("user", "shell", "zsh"),
                                   ("billing service", "deploy_day", "Friday"),
                                   ("user", "editor", "helix")]
    finally:
        await rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_extractor_that_reads_nothing_known_keeps_working(backend, tmp_path):
    plain = Plain()
    rt = await runtime(backend, tmp_path, "plain", plain)
    try:
        ns = f"plain-{uuid.uuid4().hex[:8]}"
        await stored(rt, ns, "user | editor | vim", 1)
        await stored(rt, ns, "user | editor | helix", 2)
        assert [m.value for m in await rt.service.history(ns, "user", "editor")] == \
            ["vim", "helix"]
        assert [k for _, k in plain.told] == [[], []]
    finally:
        await rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_new_value_in_other_words_supersedes_the_known_one(backend, tmp_path):
    """The rules alone key "The API runs on FastAPI now" as the API's framework; the team's
    known framework, whose memory names the API, gives it the team's key, so it supersedes."""
    rt = await runtime(backend, tmp_path, "stub")
    try:
        ns = f"stub-{uuid.uuid4().hex[:8]}"
        await stored(rt, ns, "We use Django for the API.", 1)
        await stored(rt, ns, "The API runs on FastAPI now.", 2)
        timeline = await rt.service.history(ns, "team", "framework")
        assert [(m.value, m.valid_until is None) for m in timeline] == [("Django", False),
                                                                        ("FastAPI", True)]
        # Another namespace's facts never decide a key: there the rules' own key stands.
        alone = f"stub-{uuid.uuid4().hex[:8]}"
        await stored(rt, alone, "The API runs on FastAPI now.", 2)
        assert [m.value for m in await rt.service.history(alone, "api", "framework")] == \
            ["FastAPI"]
    finally:
        await rt.close()


def test_relevant_facts_are_the_texts_subjects_capped():
    facts = [KnownFact("user", "editor", "vim"), KnownFact("team", "ci", "Jenkins"),
             KnownFact("caroline", "location", "Rome"), KnownFact("mobile app", "framework", "Flutter"),
             KnownFact("sister", "employer", "Acme")]
    assert relevant(facts, "Caroline: I moved to Oslo.") == facts[:3]
    assert relevant(facts, "The mobile releases are weekly now") == [*facts[:2], facts[3]]
    # a fact whose value the text names is about it too ("Acme is gone")
    assert relevant(facts, "acme laid everyone off") == [*facts[:2], facts[4]]
    many = [KnownFact("user", f"a{i}", "v") for i in range(KEEP + 5)]
    assert len(relevant(many, "anything")) == KEEP


def test_a_possessive_or_another_spelling_of_a_relation_names_its_entity():
    facts = [KnownFact("user", "editor", "vim"), KnownFact("husband", "diet", "keto"),
             KnownFact("mother", "phone", "flip phone")]
    assert relevant(facts, "husband's doing Whole30 now") == facts[:2]
    assert relevant(facts, "Husband\u2019s on Whole30") == facts[:2]
    assert relevant(facts, "mom finally got a Galaxy A14") == [facts[0], facts[2]]
    assert relevant(facts, "my sister got a Pixel") == facts[:1]


def test_we_or_our_reads_the_facts_of_the_teams_things():
    facts = [KnownFact("user", "editor", "vim"), KnownFact("app", "database", "MySQL"),
             KnownFact("sister", "employer", "Acme"), KnownFact("api", "uses:redis", "Redis")]
    assert relevant(facts, "we finished migrating to Postgres") == facts[:2]
    assert relevant(facts, "Our whole stack is on Postgres now") == facts[:2]
    # without "we" or "our" the thing must be named; a person's facts never come with "our"
    assert relevant(facts, "finished migrating to Postgres") == facts[:1]
    assert relevant(facts, "our neighbour moved to Leeds") == facts[:2]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_we_statement_supersedes_its_things_known_fact(backend, tmp_path):
    """ "our app runs on MySQL", then "we finished migrating to Postgres": the app's database
    (named only the first time) is the fact the second text changes."""
    rt = await runtime(backend, tmp_path, "stub")
    try:
        ns = f"stub-{uuid.uuid4().hex[:8]}"
        await stored(rt, ns, "our app runs on MySQL 5.7, single primary with a read replica", 1)
        await stored(rt, ns, "we finished migrating to Postgres last night, how do I write an "
                             "upsert now?", 2)
        timeline = await rt.service.history(ns, "app", "database")
        assert [(m.value, m.valid_until is None) for m in timeline] == [("MySQL 5.7", False),
                                                                        ("Postgres", True)]
    finally:
        await rt.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_relations_possessive_supersedes_its_known_fact(backend, tmp_path):
    """ "husband's" names the husband: his known diet is read, and the change supersedes it."""
    rt = await runtime(backend, tmp_path, "stub")
    try:
        ns = f"stub-{uuid.uuid4().hex[:8]}"
        await stored(rt, ns, "my husband is keto so I cook two dinners most nights", 1)
        await stored(rt, ns, "husband's doing Whole30 now, can you make a dinner plan?", 2)
        timeline = await rt.service.history(ns, "husband", "diet")
        assert [(m.value, m.valid_until is None) for m in timeline] == [("keto", False),
                                                                        ("Whole30", True)]
    finally:
        await rt.close()
