"""The level search (fts_levels.py, kit.levels) answers exactly what the plain query answers.

A large namespace alone in its file is searched by levels: only the rows that can enter the
top are read, scored in Python from their text (fts_rescore.py) and, where thousands tie,
read newest first. The plain query (bm25() over every matching row) is the reference: same
rows, same order (ties: newer first), same scores.
"""

from __future__ import annotations

import random
from collections import Counter
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_core import Memory
from recall_core.kit import levels
from recall_core.testing.helpers import delete, supersede
from recall_sqlite import SQLiteSettings, SQLiteStorage, fts_levels, fts_rescore, fulltext
from recall_sqlite import make_storage


async def _both(storage: SQLiteStorage, ns: str, q: list[str], limit: int):
    ft = storage._fulltext
    ft.levels = True
    got = await storage.search_fulltext(ns, q, limit)
    ft.levels = False
    want = await storage.search_fulltext(ns, q, limit)
    ft.levels = True
    return got, want


@pytest.fixture(autouse=True)
def _levels_at_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """These corpora are small: the level search is forced (in a namespace below
    LEVELS_MIN_ROWS the plain query answers, and would be compared with itself)."""
    monkeypatch.setattr(fulltext, "LEVELS_MIN_ROWS", 0)


def _same(got, want, q) -> None:
    assert [h.id for h in got] == [h.id for h in want], q
    # the scorer repeats bm25()'s operations in its order: equal to the last bit
    assert [h.score for h in got] == [h.score for h in want], q


async def test_levels_answer_exactly_what_the_plain_query_answers(
        storage: SQLiteStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    # Zipf-like words: a few in a large share of rows, most rare; a third of the rows have a
    # session context; some rows repeat a word (frequency 2 or 3) and short rows tie.
    monkeypatch.setattr(fts_levels, "CHUNK", 16)  # many newest-first steps
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(400)]
    weights = [1 / (i + 1) ** 1.1 for i in range(len(vocab))]
    rows = []
    for i in range(4000):
        words = rng.choices(vocab, weights, k=rng.randint(2, 10))
        if i % 11 == 0:
            words += [words[0]] * rng.randint(1, 2)
        rows.append(Memory(namespace="a", text=" ".join(words), context=(
            " ".join(rng.choices(vocab, weights, k=rng.randint(1, 6))) if i % 3 == 0 else None)))
    await storage.insert_memories(rows)
    queries = [[vocab[rng.randrange(1, 4)], vocab[rng.randrange(4, 40)], vocab[rng.randrange(40, 400)]]
               for _ in range(50)]
    queries += [[vocab[i] for i in rng.sample(range(len(vocab)), 3)] + ["w0"] for _ in range(20)]
    queries += [rng.choices(vocab[:12], k=rng.randint(2, 4)) for _ in range(20)]  # all common
    for limit in (5, 30):
        for q in queries:
            _same(*await _both(storage, "a", q, limit), q)
    plans = storage._fulltext.plans
    assert sum(v for k, v in plans.items() if k.startswith("level")) >= 60, plans
    assert any(k.endswith("then its score") for k in plans), plans


async def test_a_namespace_below_the_threshold_takes_the_plain_query(
        storage: SQLiteStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below LEVELS_MIN_ROWS the plain query answers (it is faster there: RESULTS.md), at
    and above it the level search; the answer is the same either way."""
    rng = random.Random(3)
    vocab = [f"v{i}" for i in range(60)]
    await storage.insert_memories([Memory(namespace="a", text=" ".join(rng.choices(vocab, k=5)))
                                   for _ in range(2500)])
    ft = storage._fulltext
    q = ["v1", "v2", "v30"]
    monkeypatch.setattr(fulltext, "LEVELS_MIN_ROWS", 2501)
    ft.plans.clear()
    below = await storage.search_fulltext("a", q, 10)
    assert dict(ft.plans) == {"plain": 1}
    monkeypatch.setattr(fulltext, "LEVELS_MIN_ROWS", 2500)
    ft.plans.clear()
    at = await storage.search_fulltext("a", q, 10)
    assert all(k.startswith("level") for k in ft.plans), ft.plans
    _same(at, below, q)


@pytest.mark.parametrize("levels_min_rows", [0, 10**9])
async def test_a_write_between_the_sizes_and_the_counts_still_answers(
        storage: SQLiteStorage, monkeypatch: pytest.MonkeyPatch, levels_min_rows: int) -> None:
    """Another connection writes after a search read the data version and before it counts
    its words (one term's count cached, one not): the search answers what the plain query
    answers, and the next search counts afresh."""
    monkeypatch.setattr(fulltext, "LEVELS_MIN_ROWS", levels_min_rows)
    rng = random.Random(5)
    vocab = [f"v{i}" for i in range(60)]
    await storage.insert_memories([Memory(namespace="a", text=" ".join(rng.choices(vocab, k=5)))
                                   for _ in range(2500)] +
                                  [Memory(namespace="a", text="v1 v1 v7 v7 v7")])
    ft = storage._fulltext
    await storage.search_fulltext("a", ["v1", "v2"], 10)   # v1, v2 counted and cached
    fetch = ft.db.fetch
    wrote = []

    async def write_first(sql, *args, **kw):
        if "memories_fts_rows" in sql and not wrote:
            wrote.append(True)
            await storage.insert_memories([Memory(namespace="a", text="v1 v9 v9")])
        return await fetch(sql, *args, **kw)

    monkeypatch.setattr(ft.db, "fetch", write_first)
    got = await storage.search_fulltext("a", ["v1", "v9"], 10)
    assert wrote
    monkeypatch.setattr(ft.db, "fetch", fetch)
    ft.levels = False
    want = await storage.search_fulltext("a", ["v1", "v9"], 10)
    ft.levels = True
    _same(got, want, ["v1", "v9"])


async def test_ties_are_read_newest_first_and_the_scan_stops(
        storage: SQLiteStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    # 1500 rows tied on two words, a few heavier rows among the oldest: the answer is the
    # heavy rows, then the newest tied ones; the scan reads a couple of chunks, not 1500 rows.
    monkeypatch.setattr(fts_levels, "CHUNK", 64)
    rows = [Memory(namespace="a", text=f"ticket rec number{i}") for i in range(1500)]
    heavy = [Memory(namespace="a", text=f"ticket rec 1050 urgent{i}") for i in range(3)]
    filler = [Memory(namespace="a", text=f"filler n{i}") for i in range(2000)]
    await storage.insert_memories([*heavy, *rows, *filler])
    read = []
    fetch = storage._fulltext.db.fetch

    async def counting(sql, params=()):
        out = await fetch(sql, params)
        if sql is fts_levels._CHUNK:
            read.append(len(out) - 1)
        return out

    monkeypatch.setattr(storage._fulltext.db, "fetch", counting)
    got, want = await _both(storage, "a", ["ticket", "rec", "1050"], 20)
    _same(got, want, "ties")
    assert {h.id for h in got[:3]} == {m.id for m in heavy}
    assert {h.id for h in got[3:]} <= {m.id for m in rows}
    assert storage._fulltext.plans["plain"] == 1  # the reference; the levels answered
    assert sum(read) < 300, read


@pytest.mark.parametrize("repeats_max", [5000, 0])
async def test_a_word_repeated_in_some_row_keeps_the_answer_exact(
        storage: SQLiteStorage, monkeypatch: pytest.MonkeyPatch, repeats_max: int) -> None:
    # One old row says "rec" three times: it outscores the tied rows, so the narrowing must
    # not assume one instance per row for "rec" (its row is listed and scored apart; or,
    # past REPEATS_MAX, "rec" is bounded at the most instances a row can hold).
    monkeypatch.setattr(fts_levels, "CHUNK", 32)
    monkeypatch.setattr(fulltext, "REPEATS_MAX", repeats_max)
    old = Memory(namespace="a", text="ticket rec rec rec")
    rows = [Memory(namespace="a", text=f"ticket rec n{i}") for i in range(1200)]
    rows += [Memory(namespace="a", text=f"filler f{i}") for i in range(1300)]
    await storage.insert_memories([old, *rows])
    got, want = await _both(storage, "a", ["ticket", "rec"], 10)
    _same(got, want, "repeat")
    assert got[0].id == old.id


async def test_vocabulary_counts_follow_deletes_and_supersedes(storage: SQLiteStorage) -> None:
    rows = [Memory(namespace="a", text=f"alpha beta gamma{i % 7}", context="beta" if i % 4 else None)
            for i in range(2400)]
    await storage.insert_memories(rows)
    for m in rows[:300]:
        await delete(storage, "a", m.id)
    await supersede(storage, "a", [m.id for m in rows[300:500]],
                    datetime(2026, 1, 1, tzinfo=timezone.utc),
                    [Memory(namespace="a", text="alpha alpha delta") for _ in range(50)])
    ft = storage._fulltext
    code, *_ = await ft._sizes("a")
    quoted = fulltext.quote_terms(code, ["alpha", "beta", "delta", "gamma3", "nothing"])
    counts = await ft._counts(code, quoted)
    for t, (n, extra, repeated) in zip(quoted, counts):
        want = (await ft.db.fetch("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                                  (fulltext.fts_match([t]),)))[0][0]
        assert n == want, t
        if extra == 0:
            assert repeated == ()
    assert counts[0][1] == 50  # alpha twice in each of the 50 new rows, listed
    assert len(counts[0][2]) == 50
    for q in (["alpha", "beta"], ["delta", "beta", "gamma3"], ["alpha", "gamma2", "gamma5"]):
        _same(*await _both(storage, "a", q, 25), q)


def test_the_scorer_tokenizes_as_the_index(db_path: Path, storage: SQLiteStorage) -> None:
    sql = sqlite3.connect(db_path).execute(
        "SELECT sql FROM sqlite_master WHERE name = 'memories_fts'").fetchone()[0]
    assert f"tokenize='{fts_rescore.TOKENIZE}'" in sql


def test_above_holds_every_set_that_can_exceed_a_score() -> None:
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(1, 7)
        most = [rng.choice([0.5, 1.0, 2.5, rng.uniform(0.1, 5)]) for _ in range(n)]
        score = rng.uniform(0, sum(most))
        sets = fts_levels.above(most, score)
        for mask in range(1, 2 ** n):
            held = [i for i in range(n) if mask >> i & 1]
            total = 0.0
            for i in held:
                total += most[i]
            assert (total > score) == any(set(s) <= set(held) for s in sets), (most, score, held)


# -- random corpora -------------------------------------------------------------------------------
WORDS = ["apple", "apples", "river", "rivers", "blue", "deploy", "deployed", "kafka", "zebra",
         "oslo", "team", "budget", "ünïcode", "the", "x9", "rec", "ticket", "rec-1050", "e-mail"]
PLANS: Counter[str] = Counter()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(20, 300), skew=st.floats(0.3, 2.0),
       repeat=st.floats(0, 0.3), with_context=st.floats(0, 0.6), deleted=st.floats(0, 0.3),
       limit=st.integers(1, 20), chunk=st.integers(1, 12), repeats_max=st.sampled_from([0, 3, 5000]),
       apart_max=st.sampled_from([0, 2, 1000]),
       targets=st.sampled_from([levels.TARGETS, (0.01, 0.05, 0.2), (0.002,), (0.1, 1.0)]))
async def test_levels_equal_the_plain_query_on_random_corpora(
        tmp_path_factory: pytest.TempPathFactory, seed, n, skew, repeat, with_context,
        deleted, limit, chunk, repeats_max, apart_max, targets) -> None:
    # Corpora drawn from a seed (Hypothesis alone draws mostly tiny ones): Zipf-like words
    # (some with the same stem, a phrase, non-ASCII), repeated words, session contexts,
    # deleted rows; queries of two to five words.
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** skew for i in range(len(WORDS))]

    def words(k: int) -> str:
        out = rng.choices(WORDS, weights, k=k)
        if rng.random() < repeat:
            out += [out[0]] * rng.randint(1, 3)
        return " ".join(out)

    mp = pytest.MonkeyPatch()
    mp.setattr(fulltext, "COMMON_TERM_MIN_ROWS", 0)  # levels at any size
    mp.setattr(fulltext, "LEVELS_MIN_ROWS", 0)
    mp.setattr(fts_levels, "CHUNK", chunk)
    mp.setattr(fulltext, "REPEATS_MAX", repeats_max)
    mp.setattr(fts_levels, "APART_MAX_ROWS", apart_max)
    # Higher levels than a small corpus would get: more levels tried, more proofs to fail.
    mp.setattr(levels, "TARGETS", targets)
    s = make_storage(f"sqlite:///{tmp_path_factory.mktemp('lv') / 'r.db'}", SQLiteSettings())
    await s.open()
    try:
        mems = [Memory(namespace="a", text=words(rng.randint(1, 8)),
                       context=words(rng.randint(1, 5)) if rng.random() < with_context else None)
                for _ in range(n)]
        await s.insert_memories(mems)
        for m in mems:
            if rng.random() < deleted:
                await delete(s, "a", m.id)
        for _ in range(8):
            q = rng.choices(WORDS, k=rng.randint(2, 5))
            _same(*await _both(s, "a", q, limit), q)
        PLANS.update(s._fulltext.plans)
    finally:
        await s.close()
        mp.undo()


def test_the_random_corpora_took_the_level_paths() -> None:
    # (runs after the property test, in file order) levels answered, not only the plain query
    assert sum(v for k, v in PLANS.items() if k.startswith("level")) >= 40, PLANS
    assert sum(v for k, v in PLANS.items() if k.endswith("then its score")) >= 5, PLANS
