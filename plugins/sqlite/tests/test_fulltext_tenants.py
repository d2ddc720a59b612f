"""Full text in a file many tenants share (issue 31): a tenant's results are its own.

Since migration 16 a term's postings are one namespace's (fts_terms.py), and a namespace that
shares the file is scored with its own BM25 statistics (fulltext.py, `_per_term`). So the
rows, order and scores a tenant gets do not depend on what other tenants hold: the same as
in a file holding that tenant alone (where FTS5's bm25() is used as is).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_core import Memory
from recall_core.testing.helpers import delete, dump_tables
from recall_sqlite import SQLiteSettings, make_storage, schema
from recall_sqlite.fts_terms import prefix, register

WORDS = ["apple", "apples", "river", "rivers", "blue", "deploy", "deployed", "kafka", "zebra",
         "oslo", "team", "budget", "ünïcode", "the", "a", "x9"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
memory = st.tuples(text, st.one_of(st.none(), text))
queries = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
                   min_size=1, max_size=4)


async def _answers(path: Path, mine: list[tuple[str, str | None]],
                   others: list[tuple[str, str, str | None]], qs: list[list[str]],
                   limit: int) -> list[list[tuple[int, float]]]:
    """Search tenant "t" in a fresh file holding `mine` and the `others`' rows (before and
    after its own); answers as (position of the row in `mine`, score)."""
    s = make_storage(f"sqlite:///{path}", SQLiteSettings())
    await s.open()
    try:
        half = len(others) // 2
        await s.insert_memories([Memory(namespace=ns, text=t, context=c)
                                 for ns, t, c in others[:half]])
        rows = [Memory(namespace="t", text=t, context=c) for t, c in mine]
        await s.insert_memories(rows)
        await s.insert_memories([Memory(namespace=ns, text=t, context=c)
                                 for ns, t, c in others[half:]])
        where = {m.id: i for i, m in enumerate(rows)}
        return [[(where[h.id], h.score) for h in await s.search_fulltext("t", q, limit)]
                for q in qs]
    finally:
        await s.close()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mine=st.lists(memory, min_size=1, max_size=25),
       others=st.lists(st.tuples(st.sampled_from(["o1", "o2", "t2"]), text,
                                 st.one_of(st.none(), text)), min_size=1, max_size=60),
       qs=queries, limit=st.integers(1, 30))
async def test_a_tenants_results_do_not_depend_on_other_tenants_rows(
        tmp_path_factory: pytest.TempPathFactory, mine, others, qs, limit) -> None:
    alone = await _answers(tmp_path_factory.mktemp("alone") / "r.db", mine, [], qs, limit)
    shared = await _answers(tmp_path_factory.mktemp("shared") / "r.db", mine, others, qs, limit)
    for q, a, b in zip(qs, alone, shared):
        assert [i for i, _ in a] == [i for i, _ in b], q
        assert [round(x, 9) for _, x in a] == [round(x, 9) for _, x in b], q


async def test_many_tenants_each_find_their_own_rows_ranked_as_alone(tmp_path: Path) -> None:
    # 200 tenants whose rows all share the query words, in one file: each tenant's answer
    # equals its answer in a file of its own.
    tenants = {f"t{i}": [f"river blue note {j} {'kafka' * (j % 3 == 0)} x{i}" for j in range(12)]
               for i in range(200)}
    s = make_storage(f"sqlite:///{tmp_path / 'shared.db'}", SQLiteSettings())
    await s.open()
    try:
        await s.insert_memories([Memory(namespace=ns, text=t)
                                 for j in range(12) for ns, texts in tenants.items()
                                 for t in texts[j:j + 1]])
        for ns in ("t0", "t77", "t199"):
            got = [(h.score, (await s.get_memories(ns, [h.id]))[0].text)
                   for h in await s.search_fulltext(ns, ["kafka", "river", "note"], 5)]
            one = make_storage(f"sqlite:///{tmp_path / (ns + '.db')}", SQLiteSettings())
            await one.open()
            try:
                await one.insert_memories([Memory(namespace=ns, text=t) for t in tenants[ns]])
                want = [(h.score, (await one.get_memories(ns, [h.id]))[0].text)
                        for h in await one.search_fulltext(ns, ["kafka", "river", "note"], 5)]
            finally:
                await one.close()
            assert [t for _, t in got] == [t for _, t in want]
            assert [round(x, 9) for x, _ in got] == [round(x, 9) for x, _ in want]
        assert s._fulltext.plans["per term"] >= 3
    finally:
        await s.close()


async def test_an_older_file_is_reindexed_per_namespace(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # A file at version 15 (one doclist per word for every tenant) upgrades: migration 16
    # rebuilds the index from the active rows, with per-namespace terms and counts.
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", tuple(x for x in schema.MIGRATIONS if x[0] <= 15))
        old = make_storage(f"sqlite:///{path}", SQLiteSettings())
        await old.open()
        try:
            await old.insert_memories([Memory(namespace=ns, text=f"{ns} keeps the heron note {i}",
                                              context="birds?" if i == 0 else None)
                                       for ns in ("a", "b") for i in range(3)])
            gone = Memory(namespace="a", text="the heron left")
            await old.insert_memories([gone])
            await delete(old, "a", gone.id)
        finally:
            await old.close()
    new = make_storage(f"sqlite:///{path}", SQLiteSettings())
    await new.open()
    try:
        for ns in ("a", "b"):
            hits = await new.search_fulltext(ns, ["heron"], 10)
            texts = {(await new.get_memories(ns, [h.id]))[0].text for h in hits}
            assert all(t.startswith(ns) for t in texts) and len(texts) == 3
            assert [h.id for h in await new.search_fulltext(ns, ["birds"], 10)]
    finally:
        await new.close()
    conn = sqlite3.connect(path)
    register(conn)
    assert conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == schema.LATEST
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    counts = dict(conn.execute("SELECT namespace, docs FROM fts_namespaces"))
    active = dict(conn.execute("SELECT namespace, count(*) FROM memories "
                               "WHERE valid_until IS NULL GROUP BY namespace"))
    assert counts == active


async def test_forget_and_erase_leave_nothing_in_the_index(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    s = make_storage(f"sqlite:///{path}", SQLiteSettings())
    await s.open()
    try:
        keep = Memory(namespace="k", text="kept walrus")
        forgotten = Memory(namespace="f", text="forgotten walrus secret", context="walrus?")
        await s.insert_memories([keep, forgotten,
                                 *(Memory(namespace="e", text=f"erased walrus {i}") for i in range(5))])
        assert await delete(s, "f", forgotten.id)
        await s.delete_namespace("e")
        assert await s.search_fulltext("f", ["walrus"], 10) == []
        assert await s.search_fulltext("e", ["walrus"], 10) == []
        assert [h.id for h in await s.search_fulltext("k", ["walrus"], 10)] == [keep.id]
        assert "erased walrus" not in await dump_tables(s) and "'e'" not in await dump_tables(s)
    finally:
        await s.close()
    conn = sqlite3.connect(path)
    register(conn)
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    # The index's vocabulary: only the kept row's terms (prefixed with k's number) remain.
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, memories_fts, 'row')")
    terms = {t for (t,) in conn.execute("SELECT term FROM temp.vocab")}
    (k_code,) = conn.execute("SELECT id FROM fts_namespaces WHERE namespace = 'k'").fetchone()
    words = {t for t in terms if not t.startswith("ns") and t != "pad"}
    assert words and all(t.startswith(prefix(k_code)) for t in words), words
    assert {n for (n,) in conn.execute("SELECT namespace FROM fts_namespaces")} == {"k", "f"}
    assert conn.execute("SELECT docs FROM fts_namespaces WHERE namespace = 'f'").fetchone()[0] == 0
