"""Scores mean something: with the documented threshold (SCORE_THRESHOLD_NONSENSE), nonsense
and unrelated queries return nothing while real questions keep their answers, including
answers that share no word with the question (found by the dense ranker alone).

Real SQLite, the real default (torch-free) dense ranker and BM25, through MemoryService.
"""

from __future__ import annotations

import asyncio
import random

import pytest
import pytest_asyncio

import recall_extractors
import recall_sqlite
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.plugins import get_plugin_manager
from recall_core.search.scoring import SCORE_THRESHOLD_NONSENSE
from recall_core.memory.transfer import ImportLine, import_verbatim

recall_embeddings = pytest.importorskip("recall_embeddings")
pytestmark = pytest.mark.asyncio(loop_scope="module")

MEMORIES = [
    "The user prefers dark mode in every code editor.",
    "The user's daughter Mia starts primary school in September.",
    "Deploys to production are frozen on Fridays.",
    "The user is allergic to peanuts.",
    "The team chose PostgreSQL for the billing service.",
    "The user runs a half marathon every spring.",
    "The user's cat is called Biscuit.",
    "Standups happen at 9:30 on weekdays.",
    "The user is learning Japanese and practises kanji every evening.",
    "The user drives an electric car and charges it at work.",
    "The staging database is refreshed from production every Sunday night.",
    "The user's favourite band is Radiohead.",
]
# (question, the memory that answers it); the last two share no content word with it.
REAL = [
    ("which colour scheme does the user like in the editor?", 0),
    ("what is the name of the user's cat?", 6),
    ("when are production deploys frozen?", 2),
    ("which database did the team pick for billing?", 4),
    ("what food must the user avoid?", 3),
    ("what music does the user listen to?", 11),
]
UNRELATED = [
    "What is the boiling point of mercury?", "How many moons does Neptune have?",
    "Explain the CAP theorem", "Who won the 1998 football World Cup?",
    "What is the chemical formula of sulfuric acid?", "How does a transistor amplify current?",
    "What is the speed of sound in water?", "Which planet has the strongest winds?",
]
# Off-topic, but one content word of the question is in a memory ("half", "starts"): weak
# evidence (one term of four or five), so a lower score than a real answer gets.
PARTIAL = ["What is the half-life of carbon-14?", "Which chess opening starts with e4 c5?"]


def gibberish(n: int) -> list[str]:
    rng = random.Random(1414)
    return [" ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 8)))
                     for _ in range(rng.randint(2, 5))) for _ in range(n)]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runtime(tmp_path_factory):
    pm = get_plugin_manager(load_entrypoints=False)
    for mod, name in ((recall_sqlite, "sqlite"), (recall_extractors, "extractors"),
                      (recall_embeddings, "embeddings")):
        pm.register(mod, name=name)
    db = tmp_path_factory.mktemp("threshold") / "r.db"
    rt = await build_runtime(load_config(None, db=str(db)), pm, start_worker=False)
    assert await asyncio.to_thread(rt.embedder.wait_ready, 120), rt.embedder.status()
    await import_verbatim(rt.storage, "u", [(i, ImportLine(text=t)) for i, t in enumerate(MEMORIES, 1)],
                          rt.embedder)
    yield rt
    await rt.close()


@pytest.mark.parametrize("question,answer", REAL)
async def test_real_questions_keep_their_answer_above_the_threshold(runtime, question, answer):
    res = await runtime.service.search("u", question, limit=5,
                                       score_threshold=SCORE_THRESHOLD_NONSENSE)
    assert res["degraded"] == []
    assert MEMORIES[answer] in [r["text"] for r in res["results"]], res["results"]


@pytest.mark.parametrize("query", gibberish(12) + UNRELATED)
async def test_nonsense_and_unrelated_queries_return_nothing(runtime, query):
    res = await runtime.service.search("u", query, limit=5, score_threshold=SCORE_THRESHOLD_NONSENSE)
    assert res["results"] == [], res["results"]
    # Without a threshold they still get the nearest memories, with scores that say how weak.
    loose = await runtime.service.search("u", query, limit=5)
    assert loose["results"] and max(r["score"] for r in loose["results"]) < SCORE_THRESHOLD_NONSENSE


@pytest.mark.parametrize("query", PARTIAL)
async def test_one_shared_word_is_weak_evidence(runtime, query):
    res = await runtime.service.search("u", query, limit=5)
    weak = res["results"][0]["score"]
    real = [(await runtime.service.search("u", q, limit=1))["results"][0]["score"] for q, _ in REAL]
    assert 0 < weak < min(real), (weak, real)


async def test_scores_do_not_depend_on_other_candidates(runtime):
    """The same memory for the same query scores about the same whether it ranks first or
    not: relevance carries evidence, not only a rank."""
    res = await runtime.service.search("u", "what is the name of the user's cat?", limit=5,
                                       recency_weight=0.0)
    top = res["results"][0]
    assert top["text"] == MEMORIES[6] and top["score"] > 0.5
    assert all(r["score"] < top["score"] for r in res["results"][1:])
