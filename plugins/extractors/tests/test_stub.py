"""Table tests of the rule-based extractor: sentences, types, triples, chit-chat, merge."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pluggy
import pytest

from recall_core import hookspecs
from recall_core.models import Memory
from recall_core.testing import registrations
from recall_core.contracts import ExtractionError, Extractor
from recall_extractors import HaikuSettings, StubSettings, make_stub
from recall_extractors.sentences import split_sentences
from recall_extractors.stub import StubExtractor
from recall_extractors.vocabulary import canonical_triple


@pytest.fixture
def stub() -> StubExtractor:
    return make_stub(StubSettings())


async def one(stub: StubExtractor, text: str):
    out = await stub.extract(text)
    assert len(out) == 1, out
    return out[0]


# -- triples: (input, entity, attribute, value) -----------------------------------------------

TRIPLES = [
    # identity
    ("My name is Alice Smith.", "user", "name", "Alice Smith"),
    ("Call me Bob.", "user", "name", "Bob"),
    ("I work at Acme Corp as a backend engineer.", "user", "employer", "Acme Corp"),
    ("I work for the Department of Energy.", "user", "employer", "Department of Energy"),
    ("I work remotely for Stripe.", "user", "employer", "Stripe"),
    ("I've been working at Google for 3 years.", "user", "employer", "Google"),
    ("I'm a data scientist at Shopify.", "user", "employer", "Shopify"),
    ("I joined Google last month.", "user", "employer", "Google"),
    ("I work as a nurse.", "user", "occupation", "nurse"),
    ("My job title is staff engineer.", "user", "occupation", "staff engineer"),
    ("I live in Berlin with my wife.", "user", "location", "Berlin"),
    ("I live in San Francisco, California.", "user", "location", "San Francisco"),
    ("I'm based in NYC.", "user", "location", "NYC"),
    ("I moved to Lisbon last year.", "user", "location", "Lisbon"),
    ("I have been living in Paris since 2019.", "user", "location", "Paris"),
    ("I'm originally from Lyon.", "user", "hometown", "Lyon"),
    ("I'm 34 years old.", "user", "age", "34"),
    ("I'm vegetarian.", "user", "diet", "vegetarian"),
    ("My email is alice@example.com.", "user", "email", "alice@example.com"),
    ("My pronouns are they/them.", "user", "pronouns", "they/them"),
    ("I have a dog named Rex.", "user", "dog_name", "Rex"),
    ("My dog's name is Rex.", "user", "dog_name", "Rex"),
    # favourites: British and American spellings share one key
    ("My favourite colour is blue.", "user", "favorite_color", "blue"),
    ("My favorite color is green!", "user", "favorite_color", "green"),
    # exclusive tools: keyed by category, so a new one supersedes the old
    ("I use vim.", "user", "editor", "vim"),
    ("I switched to VS Code.", "user", "editor", "VS Code"),
    ("I've switched over to Neovim.", "user", "editor", "Neovim"),
    ("I use Neovim with LazyVim.", "user", "editor", "Neovim"),
    ("I use Firefox.", "user", "browser", "Firefox"),
    ("I switched from Chrome to Brave.", "user", "browser", "Brave"),
    ("I've switched to zsh.", "user", "shell", "zsh"),
    ("I use a Mac.", "user", "os", "Mac"),
    ("I run Arch, btw.", "user", "os", "Arch"),
    ("I'm using uv now instead of poetry.", "user", "python_package_manager", "uv"),
    ("I prefer dark mode.", "user", "theme", "dark mode"),
    ("I would rather use vim than emacs.", "user", "editor", "vim"),
    # other tools: one key per tool, never colliding
    ("I use Docker.", "user", "uses:docker", "Docker"),
    ("I use Python 3.12 and Go.", "user", "uses:python", "Python 3.12"),
    ("I code in Rust.", "user", "uses:rust", "Rust"),
    ("I also use Neovim.", "user", "uses:neovim", "Neovim"),  # additive: no supersession
    ("I don't use Docker anymore.", "user", "uses:docker", "no"),
    ("I stopped using Docker.", "user", "uses:docker", "no"),
    # we / our: entity team; a stated purpose is the attribute
    ("We use Postgres for storage.", "team", "storage", "Postgres"),
    ("We switched to SQLite for storage.", "team", "storage", "SQLite"),
    ("We use GitHub Actions for CI.", "team", "ci", "GitHub Actions"),
    ("My team uses Jira for tickets.", "team", "tickets", "Jira"),
    ("We went with Kubernetes for orchestration.", "team", "orchestration", "Kubernetes"),
    ("We'll go with FastAPI.", "team", "uses:fastapi", "FastAPI"),
    ("We migrated from MySQL to Postgres.", "team", "uses:postgres", "Postgres"),
    ("Our stack is Python and Postgres.", "team", "stack", "Python and Postgres"),
    # preferences and opinions
    ("I prefer tabs over spaces.", "user", "preference:spaces_vs_tabs", "tabs"),
    ("I prefer spaces to tabs.", "user", "preference:spaces_vs_tabs", "spaces"),
    ("I'd rather use tabs than spaces.", "user", "preference:spaces_vs_tabs", "tabs"),
    ("I prefer to work remotely.", "user", "prefers:work_remotely", "work remotely"),
    ("I love coffee.", "user", "opinion:coffee", "likes"),
    ("I hate coffee now.", "user", "opinion:coffee", "dislikes"),
    ("I'm a big fan of Rust.", "user", "opinion:rust", "likes"),
    ("I'm not a fan of Java.", "user", "opinion:java", "dislikes"),
    ("I like to use vim.", "user", "opinion:vim", "likes"),
]


@pytest.mark.parametrize("text, entity, attribute, value", TRIPLES)
async def test_triples(stub, text, entity, attribute, value):
    m = await one(stub, text)
    assert (m.entity, m.attribute, m.value) == (entity, attribute, value)


NO_TRIPLE = [
    "I don't use vim anymore.",        # replacement unknown: don't guess the editor
    "I used to live in Rome.",         # past
    "I no longer live in Rome.",
    "I'm not based in Oslo.",
    "I run marathons.",                # "run" only counts for known tools
    "I work from home.",
    "I joined the gym.",
    "I'd like a summary.",             # a request, not a taste
    "My name is not important.",
    "The deploy broke on Friday.",
    "I use it every day.",             # vague value
]


@pytest.mark.parametrize("text", NO_TRIPLE)
async def test_no_triple(stub, text):
    m = await one(stub, text)
    assert (m.entity, m.attribute, m.value) == (None, None, None)


async def test_vim_then_vs_code_share_entity_and_attribute(stub):
    first, second = await stub.extract("I use vim. I switched to VS Code.")
    assert (first.entity, first.attribute) == ("user", "editor")
    assert (second.entity, second.attribute) == ("user", "editor")
    assert (first.value, second.value) == ("vim", "VS Code")


async def test_unrelated_tools_never_share_a_key(stub):
    tools = ["Docker", "Firefox", "vim", "Terraform", "Postgres", "zsh", "Obsidian", "tmux"]
    keys = [(await one(stub, f"I use {t}.")).attribute for t in tools]
    assert len(set(keys)) == len(keys), keys


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
    for text, *_ in TRIPLES:
        assert 0.0 <= await imp(text) <= 1.0


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
    (("Recall", "Storage Backend", "SQLite"), ("recall", "storage_backend", "SQLite")),
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


def test_stub_settings_are_closed():
    with pytest.raises(Exception, match="extra"):
        StubSettings.model_validate({"model": "x"})
