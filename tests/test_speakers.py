"""Speakers named in a query (recall_core.search.speakers, search.apply_speakers): a question about
Melanie is answered by Melanie's own lines, not by lines that only address her."""

from __future__ import annotations

import uuid

import pytest

from recall_core.models import Memory
from recall_core.search.steps import SPEAKER_FACTOR, apply_speakers
from recall_core.search.speakers import focused_query, named_in, named_speakers, split_speaker
from recall_core.memory.transfer import ImportLine, import_verbatim



def mem(i: str, text: str) -> Memory:
    return Memory(id=i, namespace="ns", text=text)


@pytest.mark.parametrize("text,speaker", [
    ("Caroline: I went to the group.", "Caroline"),
    ("Dr. Jane Doe: the results are in", "Dr. Jane Doe"),
    ("user: I prefer tea", "user"),
    ("Important: always run the tests", None),
    ("I went to the group.", None),
])
def test_split_speaker(text, speaker):
    assert split_speaker(text)[0] == speaker


def test_a_speaker_is_named_by_any_word_of_the_name_but_not_by_a_stop_word():
    assert named_in("Dr. Jane Doe", {"what", "did", "jane", "say"})
    assert named_in("Melanie", {"melanie", "paint"})
    assert not named_in("Melanie", {"caroline", "paint"})
    assert not named_in("Will", {"what", "will", "happen"})


def test_other_speakers_lines_are_demoted_when_the_query_names_a_speaker():
    ms = [mem("c", "Caroline: Thanks, Melanie! I painted it after the beach."),
          mem("m", "Melanie: Here is the horse I did last week."),
          mem("note", "The user likes horses.")]
    rel = {"c": 1.0, "m": 0.8, "note": 0.6}
    out = apply_speakers("What has Melanie painted?", ms, rel)
    assert out == {"c": 1.0 * SPEAKER_FACTOR, "m": 0.8, "note": 0.6}
    # No speaker named, or every speaker named: unchanged.
    assert apply_speakers("What was painted?", ms, rel) == rel
    assert apply_speakers("What did Caroline tell Melanie?", ms, rel) == rel


async def test_search_answers_with_the_named_speakers_own_line(bm25_runtime):
    ns = f"spk-{uuid.uuid4().hex[:8]}"
    lines = ["Caroline: Thanks, Melanie! I painted it after the beach.",
             "Melanie: Here is the horse I did on canvas last week.",
             "Caroline: The beach was lovely."]
    await import_verbatim(bm25_runtime.storage, ns,
                          [(i, ImportLine(text=t)) for i, t in enumerate(lines, 1)])
    out = await bm25_runtime.service.search(ns, "What has Melanie painted?", limit=5,
                                            recency_weight=0.0, mmr_lambda=1.0)
    texts = [r["text"] for r in out["results"]]
    # Caroline's line holds both query words; Melanie's only her name. BM25 puts Caroline's
    # first, the named speaker's own line wins.
    assert texts[0] == lines[1], texts
    assert lines[0] in texts


def test_the_focused_query_leaves_out_the_named_speakers():
    assert named_speakers("What has Melanie painted?", ["Melanie", "Caroline"]) == {"Melanie"}
    assert named_speakers("What did Caroline tell Melanie?", ["Melanie", "Caroline"]) == set()
    assert named_speakers("What was painted?", ["Melanie", "Caroline"]) == set()
    assert focused_query("What has Melanie painted?", {"Melanie"}) == "What has painted?"
    assert focused_query("What is Melanie's favourite colour?", {"Melanie"}) == \
        "What is favourite colour?"
    assert focused_query("Where did Dr. Jane Doe work?", {"Dr. Jane Doe"}) == "Where did . work?"
    assert focused_query("Who is Melanie?", {"Melanie"}) is None  # nothing left to ask
    assert focused_query("What has Melanie painted?", set()) is None


def test_the_embedding_ranker_is_asked_what_was_asked_not_who(dense_runtime):
    loop, rt = dense_runtime
    lines = ["Caroline: Melanie! Oh Melanie, dear Melanie.",
             "Caroline: Hey Melanie, what are you up to this week, Melanie?",
             "Melanie: Pottery class helps me relax after work.",
             "Melanie: I painted a sunset over the lake last weekend.",
             "Caroline: I went hiking in the mountains with my dog."]
    loop.run_until_complete(import_verbatim(
        rt.storage, "focus", [(i, ImportLine(text=t)) for i, t in enumerate(lines, 1)], rt.embedder))

    def search(q):
        return loop.run_until_complete(rt.service.search("focus", q, limit=5, recency_weight=0.0,
                                                         mmr_lambda=1.0, explain=True))

    # Asked with her name, MiniLM puts Caroline's line to Melanie first (cosine 0.52-0.54
    # against pottery's 0.52-0.54: the name dominates); without it, the pottery class.
    for query, focus in (("What does Melanie do to unwind?", "What does do to unwind?"),
                         ("What hobby does Melanie have?", "What hobby does have?")):
        trace = search(query)["explain"]
        assert trace.focus == focus
        dense = sorted((r["dense"][0], trace.memories[mid].text)
                       for mid, r in trace.ranks.items() if "dense" in r)
        assert dense[0][1] == lines[2], dense
    # A query naming no speaker is embedded as given.
    assert search("Who went hiking?")["explain"].focus is None
    # A search of the past (as_of) ranks its pool the same way.
    from datetime import datetime, timezone
    past = loop.run_until_complete(rt.service.search(
        "focus", "What does Melanie do to unwind?", limit=5, recency_weight=0.0, mmr_lambda=1.0,
        explain=True, as_of=datetime.now(timezone.utc).isoformat()))
    trace = past["explain"]
    assert trace.focus == "What does do to unwind?" and past["degraded"] == []
    dense = sorted((r["dense"][0], trace.memories[mid].text) for mid, r in trace.ranks.items()
                   if "dense" in r)
    assert dense[0][1] == lines[2], dense


@pytest.mark.slow
def test_the_inspector_shows_the_query_the_embedding_ranker_was_asked(tmp_path):
    """Over a real `recall serve` with the dense ranker, through the stub extractor (which
    keeps each line's speaker) and the inspector's "Search, explained" page."""

    from recall_testkit.inspector import run, signed_in, store_all
    from recall_testkit.serverproc import ServerProcess

    pytest.importorskip("recall_embeddings")
    srv = ServerProcess(str(tmp_path / "r.db"), tmp_path, env={"RECALL_DISABLE_PLUGINS": ""}).start()
    try:
        token = srv.token("alice")
        run(store_all(srv, token, ["Caroline: Hey Melanie, what are you up to this week, Melanie?",
                                   "Melanie: Pottery class helps me relax after work."]))
        ui = signed_in(srv, token)
        html = ui.get("/ui/search", params={"query": "What does Melanie do to unwind?"}).text
        assert "were asked <q>What does do to unwind?</q>" in html, html[:3000]
        assert "were asked" not in ui.get("/ui/search", params={"query": "Who relaxes?"}).text
    finally:
        srv.stop()
