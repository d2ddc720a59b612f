"""Extractors given what is already known (`Extractor.reads_known`): the rule-based one keys a
new value to the known fact it changes, and keeps both when unsure; the Claude extractor tells
its model the known facts, through the real anthropic SDK with its HTTP transport replaced."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_core.kit.attributes import ENDED
from recall_extractors.stub import StubExtractor

import json

import httpx2

from recall_extractors.haiku import EXTRACT_TOOL, HaikuExtractor
from recall_extractors.settings import DEFAULT_MODEL, HaikuSettings


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
    # ... or named in the known fact's memory
    (K("team", "ci", "Jenkins", "We build the monorepo on Jenkins."),
     "The monorepo builds on Buildkite now.", ("team", "ci", "Buildkite")),
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
    (K("team", "database", "PostgreSQL"), "MongoDB is gone now."),        # the value named ends
    (K("user", "editor", "VS Code"), "I switched to VS Code."),            # said again
])
async def test_unsure_or_unrelated_statements_keep_the_known_fact(stub, known, text):
    assert all((e, a) != (known.entity, known.attribute) or v == known.value
               for e, a, v in await facts(stub, text, known))


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


class FakeAPI:
    """The Messages API as the SDK's HTTP transport sees it: one tool-use answer, every
    request recorded (as in test_haiku)."""

    def __init__(self, tool_input: dict):
        self.tool_input = tool_input
        self.requests: list[httpx2.Request] = []

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return httpx2.Response(200, json={
            "id": "msg_01", "type": "message", "role": "assistant", "model": DEFAULT_MODEL,
            "content": [{"type": "tool_use", "id": "toolu_01", "name": EXTRACT_TOOL,
                         "input": self.tool_input}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 400, "output_tokens": 50}})

    def body(self, i: int = -1) -> dict:
        return json.loads(self.requests[i].content)


async def test_claude_is_told_the_known_facts_and_its_memo_keeps_them_apart():
    reply = {"memories": [{"text": "The user works at Globex.", "type": "fact",
                           "importance": 0.8, "entity": "user", "attribute": "employer",
                           "value": "Globex"}]}
    api = FakeAPI(reply)
    ex = HaikuExtractor(HaikuSettings(), api_key="sk-ant-test-0000",
                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(api)))
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


@pytest.mark.parametrize("known,text", [
    (K("user", "likes:jazz", "jazz"), "honestly can't stand jazz anymore"),
    (K("team", "uses:consul", "HashiCorp Consul"), "Consul is decommissioned as of Friday."),
    (K("user", "hobbies:chess", "chess"), "I stopped playing chess, painting keeps me busy."),
])
async def test_a_known_value_of_many_is_ended_where_it_is_said_to_end(stub, known, text):
    assert (known.entity, known.attribute, ENDED) in await facts(stub, text, known)


async def test_values_said_to_go_on_or_stored_in_one_list_are_not_ended(stub):
    kept = K("user", "hobbies:knitting", "knitting")
    got = await facts(stub, "Gave up chess, still knitting though.", kept,
                      K("user", "hobbies:chess", "chess"))
    assert ("user", "hobbies:chess", ENDED) in got and ("user", "hobbies:knitting", ENDED) not in got
    # A memory stating three hobbies: ending one would supersede the other two with it.
    listed = K("user", "hobbies:running", "running", "I like running, rowing and judo.")
    text = "No more running for me, bad knees."
    assert ("user", "hobbies:running", ENDED) in await facts(stub, text, listed._replace(text=""))
    assert ("user", "hobbies:running", ENDED) not in await facts(stub, text, listed)


async def test_the_end_of_a_known_value_and_its_new_value_are_one_memory(stub):
    out = await stub.extract("Quit Initech last week. I'm at Hooli now.",
                             known=[K("user", "employer", "Initech")])
    assert [(m.text, m.attribute, m.value) for m in out] == \
        [("Quit Initech last week. I'm at Hooli now.", "employer", "Hooli")]
    # Without a new value the statement stays on its own.
    alone = await stub.extract("Quit Initech last week. I'm learning Rust now.",
                               known=[K("user", "employer", "Initech")])
    assert "Quit Initech last week." in [m.text for m in alone]


async def test_which_of_two_known_values_ended_is_unsure(stub):
    """Both named where one ends, or several of a kind used side by side: nothing is ended."""
    consul, nomad = K("team", "uses:consul", "Consul"), K("team", "uses:nomad", "Nomad")
    got = await facts(stub, "We retired Consul after Nomad came in.", consul, nomad)
    assert ("team", "uses:nomad", ENDED) not in got
    assert ("team", "uses:consul", ENDED) in await facts(stub, "We retired Consul.", consul, nomad)
    nord, gruv = K("user", "uses:nord_theme", "Nord theme"), K("user", "uses:gruvbox", "Gruvbox")
    got = await facts(stub, "I'm on Dracula now.", nord, gruv)
    assert ("user", "theme", "Dracula") in got and not any(v == ENDED for _, _, v in got)


@pytest.mark.parametrize("known,text,expected", [
    # names of one family that differ in a number or a single letter are two things, however
    # many words they share: never one fact (a false merge would lose the other's value)
    (K("staging server number 0", "os", "Debian", "The staging server number 0 runs Debian."),
     "The staging server number 1 runs Debian.", ("staging server number 1", "os", "Debian")),
    (K("team a", "standup_time", "9:30"), "Team B has standup at 10.",
     ("team b", "standup_time", "10")),
])
async def test_names_that_differ_in_a_number_or_letter_stay_apart(stub, known, text, expected):
    got = await facts(stub, text, known)
    assert got and got[0][0] == expected[0], got


@pytest.mark.parametrize("known,text", [
    (K("user", "employer", "Deloitte"), "I left Deloitte last month."),
    # the rules alone read these under keys of their own guess (uses:pip, pets:mini)
    (K("user", "python_package_manager", "pip"), "I dropped pip."),
    (K("sarah", "car", "red Mini"), "Sarah sold the Mini."),
    # a name sold is no pet (was pets:mazda), and a model is named by its make
    (K("user", "car", "Mazda 3"), "I sold the Mazda."),
    # the negation is the other aside's
    (K("user", "car", "Mazda 3"), "Sold the Mazda, I don't have a car anymore."),
    (K("user", "phone", "Pixel 7"), "I got rid of my Pixel."),
])
async def test_a_known_single_value_ended_without_a_successor_ends_its_fact(stub, known, text):
    assert await facts(stub, text, known) == [(known.entity, known.attribute, ENDED)]


@pytest.mark.parametrize("text", [
    "I didn't leave Deloitte.",                  # negated
    "I haven't left Deloitte, but I'm looking.",  # negated in the ending's own aside
    "I might leave Deloitte next year.",         # not done
    "Should I leave Deloitte?",                  # asked
    "My sister left Deloitte.",                  # someone else
    "I left Deloitte, I'm at PwC now.",          # a successor: the change, read elsewhere
])
async def test_an_ending_that_is_not_the_subjects_or_not_done_ends_nothing(stub, text):
    known = K("user", "employer", "Deloitte")
    assert (("user", "employer", ENDED)) not in await facts(stub, text, known)


async def test_a_value_with_a_tail_is_no_list_of_values(stub):
    # the memory states one value; what follows the comma is no other value of the fact
    k = K("user", "likes:squash", "squash",
          "I'm into squash, basically anything that wrecks my knees")
    assert ("user", "likes:squash", ENDED) in await facts(
        stub, "quit squash after I tore my meniscus, doc said no more", k)


@pytest.mark.parametrize("text,is_listed", [
    ("I do climbing, yoga and cycling", True),
    ("I do yoga and cycling", True),
    ("I do yoga", False),
    ("I do yoga, basically every morning", False),
    ("Yoga, mostly", False),
])
def test_which_memories_list_other_values(text, is_listed):
    from recall_extractors.known import listed

    assert listed(K("user", "hobbies:yoga", "yoga", text)) is is_listed


@pytest.mark.parametrize("text,ended", [
    ("I'm over knitting honestly", True),
    ("I'm knitting over the weekend", False),
])
async def test_being_over_a_hobby_ends_it(stub, text, ended):
    k = K("user", "hobbies:knitting", "knitting", "I knit.")
    assert (("user", "hobbies:knitting", ENDED) in await facts(stub, text, k)) is ended
