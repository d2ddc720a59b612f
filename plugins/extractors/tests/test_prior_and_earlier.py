"""The rule-based extractor with the attribute classifier (the default install): a known fact
makes its attribute the likelier reading of a statement about its subject that says a change
(`prior`), and a new value names the earlier statement without a fact that it replaces
(`earlier`). When unsure, nothing is read: the statement stays a memory without a fact."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_core.contracts import KnownStatement as S
from recall_extractors import StubSettings, make_stub
from recall_extractors.stub import StubExtractor


@pytest.fixture(scope="module")
def stub() -> StubExtractor:
    ex = make_stub(StubSettings())
    if ex.classifier is None:
        pytest.skip("the packaged MiniLM (recall-embeddings) is not installed")
    return ex


async def facts(stub, text, *known):
    return [(m.entity, m.attribute, m.value) for m in await stub.extract(text, known=known)
            if m.attribute]


@pytest.mark.parametrize("known,text,expected", [
    (K("user", "partner", "Rachel"), "I'm with Naomi now, we met at a climbing gym.",
     ("user", "partner", "Naomi")),
    # ("I do instructional design at Coursera now" is read by the rules now: test_change_words)
])
async def test_a_known_fact_reads_a_change_said_in_other_words(stub, known, text, expected):
    assert expected in await facts(stub, text, known)
    # the same statement with nothing known states no fact of that key
    assert all((e, a) != expected[:2] for e, a, _ in await facts(stub, text))


@pytest.mark.parametrize("known,text", [
    (K("user", "partner", "Rachel"), "I'm with Naomi, we met at a climbing gym."),  # no change said
    (K("user", "location", "Berlin"), "I work in Munich."),
    (K("user", "employer", "Atlassian"), "I've got an interview at Canva now, fingers crossed?"),
    (K("user", "partner", "Rachel"), "I might be with Naomi now."),                   # a hedge
])
async def test_unsure_statements_keep_the_known_fact(stub, known, text):
    assert all((e, a) != (known.entity, known.attribute) for e, a, _ in
               await facts(stub, text, known))


async def test_a_thing_of_ones_own_is_read_with_its_owners_known_facts(stub):
    # "our <thing>": the team's known fact is the likelier reading; nothing known, no fact
    known = K("team", "deploy_day", "Fridays")
    text = "Our Wednesday deploy went out fine again."
    assert ("team", "deploy_day", "wednesday") in await facts(stub, text, known)
    assert await facts(stub, text) == []


@pytest.mark.parametrize("known,text", [
    (K("user", "location", "Berlin"), "My sister's flat in Munich is lovely now."),  # hers
    (K("user", "location", "Berlin"), "My sister flat in Munich is lovely now."),
    (K("user", "commute", "bus"), "My bus was late again today."),  # the known value, no change
])
async def test_a_thing_of_someone_elses_keeps_the_known_fact(stub, known, text):
    assert all((e, a) != (known.entity, known.attribute) for e, a, _ in
               await facts(stub, text, known))


async def test_a_new_value_names_the_earlier_statement_it_replaces(stub):
    told = [S("m3", "The dashboards are way better."), S("m2", "We monitor with Nagios."),
            S("m1", "I live in Lisbon.")]
    out = await stub.extract("Datadog is our monitoring now", statements=told)
    [datadog] = [m for m in out if m.attribute]
    assert (datadog.entity, datadog.attribute, datadog.value) == ("team", "monitoring", "Datadog")
    assert datadog.replaces == ["m2"]


@pytest.mark.parametrize("earlier", [
    "We might monitor with Nagios someday.",         # a hedge
    "We don't monitor with Nagios.",                 # negated
    "My brother's team monitors with Nagios.",       # another subject
    "We monitor with Datadog.",                      # the same value
])
async def test_no_earlier_statement_is_named_when_unsure(stub, earlier):
    out = await stub.extract("Datadog is our monitoring now", statements=[S("m1", earlier)])
    assert all(not m.replaces for m in out)


async def test_a_known_key_is_what_a_new_value_supersedes(stub):
    out = await stub.extract("Datadog is our monitoring now",
                             known=[K("team", "monitoring", "Grafana")],
                             statements=[S("m1", "We monitor with Nagios.")])
    assert all(not m.replaces for m in out)


@pytest.mark.parametrize("text,statements", [
    ("We use Auth0 for auth and Grafana for monitoring; chat is Mattermost.",
     ["We use Auth0 for auth", "We use Grafana for monitoring", "chat is Mattermost."]),
    ("My mum lives in Leeds, my dad lives in Hull, they split up years ago.",
     ["My mum lives in Leeds", "my dad lives in Hull", "they split up years ago."]),
])
async def test_compound_sentences_are_their_statements(stub, text, statements):
    out = [m.text for m in await stub.extract(text)]
    for s in statements:
        assert any(s in t for t in out), (s, out)
    assert len(out) >= len(statements)



@pytest.mark.parametrize("known,text,expected", [
    # a school's name says its kind: the child's known school takes the new one
    (K("son", "school", "Maple Grove Elementary"), "My son started at Westfield Middle School.",
     ("son", "school", "Westfield Middle School")),
    # sprints said with a move verb
    (K("team", "sprint_length", "two weeks"), "We moved to one-week sprints.",
     ("team", "sprint_length", "one-week")),
])
async def test_a_change_of_school_and_of_sprints(stub, known, text, expected):
    assert expected in await facts(stub, text, known)
