"""Extractors given what is already known (`Extractor.reads_known`): the rule-based one keys a
new value to the known fact it changes, and keeps both when unsure; the Claude extractor tells
its model the known facts, through the real anthropic SDK with its HTTP transport replaced."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_core.kit.attributes import ENDED
from recall_extractors import StubSettings, make_stub
from recall_extractors.stub import StubExtractor

from test_haiku import FakeAPI, build, message


@pytest.fixture(scope="module")
def stub() -> StubExtractor:
    return make_stub(StubSettings())


async def facts(stub: StubExtractor, text: str, *known: K) -> list[tuple[str, str, str]]:
    return [(m.entity, m.attribute, m.value) for m in await stub.extract(text, known=known)
            if m.attribute]


@pytest.mark.parametrize("known,text,expected", [
    # a value of the known value's kind, said as current, under the stored key
    (K("user", "daily_driver", "Debian"), "Running Fedora on the desktop these days.",
     ("user", "daily_driver", "Fedora")),
    (K("user", "password_manager", "KeePassXC"),
     "work pays for 1Password now so I'm using that everywhere",
     ("user", "password_manager", "1Password")),
    # said against the known value: it is named with a word that ends it
    (K("leo", "editor", "Sublime Text"), "leo dropped sublime and is all in on Zed",
     ("leo", "editor", "Zed")),
    (K("team", "terminal_multiplexer", "screen"), "nobody touches screen anymore, it's zellij",
     ("team", "terminal_multiplexer", "zellij")),
    (K("payments service", "deploy_day", "Monday"),
     "payments no longer ships on Mondays, it goes out Thursdays",
     ("payments service", "deploy_day", "Thursdays")),
    # an entity named differently from its first mention, with the known fact's attribute
    (K("web app", "frontend_framework", "React"), "The web frontend is on Svelte now.",
     ("web app", "frontend_framework", "Svelte")),
])
async def test_a_new_value_takes_the_known_key(stub, known, text, expected):
    assert expected in await facts(stub, text, known)


@pytest.mark.parametrize("known,text", [
    (K("user", "editor", "vim"), "I might try VS Code someday."),          # a wish
    (K("user", "editor", "vim"), "Is VS Code any good these days?"),       # a question
    (K("user", "editor", "vim"), "I used VS Code back then."),             # the past
    (K("user", "editor", "vim"), "I don't use VS Code now."),              # negated
    (K("wife", "editor", "Emacs"), "I'm on VS Code now."),                 # another subject
    (K("user", "editor", "vim"), "Bought a new Kindle last week."),        # another kind
])
async def test_unsure_or_unrelated_statements_keep_the_known_fact(stub, known, text):
    assert all((e, a) != (known.entity, known.attribute) for e, a, _ in
               await facts(stub, text, known))


async def test_two_known_facts_of_one_kind_are_unsure(stub):
    """The user's OS and daily driver both hold an OS: a new one may be either, so neither key
    is guessed from what is known."""
    got = await facts(stub, "Running Fedora these days.", K("user", "daily_driver", "Debian"),
                      K("user", "laptop_os", "macOS"))
    assert ("user", "daily_driver", "Fedora") not in got
    assert ("user", "laptop_os", "Fedora") not in got


async def test_a_tool_stored_among_several_ends_when_its_kind_changes(stub):
    got = await facts(stub, "I'm on Dracula now.", K("user", "uses:nord_theme", "Nord theme"))
    assert ("user", "theme", "Dracula") in got and ("user", "uses:nord_theme", ENDED) in got


async def test_without_known_facts_the_rules_decide_alone(stub):
    assert await facts(stub, "Running Fedora on the desktop these days.") == \
        [("user", "os", "Fedora")]
    assert stub.reads_known


async def test_claude_is_told_the_known_facts_and_its_memo_keeps_them_apart():
    reply = {"memories": [{"text": "The user works at Globex.", "type": "fact",
                           "importance": 0.8, "entity": "user", "attribute": "employer",
                           "value": "Globex"}]}
    api = FakeAPI(message(reply))
    ex = build(api)
    assert ex.reads_known
    text = "First week at Globex, still learning names."
    out = await ex.extract(text, known=[K("user", "employer", "Acme Corp"),
                                        K("team", "ci", "Jenkins")])
    assert [(m.entity, m.attribute, m.value) for m in out] == [("user", "employer", "Globex")]
    sent = api.body()["messages"][0]["content"]
    sent = sent if isinstance(sent, str) else "".join(p.get("text", "") for p in sent)
    assert "- user.employer = Acme Corp\n- team.ci = Jenkins" in sent
    assert sent.index("<known>") < sent.index("<text>") and text in sent
    assert "same entity and attribute" in sent
    # The same text with other known facts is another question; with none, no block at all.
    await ex.extract(text, known=[K("user", "employer", "Initech")])
    await ex.extract(text)
    assert len(api.requests) == 3
    assert "Initech" in str(api.body(1)["messages"]) and "<known>" not in str(api.body(2)["messages"])
    await ex.aclose()
