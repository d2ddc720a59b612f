"""Table tests of the rule-based extractor: statements, subjects, facts however phrased,
types, chit-chat, merge. The phrasings are in phrasings.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pluggy
import pytest

from recall_core import hookspecs
from recall_core.models import Memory
from recall_core.testing import registrations
from recall_core.contracts import ExtractionError, Extractor
from recall_extractors import HaikuSettings, StubSettings, make_stub
from recall_testkit.phrasings import NO_FACT, STATES
from recall_core.kit.attributes import ENDED
from recall_extractors.classifier import load as load_classifier
from recall_extractors.keys import canonical_triple
from recall_extractors.sentences import split_sentences
from recall_extractors.stub import StubExtractor


@pytest.fixture
def stub() -> StubExtractor:
    return make_stub(StubSettings())


async def one(stub: StubExtractor, text: str):
    out = await stub.extract(text)
    assert len(out) == 1, out
    return out[0]


# -- facts: who, which attribute, which value ------------------------------------------------

async def triples(stub: StubExtractor, text: str) -> list[tuple[str, str, str]]:
    return [(m.entity, m.attribute, m.value) for m in await stub.extract(text) if m.attribute]


@pytest.mark.parametrize("text, expected", STATES, ids=[t for t, _ in STATES])
async def test_states(stub, text, expected):
    assert await triples(stub, text) == expected


@pytest.mark.parametrize("text", NO_FACT)
async def test_states_no_fact(stub, text):
    assert await triples(stub, text) == []
    assert len(await stub.extract(text)) == 1  # the statement is kept, without a fact


# Two statements of one fact, however each is phrased: the same (entity, attribute).
SAME_KEY = [
    ("I work at Acme Corp.", "I just started a new job at Globex."),
    ("I work at Acme Corp.", "My employer is Globex now."),
    ("I live in Paris.", "Actually I moved to Berlin last month."),
    ("I live in Austin.", "I'm in Denver now."),
    ("My favourite editor is vim.", "These days I use VS Code for everything."),
    ("I use Chrome.", "I switched from Chrome to Firefox."),
    ("We use MySQL for storage.", "We migrated storage to Postgres over the weekend."),
    ("We track tickets in Jira.", "We moved our tickets from Jira to Linear."),
    ("My manager is Dana.", "I report to Priya now."),
    ("I'm vegetarian.", "I'm vegan now, no more dairy."),
    ("I drive a Toyota Corolla.", "I sold the old car, I drive a Honda Civic now."),
    ("I love coffee.", "I don't like coffee anymore."),
    ("I use Docker.", "I stopped using Docker."),
    ("I'm allergic to peanuts.", "I'm no longer allergic to peanuts."),
]


@pytest.mark.parametrize("first, second", SAME_KEY)
async def test_a_change_lands_on_the_same_key(stub, first, second):
    (a,) = [m for m in await stub.extract(first) if m.attribute]
    (b,) = [m for m in await stub.extract(second) if m.attribute]
    assert (a.entity, a.attribute) == (b.entity, b.attribute)
    assert a.value != b.value


# Statements that must never supersede each other: other subjects, other values of a
# many-valued fact, other attributes.
DIFFERENT_KEY = [
    ("I work at Acme Corp.", "My wife works at Globex."),
    ("I live in Lisbon.", "My sister lives in Madrid."),
    ("I live in Lisbon.", "Sarah moved to Porto."),
    ("I'm allergic to peanuts.", "I'm allergic to shellfish."),
    ("I like coffee.", "I also like tea."),
    ("I have a dog named Rex.", "I adopted a cat named Miso."),
    ("I speak French.", "I speak German."),
    ("I use Docker.", "I use Firefox."),
    ("I use vim.", "I also use Neovim."),
    ("I live in Berlin.", "I'm originally from Porto."),
    ("We use Postgres for storage.", "The billing service uses MySQL."),
    ("I use vim.", "My colleague uses Emacs."),
]


@pytest.mark.parametrize("first, second", DIFFERENT_KEY)
async def test_different_facts_never_share_a_key(stub, first, second):
    a = [(m.entity, m.attribute) for m in await stub.extract(first) if m.attribute]
    b = [(m.entity, m.attribute) for m in await stub.extract(second) if m.attribute]
    assert a and b and not set(a) & set(b)


async def test_unrelated_tools_never_share_a_key(stub):
    tools = ["Docker", "Firefox", "vim", "Terraform", "Postgres", "zsh", "Obsidian", "tmux"]
    keys = [(await one(stub, f"I use {t}.")).attribute for t in tools]
    assert len(set(keys)) == len(keys), keys


# -- statements, not sentences ----------------------------------------------------------------

SPLITS = [
    ("I prefer dark mode in every editor and I like my coffee black.",
     ["I prefer dark mode in every editor", "I like my coffee black."]),
    ("I live in Berlin and I prefer tea.", ["I live in Berlin", "I prefer tea."]),
    ("I live in Berlin and work at Globex.", ["I live in Berlin", "I work at Globex."]),
    ("I'm Jonas, I work at Zalando, and I live in Berlin.",
     ["I'm Jonas", "I work at Zalando", "I live in Berlin."]),
    ("Sarah moved to Porto and her husband works at Globex.",
     ["Sarah moved to Porto", "her husband works at Globex."]),
    ("I use vim; my shell is zsh.", ["I use vim", "my shell is zsh."]),
    ("I'm allergic to peanuts and shellfish.",
     ["I'm allergic to peanuts.", "I'm allergic to shellfish."]),
]


@pytest.mark.parametrize("text, texts", SPLITS)
async def test_compound_sentences_become_one_memory_per_statement(stub, text, texts):
    out = await stub.extract(text)
    assert [m.text for m in out] == texts
    assert all(m.attribute for m in out)


@pytest.mark.parametrize("text", [
    "I went to a support group yesterday and it was so powerful.",
    "My wife and I live in Boston.",
    "We had a barbecue with the neighbours and the kids played all day.",
])
async def test_what_states_no_fact_stays_one_memory(stub, text):
    assert [m.text for m in await stub.extract(text)] == [text]


async def test_the_last_person_named_is_who_he_or_she_is(stub):
    out = await stub.extract("My sister lives in Madrid. She works at Telefonica.")
    assert [(m.entity, m.attribute) for m in out] == [("sister", "location"),
                                                      ("sister", "employer")]
    lone = await stub.extract("She works at Telefonica.")
    assert [m.attribute for m in lone] == [None]  # nobody named: no fact


# -- types ------------------------------------------------------------------------------------

TYPES = [
    ("I prefer tabs over spaces.", "preference"),
    ("Please keep answers short.", "preference"),
    ("I always use tabs.", "preference"),
    ("My favourite colour is blue.", "preference"),
    ("We decided to use Redis for caching.", "decision"),
    ("Let's go with FastAPI for the API.", "decision"),
    ("I am planning to use Rust for the parser.", "decision"),
    ("From now on, all PRs need two reviews.", "decision"),
    ("To deploy, run make release and then tag the commit.", "procedure"),
    ("Always run the tests before pushing.", "procedure"),
    ("Never commit directly to main.", "procedure"),
    ("First, install the dependencies.", "procedure"),
    ("Run ./scripts/reset.sh when the db is stuck.", "procedure"),
    ("I always run the linter before committing.", "procedure"),
    ("I work at Acme Corp.", "fact"),
    ("Call me Bob.", "fact"),
    ("The staging server is at staging.example.com.", "fact"),
    ("I use vim.", "fact"),
]


@pytest.mark.parametrize("text, kind", TYPES)
async def test_types(stub, text, kind):
    assert (await one(stub, text)).type == kind


# -- chit-chat and sentence keeping -----------------------------------------------------------

CHITCHAT = ["hi", "Hi!", "thanks!", "Thank you so much!", "lol ok", "ok cool", "sounds good",
            "Hey there! How are you?", "haha nice", "Thanks, that helps a lot.",
            "Got it, makes sense.", "bye, see you later", "So I've been thinking.", "", "  \n "]


@pytest.mark.parametrize("text", CHITCHAT)
async def test_chitchat_yields_nothing(stub, text):
    assert await stub.extract(text) == []


async def test_every_content_sentence_is_kept(stub):
    text = ("Hi! I use vim. Thanks! We decided to use Postgres for storage. lol\n"
            "- Always run the tests before pushing\n"
            "- My dog's name is Rex\n"
            "The API rate limit is 100 requests per minute (see docs.example.com/limits). "
            "Can you remind me on Friday? I think maybe we should try Rust.")
    out = await stub.extract(text)
    assert [m.text for m in out] == [
        "I use vim.",
        "We decided to use Postgres for storage.",
        "Always run the tests before pushing",
        "My dog's name is Rex",
        "The API rate limit is 100 requests per minute (see docs.example.com/limits).",
        "Can you remind me on Friday?",
        "I think maybe we should try Rust.",
    ]


@pytest.mark.parametrize("text, sentences", [
    ("Mr. Smith works at Acme Inc. in Berlin.", ["Mr. Smith works at Acme Inc. in Berlin."]),
    ("Use e.g. pytest. Then ship it.", ["Use e.g. pytest.", "Then ship it."]),
    ("I use Python 3.12! Really?  Yes.", ["I use Python 3.12!", "Really?", "Yes."]),
    ("1. install\n2. run\n\n* deploy", ["install", "run", "deploy"]),
    ('He said "stop." Then he left...', ['He said "stop."', "Then he left..."]),
    ("I use C. I also use Go", ["I use C.", "I also use Go"]),
])
def test_sentence_splitting(text, sentences):
    assert split_sentences(text) == sentences


async def test_repeated_sentence_is_one_memory(stub):
    assert len(await stub.extract("I use vim. I use vim!")) == 1


async def test_deterministic(stub):
    text = "I use vim. We decided to use Postgres. Always run the tests first."
    assert await stub.extract(text) == await StubExtractor().extract(text)


# -- importance -------------------------------------------------------------------------------

async def test_importance_heuristics(stub):
    async def imp(text: str) -> float:
        return (await one(stub, text)).importance

    question, statement = "Can you remind me on Friday?", "The deploy broke on Friday."
    assert 0.0 <= await imp(question) < await imp(statement)
    assert await imp("The deploy broke on Friday.") < await imp("I work at Acme Corp.")
    assert await imp("I work at Acme Corp.") < await imp("My name is Alice.")
    assert await imp("Maybe we use Redis.") < await imp("We use Redis.")
    assert await imp("Never commit to main.") > await imp("Commit to main.")
    assert await imp("IMPORTANT: the prod DB password rotates monthly!") >= 0.7
    for text, _ in STATES:
        for m in await stub.extract(text):
            assert 0.0 <= m.importance <= 1.0


# -- merge ------------------------------------------------------------------------------------

def mem(text: str, days_ago: int, importance: float = 0.5, type: str = "fact", **kw) -> Memory:
    at = datetime(2026, 11, 1, tzinfo=timezone.utc) - timedelta(days=days_ago)
    return Memory(namespace="ns", text=text, created_at=at, importance=importance, type=type, **kw)


async def test_merge_newest_value_wins_and_stale_text_is_dropped(stub):
    out = await stub.merge([
        mem("I switched to VS Code.", 1, entity="user", attribute="editor", value="VS Code"),
        mem("I use vim.", 40, 0.7, entity="user", attribute="editor", value="vim"),
        mem("VS Code is my editor now.", 2, entity="user", attribute="editor", value="VS Code"),
    ])
    assert (out.entity, out.attribute, out.value) == ("user", "editor", "VS Code")
    assert "vim" not in out.text and "VS Code" in out.text
    assert out.importance == 0.7


async def test_merge_combines_distinct_details_once(stub):
    out = await stub.merge([
        mem("Deploys happen on Fridays.", 3, 0.4),
        mem("Deploys happen on Fridays", 2, 0.5),
        mem("Deploys need a second reviewer.", 1, 0.6, type="procedure"),
    ])
    assert out.text == "Deploys need a second reviewer. Deploys happen on Fridays."
    assert out.type == "fact" and out.importance == 0.6
    assert out.entity is None


async def test_merge_different_keys_keeps_no_triple(stub):
    out = await stub.merge([
        mem("I use vim.", 2, entity="user", attribute="editor", value="vim"),
        mem("I use zsh.", 1, entity="user", attribute="shell", value="zsh"),
    ])
    assert (out.entity, out.attribute, out.value) == (None, None, None)
    assert "vim" in out.text and "zsh" in out.text


async def test_merge_is_deterministic_and_rejects_empty(stub):
    cluster = [mem("a b c", 2), mem("a b d", 1)]
    assert await stub.merge(cluster) == await stub.merge(list(reversed(cluster)))
    with pytest.raises(ExtractionError) as err:
        await stub.merge([])
    assert err.value.retryable is False


# -- vocabulary and plugin wiring -------------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    (("I", "Editor", " VS Code. "), ("user", "editor", "VS Code")),
    (("The User", "Favourite Colour", "blue"), ("user", "favorite_color", "blue")),
    (("our team", "uses", "Firefox"), ("team", "browser", "Firefox")),
    (("user", "tool", "Docker"), ("user", "uses:docker", "Docker")),
    (("we", "storage", "Postgres"), ("team", "database", "Postgres")),
    (("user", "favourite editor", "vim"), ("user", "editor", "vim")),
    (("Recall", "Storage Backend", "SQLite"), ("recall", "storage_backend", "SQLite")),
    (("user", "allergy", "Peanuts"), ("user", "allergies:peanut", "Peanuts")),
    (("user", "uses:docker", "no"), ("user", "uses:docker", ENDED)),
    (("user", "likes", "no longer"), None),  # an ending that names no value
    (("user", "editor", None), None),
    (("", "editor", "vim"), None),
])
def test_canonical_triple(raw, expected):
    assert canonical_triple(*raw) == expected


def test_plugin_registers_its_extractors_with_settings():
    pm = pluggy.PluginManager("recall")
    pm.add_hookspecs(hookspecs)
    import recall_extractors

    pm.register(recall_extractors, name="extractors-under-test")
    try:
        registry = registrations(pm, "register_extractors")
        assert registry.names() == ["haiku", "openai", "stub"]
        assert registry.get("stub").settings is StubSettings
        assert registry.get("haiku").settings is HaikuSettings
        built = registry.get("stub").factory(StubSettings())
        assert isinstance(built, Extractor) and built.name == "stub"
    finally:
        pm.unregister(name="extractors-under-test")


# -- the attribute classifier (optional) -----------------------------------------------------

needs_model = pytest.mark.skipif(load_classifier() is None,
                                 reason="the embeddings plugin's packaged MiniLM is not installed")


@needs_model
async def test_the_classifier_reads_what_no_rule_reads():
    text = "Lights out at 11 for me."
    rules = await StubExtractor(StubSettings(classifier="off")).extract(text)
    both = await StubExtractor().extract(text)
    assert [m.attribute for m in rules] == [None]
    assert [(m.entity, m.attribute, m.value) for m in both] == [("user", "bedtime", "11")]


@needs_model
async def test_a_place_a_move_suggests_is_checked_by_the_model():
    text = "After a decade at IBM I finally moved to Red Hat."
    rules = await StubExtractor(StubSettings(classifier="off")).extract(text)
    both = await StubExtractor().extract(text)
    assert [m.attribute for m in rules] == ["location"]
    assert [(m.attribute, m.value) for m in both] == [("employer", "Red Hat")]


async def test_without_the_embeddings_plugin_the_rules_work_alone(monkeypatch):
    import sys

    import recall_extractors.classifier as classifier

    for name in ("recall_embeddings", "recall_embeddings.engines"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    monkeypatch.setattr(classifier, "_tried", False)
    monkeypatch.setattr(classifier, "_shared", None)
    stub = StubExtractor()
    assert stub.classifier is None
    out = await stub.extract("I just started a new job at Globex. Lights out at 11 for me.")
    assert [(m.attribute, m.value) for m in out] == [("employer", "Globex"), (None, None)]


def test_stub_settings_are_closed():
    with pytest.raises(Exception, match="extra"):
        StubSettings.model_validate({"model": "x"})


def test_the_attribute_classifier_shares_the_model_the_dense_ranker_loaded():
    """One MiniLM session per process: the classifier resolves its engine at first use and
    takes the one already loaded (the dense ranker's) instead of a copy (~150 MB)."""
    engines = pytest.importorskip("recall_embeddings.engines")
    from recall_extractors import classifier as cls

    if not engines.available(engines.MINILM_INT8):
        pytest.skip("the packaged MiniLM is not installed")
    ranker_engine = engines.load(engines.MINILM_INT8, 2)
    first = engines.shared(engines.MINILM_INT8, 1)
    assert engines.shared(engines.MINILM_INT8, 1) is first
    lazy = cls._SharedEngine(engines.MINILM_INT8)
    assert lazy._engine is None  # nothing loaded until it is used
    vectors = lazy.encode(["I live in Berlin."])
    assert lazy._engine is first and len(vectors[0]) == 384
    assert first is ranker_engine or engines._LOADED[engines.MINILM_INT8.name] is first
