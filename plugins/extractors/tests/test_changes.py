"""A fact that changes, through the product's write path with the rule-based extractor:
store a statement, later its change, and the old value is no longer current; statements of
other subjects, other values of a many-valued fact and other attributes never supersede
each other (issue 27)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

import recall_extractors
import recall_sqlite
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.models import utcnow
from recall_core.plugins import get_plugin_manager
from recall_core.memory.writes import process


@pytest.fixture
async def runtime(tmp_path):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    rt = await build_runtime(load_config(None, db=str(tmp_path / "r.db")), pm,
                             start_worker=False)
    yield rt
    await rt.close()


async def told(rt, *texts: str) -> str:
    """A namespace where `texts` were said a day apart, each job run by the write path."""
    ns = f"chg-{uuid.uuid4().hex[:8]}"
    start = utcnow() - timedelta(days=len(texts))
    for i, text in enumerate(texts):
        await rt.service.store(ns, text, created_at=(start + timedelta(days=i)).isoformat())
        op = await rt.storage.claim_job(60)
        assert await process(rt.storage, rt.extractor, None, op, utcnow())
    return ns


async def current_texts(rt, ns: str) -> list[str]:
    return [m["text"] for m in (await rt.service.inspect(ns, limit=50))["memories"]]


@pytest.mark.parametrize("old, new, stale", [
    ("I work at Acme Corp.", "I just started a new job at Globex.", "I work at Acme Corp."),
    ("My favourite editor is vim.", "These days I use VS Code for everything.",
     "My favourite editor is vim."),
    ("I live in Austin.", "I'm in Denver now.", "I live in Austin."),
    ("Our CI runs on Travis.", "CI is on Buildkite now, Travis got too slow.",
     "Our CI runs on Travis."),
    ("My wife works at the library.", "My wife got hired by Northwind.",
     "My wife works at the library."),
    ("I'm allergic to peanuts and shellfish.", "I'm no longer allergic to peanuts.",
     "I'm allergic to peanuts."),
    # The fact in one part of a statement, an aside in the other (reading.by_pieces).
    ("I use Alacritty as my terminal.", "Kitty is my terminal now, ligatures finally work",
     "I use Alacritty as my terminal."),
    # An adverb after the copula; a relation named with its person in passing.
    ("I'm a product manager.", "Transfer went through, I'm officially a UX researcher!",
     "I'm a product manager."),
    ("My boss is Priya.", "Had my first 1:1 with my new manager Tom today",
     "My boss is Priya."),
    # A value of a known one-at-a-time kind said as current (kinds.by_kind).
    ("Our company uses Google Chat.", "It's all Discord now, even for customer stuff",
     "Our company uses Google Chat."),
    ("Our CI runs on Jenkins.", "No more Jenkins, it's GitHub Actions now.",
     "Our CI runs on Jenkins."),
])
async def test_a_change_supersedes_the_old_value(runtime, old, new, stale):
    ns = await told(runtime, old, new)
    texts = await current_texts(runtime, ns)
    assert stale not in texts and any(t.startswith(new[:12]) for t in texts), texts


async def test_an_ending_leaves_the_other_values(runtime):
    ns = await told(runtime, "I'm allergic to peanuts and shellfish.",
                    "I'm no longer allergic to peanuts.")
    assert "I'm allergic to shellfish." in await current_texts(runtime, ns)


@pytest.mark.parametrize("first, second", [
    ("I work at Acme Corp.", "My wife works at Globex."),
    ("I live in Lisbon.", "Sarah moved to Porto."),
    ("I'm allergic to peanuts.", "I'm also allergic to shellfish."),
    ("I use Docker.", "We also use Kubernetes."),
    ("I live in Berlin.", "I grew up in Munich."),
    ("I'm vegetarian.", "I've been thinking about going vegan."),
    ("We use Postgres.", "We were on Oracle until 2019."),
    # A piece of a statement that hedges or asks states nothing ("..., maybe Porto").
    ("I live in Lisbon.", "Work is crazy, might move to Porto, not sure yet."),
    ("My boss is Priya.", "Met my wife Ana's new manager Tom today."),
    # One value and a cue that ends it: the value named is the old one, not a new one.
    ("We use PostgreSQL.", "MongoDB is gone now."),
    ("Our CI runs on CircleCI.", "We might move to GitHub Actions now."),
])
async def test_different_facts_stay_current(runtime, first, second):
    ns = await told(runtime, first, second)
    assert first in await current_texts(runtime, ns)


async def test_a_compound_sentence_is_one_memory_per_statement(runtime):
    ns = await told(runtime, "I live in Berlin and I prefer tea.")
    assert sorted(await current_texts(runtime, ns)) == ["I live in Berlin", "I prefer tea."]
    ns = await told(runtime, "I live in Berlin and I prefer tea.", "I moved to Hamburg.")
    assert sorted(await current_texts(runtime, ns)) == ["I moved to Hamburg.", "I prefer tea."]
