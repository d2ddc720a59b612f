"""A change told inside a request to an agent (issue 27): a statement before a request made
without a question mark is read apart from it, and a tool named as what a migration, a move or
a rewrite went to is the one held now, so it supersedes the known one of its kind."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_extractors.sentences import split_sentences


def triples(out) -> list[tuple]:
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


@pytest.mark.parametrize("text,said", [
    ("the Postgres migration wrapped up last sprint, can you help me rewrite this query",
     "the Postgres migration wrapped up last sprint"),
    ("we're on pnpm now, how do I set up workspaces", "we're on pnpm now"),
    ("moved to Lisbon in may, any tips for finding a dentist", "moved to Lisbon in may"),
])
def test_a_statement_before_a_request_is_read_apart(text, said):
    assert split_sentences(text)[0] == said


@pytest.mark.parametrize("text", [
    "I prefer short answers, and please use British spelling.",  # an instruction: one
    "can you help me move to Postgres, is it hard",               # asked from the start
])
def test_an_instruction_or_a_request_alone_stays_whole(text):
    assert split_sentences(text) == [text]


DB = K("team", "database", "MySQL", "Our team's database is MySQL")
CLOUD = K("team", "cloud", "Heroku", "We deploy everything on Heroku")
FRONTEND = K("frontend", "frontend_framework", "Angular", "The frontend is built with Angular")
PM = K("team", "package_manager", "npm", "We use npm in the monorepo")


@pytest.mark.parametrize("known,text,expected", [
    (DB, "the Postgres migration wrapped up last sprint, can you help me rewrite this report "
         "query", ("team", "database", "Postgres")),
    (CLOUD, "deploys got 3x faster after the move to Fly.io", ("team", "cloud", "Fly.io")),
    (FRONTEND, "frontend migration to React is finally done.",
     ("frontend", "frontend_framework", "React")),
])
async def test_what_a_migration_went_to_supersedes(stub, known, text, expected):
    assert expected in triples(await stub.extract(text, known=[known]))


@pytest.mark.parametrize("known,text", [
    (K("team", "cloud", "AWS", "We're on AWS."), "We considered moving to Azure but stayed on AWS."),
    (DB, "I'm giving a talk about the Postgres migration at another company"),
    (DB, "we're piloting a move to Postgres with one service"),
    (K("user", "location", "Berlin", "I live in Berlin."), "went to Paris last week for work"),
])
async def test_a_move_only_weighed_or_not_of_a_tool_changes_nothing(stub, known, text):
    got = triples(await stub.extract(text, known=[known]))
    assert not [t for t in got if t[:2] == (known.entity, known.attribute)]


async def test_a_label_before_a_colon_is_no_subject(stub):
    got = triples(await stub.extract("post-migration question: now that everything lives in "
                                     "Postgres 15, what's the equivalent of SHOW PROCESSLIST?"))
    assert not [t for t in got if "question" in t[0]]


# Changes told in passing or around a request, each after its first statement alone.
@pytest.mark.parametrize("first,later,expected", [
    # a reason said first whose second half opens with "my"
    ("We get our internet through Spectrum",
     "ever since we went over to Google Fiber my zoom calls have been flawless",
     ("user", "internet_provider", "Google Fiber")),  # a household's, as "we live"
    # an adverb opening the sentence is no one's name
    ("I do all my coding in VS Code", "fully converted to Neovim now",
     ("user", "editor", "Neovim")),
    # "for a couple months" is when, not part of the name
    ("My partner is Jordan", "I've been seeing Theo for a couple months",
     ("user", "partner", "Theo")),
    ("our CI runs on CircleCI", "since we moved all the pipelines over to GitHub Actions last "
     "month, how do I cache node_modules between jobs?", ("team", "ci", "GitHub Actions")),
    ("We use npm for packages", "we standardized on pnpm across the monorepo last quarter \u2014 "
     "why does pnpm install complain about peer deps?", ("team", "package_manager", "pnpm")),
    ("I stream music on Spotify", "switched over to Apple Music when we got the family plan",
     ("user", "music_service", "Apple Music")),
    ("I take the 38 bus to work", "i've been biking in every day", ("user", "commute", "bike")),
    ("I'm a junior data analyst", "just got the title bump to Senior Analyst!!",
     ("user", "occupation", "Senior Analyst")),
    ("My laptop is a ThinkPad X1 Carbon", "I'm typing this on a refurbished M2 MacBook Air",
     ("user", "laptop", "M2 MacBook Air")),
    ("we use Datadog for monitoring", "grafana cloud replaced datadog last month; can you "
     "translate this monitor query", ("team", "monitoring", "Grafana cloud")),
    ("I use Emacs for everything", "three months on Helix now and honestly I don't miss it",
     ("user", "editor", "Helix")),
    ("I type on QWERTY like everyone else.", "About a month into Colemak and my speed is "
     "finally coming back.", ("user", "keyboard_layout", "Colemak")),
    ("We deploy on Heroku", "since moving our apps over to Fly.io the release command keeps "
     "timing out, ideas?", ("team", "cloud", "Fly.io")),
    ("I'm a junior data analyst", "promoted to senior analyst friday \U0001F389 need a punchier "
     "linkedin headline", ("user", "occupation", "senior analyst")),
])
async def test_a_change_told_around_a_request_supersedes(stub, first, later, expected):
    known = [K(m.entity, m.attribute, m.value, m.text) for m in await stub.extract(first)
             if m.attribute]
    assert expected in triples(await stub.extract(later, known=known))
