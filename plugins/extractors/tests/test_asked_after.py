"""A statement followed by a question in one sentence (issue 27): "I'm on Cursor now, how do I
set up keybindings?". The question states no fact, and asked together the statement was lost:
a change told in passing, inside a request to the agent, never superseded anything."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_extractors.sentences import split_sentences


@pytest.mark.parametrize("text,known,expected", [
    ("ok so I finally caved and I'm on Cursor now, how do I set up keybindings?",
     K("user", "editor", "vim"), ("user", "editor", "Cursor")),
    ("we use pnpm across the monorepo now, what's the equivalent of npm ci?",
     K("team", "package_manager", "npm"), ("team", "package_manager", "pnpm")),
    ("I live in Denver now - any good climbing gyms around?",
     K("user", "location", "Austin"), ("user", "location", "Denver")),
])
async def test_the_statement_before_a_question_is_read(stub, text, known, expected):
    out = await stub.extract(text, known=[known])
    assert expected in [(m.entity, m.attribute, m.value) for m in out]


@pytest.mark.parametrize("text", [
    "what if we moved to GCP, would it actually be cheaper?",
    "if I move to Lisbon, do I need a visa?",
    "should we switch to Postgres, or is MySQL fine?",
    "thinking about moving to Berlin, is the rent crazy?",
    "Is Rust good, or should I use Go?",
])
def test_what_is_itself_asked_or_supposed_stays_one_question(text):
    assert split_sentences(text) == [text]


async def test_a_supposed_change_changes_nothing(stub):
    out = await stub.extract("what if we moved to GCP, would it actually be cheaper?",
                             known=[K("team", "cloud", "AWS")])
    assert [(m.entity, m.attribute) for m in out if m.attribute] == []
