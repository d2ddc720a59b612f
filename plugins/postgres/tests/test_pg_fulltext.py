"""Keyword search: the BM25 ranking, its statistics staying exact under concurrent writers,
the level-pruned search equal to the plain one, hostile input, upgrading a v4 database."""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_core.kit import levels
from recall_postgres import fulltext, ties
from recall_postgres.fulltext import CONTEXT_WEIGHT, K1, B
from recall_postgres.migrations import LATEST
from recall_postgres.rows import IN_NAMESPACE

from recall_testkit.pg_rows import T0, mem, op
from recall_core.testing.helpers import supersede, complete_job, delete


# -- helpers --------------------------------------------------------------------------------------
async def recount(con: asyncpg.Connection) -> tuple[dict, dict, set]:
    """The statistics recomputed from the memory rows: per namespace (docs, total length,
    shortest non-empty), per (namespace, lexeme) (df, df_text, df_both), and the active ids."""
    rows = await con.fetch(f"""
        SELECT m.id, m.namespace, m.type, {fulltext.TSV} AS tsv FROM memories m
         WHERE m.valid_until IS NULL""")
    docs: dict[str, list[int]] = {}
    terms: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        lex = await con.fetch("SELECT lexeme, weights FROM unnest($1::tsvector)", r["tsv"])
        d = docs.setdefault(r["namespace"], [0, 0, 10**9] + [0] * len(fulltext.TYPES))
        d[0] += 1
        d[3 + fulltext.TYPES.index(r["type"])] += 1
        d[1] += len(lex)
        if lex:
            d[2] = min(d[2], len(lex))
        for x in lex:
            t = terms.setdefault((r["namespace"], x["lexeme"]), [0, 0, 0])
            t[0] += 1
            t[1] += "A" in x["weights"]
            t[2] += "A" in x["weights"] and "D" in x["weights"]
    return ({ns: tuple(v) for ns, v in docs.items()}, {k: tuple(v) for k, v in terms.items()},
            {r["id"] for r in rows})


async def assert_exact(storage) -> None:
    async with storage.pool.acquire() as con:
        docs, terms, active = await recount(con)
        stored = {r["namespace"]: r for r in await con.fetch("SELECT * FROM namespaces")}
        for ns in set(docs) | set(stored):
            n, length, shortest, *by_type = docs.get(ns, (0, 0, 10**9) + (0,) * 4)
            row = stored[ns]
            assert (row["ft_docs"], row["ft_len"]) == (n, length), ns
            assert [row[f"active_{t}"] for t in fulltext.TYPES] == by_type, ns
            assert await storage.stats(ns) == {t: n for t, n in zip(fulltext.TYPES, by_type) if n}
            if n:  # a lower bound of the shortest row (deletes never raise it)
                assert row["ft_min_len"] is not None and row["ft_min_len"] <= shortest, ns
        got = {(r["namespace"], r["lexeme"]): (r["df"], r["df_text"], r["df_both"])
               for r in await con.fetch("SELECT * FROM fulltext_terms")}
        assert got == terms
        assert {r["id"] for r in await con.fetch("SELECT id FROM fulltext")} == active


def reference_scores(rows: list[tuple[str, int, dict[str, set[str]]]], query: list[str],
                     n: int, avglen: float, df: dict[str, int]) -> dict[str, float]:
    """BM25 as documented in fulltext.py, in plain Python."""
    query = [t for t in query if df.get(t)]
    kept = [t for t in query if df[t] <= fulltext.COMMON_SHARE * n]
    query = kept or [min(query, key=lambda t: (df[t], t))]
    out = {}
    for rid, length, lex in rows:
        s = 0.0
        for t in query:
            w = lex.get(t)
            if not w:
                continue
            tf = ("A" in w) + CONTEXT_WEIGHT * ("D" in w)
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            s += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avglen))
        if s:
            out[rid] = s
    return out


# -- ranking --------------------------------------------------------------------------------------
async def test_rare_term_outranks_common_one(storage):
    common = [mem("ns", f"coffee break number {i}", minutes=i) for i in range(30)]
    rare = mem("ns", "espresso break number 99", minutes=-10)  # oldest: recency cannot help
    await storage.insert_memories([*common, rare, *[mem("ns", f"tea {i}") for i in range(10)]])
    hits = await storage.search_fulltext("ns", ["coffee", "espresso"], 5)
    assert hits[0].id == rare.id
    assert hits[0].score > 2 * hits[1].score  # idf: 1 row of 41 against 30 of 41


async def test_words_in_nearly_every_row_are_left_out_unless_alone(storage):
    # "Caroline" in every turn of her conversation weighs ~nothing (idf ~0) yet would make
    # every row a candidate: it is left out when the query has a rarer word.
    rows = [mem("ns", f"caroline said thing number {i}", minutes=i) for i in range(40)]
    rows.append(mem("ns", "caroline went hiking", minutes=50))
    await storage.insert_memories(rows)
    hits = await storage.search_fulltext("ns", ["caroline", "hiking"], 10)
    assert [h.id for h in hits] == [rows[-1].id]
    only = await storage.search_fulltext("ns", ["caroline"], 10)
    assert len(only) == 10  # alone, it is still searched
    assert storage.fulltext.plans["plain"] >= 1


async def test_idf_decides_between_otherwise_equal_rows(storage):
    a = mem("ns", "alpha gamma delta", minutes=1)
    b = mem("ns", "beta gamma delta", minutes=2)  # same length, newer: would win a tie
    filler = [mem("ns", f"beta filler {i}", minutes=-3 - i) for i in range(10)]
    await storage.insert_memories([a, b, *filler, *[mem("ns", f"other {i}") for i in range(5)]])
    hits = await storage.search_fulltext("ns", ["alpha", "beta"], 3)
    assert [h.id for h in hits[:2]] == [a.id, b.id]
    assert hits[0].score > 2 * hits[1].score


async def test_shorter_rows_score_higher(storage):
    short = mem("ns", "zebra crossing", minutes=1)
    long = mem("ns", "zebra seen near the river bank late one windy autumn evening", minutes=2)
    await storage.insert_memories([short, long, *[mem("ns", f"other note {i}") for i in range(5)]])
    hits = await storage.search_fulltext("ns", ["zebra"], 5)
    assert [h.id for h in hits] == [short.id, long.id]


async def test_session_context_counts_less_than_the_text(storage):
    in_text = mem("ns", "the giraffe ate leaves", minutes=1)
    in_context = mem("ns", "yes it ate leaves", minutes=2)
    in_context.context = "what did the giraffe eat"
    in_both = mem("ns", "the giraffe ate leaves", minutes=3)
    in_both.context = "what did the giraffe eat"
    await storage.insert_memories([in_text, in_context, in_both,
                                   *[mem("ns", f"unrelated {i}") for i in range(5)]])
    hits = {h.id: h.score for h in await storage.search_fulltext("ns", ["giraffe"], 5)}
    assert set(hits) == {in_text.id, in_context.id, in_both.id}
    assert hits[in_both.id] > hits[in_text.id] > hits[in_context.id] > 0


async def test_scores_are_the_documented_bm25(storage):
    rng = random.Random(3)
    words = [f"w{i}" for i in range(40)]
    ms = []
    for i in range(120):
        m = mem("ns", " ".join(rng.choices(words, weights=[1 / (k + 1) for k in range(40)],
                                           k=rng.randint(1, 9))), minutes=i)
        if i % 3 == 0:
            m.context = " ".join(rng.choices(words, k=rng.randint(1, 5)))
        ms.append(m)
    await storage.insert_memories(ms)
    await supersede(storage, "ns", [ms[0].id, ms[5].id], T0, [])
    async with storage.pool.acquire() as con:
        rows = []
        for r in await con.fetch("SELECT id, len, tsv FROM fulltext WHERE namespace = 'ns'"):
            lex = {x["lexeme"]: set(x["weights"]) for x in
                   await con.fetch("SELECT lexeme, weights FROM unnest($1::tsvector)", r["tsv"])
                   if x["weights"] is not None}  # not the namespace token
            rows.append((r["id"], r["len"], lex))
    n = len(rows)
    avglen = sum(r[1] for r in rows) / n
    df = {w: sum(1 for r in rows if w in r[2]) for w in words}
    for query in (["w0"], ["w1", "w7"], ["w3", "w0", "w22", "w39"], words[:12]):
        want = reference_scores(rows, query, n, avglen, df)
        hits = await storage.search_fulltext("ns", query, 200)
        assert {h.id for h in hits} == set(want)
        for h in hits:
            assert h.score == pytest.approx(want[h.id], rel=1e-9)


# -- levels equal the plain query -----------------------------------------------------------------
async def test_levels_return_exactly_the_plain_ranking(storage, monkeypatch):
    # Zipf-distributed words, short rows (so many exact ties, broken by created_at, seq),
    # session context on a third, two namespaces sharing the vocabulary.
    monkeypatch.setattr(fulltext, "PLAIN_MAX_ROWS", 0)
    rng = random.Random(20261122)
    vocab = [f"t{i}" for i in range(800)]
    weights = [1 / (k + 1) ** 1.05 for k in range(len(vocab))]
    batch = []
    for i in range(6000):
        m = mem("ns" if i % 7 else "other", " ".join(rng.choices(vocab, weights, k=rng.randint(2, 12))),
                minutes=i // 3)
        if i % 3 == 0:
            m.context = " ".join(rng.choices(vocab, weights, k=rng.randint(1, 8)))
        batch.append(m)
    await storage.insert_memories(batch)
    await storage.pool.execute("ANALYZE")
    queries = [rng.choices(vocab, weights, k=rng.randint(2, 7)) for _ in range(120)]
    queries += [rng.choices(vocab[:30], k=rng.randint(2, 5)) for _ in range(40)]  # all common
    queries += [[rng.choice(vocab[300:])] + rng.choices(vocab[:10], k=3) for _ in range(40)]
    for limit in (10, 100):
        for q in queries:
            got = await storage.fulltext.search(storage.pool, "ns", q, limit)
            want = await storage.fulltext.search(storage.pool, "ns", q, limit, plain=True)
            assert [(h.id, h.score) for h in got] == [(h.id, h.score) for h in want], q
    plans = storage.fulltext.plans
    assert sum(v for k, v in plans.items() if k.startswith("level")) > len(queries), plans
    assert any(k.endswith("then its score") for k in plans), plans


def test_minimal_sets_cover_exactly_the_rows_that_reach_the_level():
    terms = [fulltext.Term(f"t{i}", 10, b, True, False, b) for i, b in
             enumerate([5.0, 3.0, 2.5, 1.0, 0.5])]
    for level in (0.4, 1.0, 3.0, 5.5, 6.0, 8.0, 11.9, 12.0, 12.1):
        sets = levels.minimal_sets(terms, level)
        for mask in range(1, 32):
            held = {i for i in range(5) if mask >> i & 1}
            covered = any(set(s) <= held for s in sets)
            assert covered == (sum(terms[i].bound for i in held) >= level), (level, held)
    # Too many sets: the coarser cover (the heaviest terms alone) still holds every row that
    # can reach the level.
    many = [fulltext.Term(f"t{i}", 10, 1.0, True, False, 1.0) for i in range(12)]
    sets = levels.minimal_sets(many, 6.0, cap=16)
    assert all(len(s) == 1 for s in sets) and len(sets) == 7
    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(2, 9)
        bounds = sorted((rng.uniform(0.2, 8) for _ in range(n)), reverse=True)
        terms = [fulltext.Term(f"t{i}", 10, b, True, False, b) for i, b in enumerate(bounds)]
        level = rng.uniform(0.1, sum(bounds) * 1.1)
        cap = rng.choice([2, 4, 8, 32])
        sets = levels.minimal_sets(terms, level, cap=cap)
        assert len(sets) <= max(cap, n)
        for mask in range(1, 2 ** n):
            held = {i for i in range(n) if mask >> i & 1}
            if sum(bounds[i] for i in held) >= level:
                assert any(set(s) <= held for s in sets), (bounds, level, held, sets)


async def test_near_duplicate_candidates_hold_a_rare_term(storage):
    # The worker's near-duplicate check: every row lacking at most `max_missing` of the
    # words is a candidate, rows sharing only common words are never scored.
    words = "maria likes the oat milk flat white every morning".split()
    near = mem("ns", "maria likes oat milk flat white every day")  # lacks 'morning'
    far = mem("ns", "maria likes tea every morning")
    common = [mem("ns", f"maria every morning {i}") for i in range(200)]
    await storage.insert_memories([near, far, *common])
    hits = await storage.search_near_duplicates("ns", words, 1, 5)
    assert hits and hits[0].id == near.id
    assert far.id not in {h.id for h in hits}  # holds none of the two rarest words
    assert all(h.id not in {m.id for m in common} for h in hits)
    assert storage.fulltext.plans["near duplicates"] == 1
    # Scores are the plain ranking's scores.
    plain = {h.id: h.score for h in await storage.fulltext.search(
        storage.pool, "ns", words, 500, plain=True)}
    assert all(h.score == plain[h.id] for h in hits)
    assert await storage.search_near_duplicates("ns", ["absent"], 1, 5) == []
    assert await storage.search_near_duplicates("ns", [], 1, 5) == []


# -- statistics under concurrent writers ----------------------------------------------------------
async def test_statistics_stay_exact_under_concurrent_writers(db_url, make_storage):
    # Three storages = three processes, each with its own pool, writing the same namespaces.
    stores = [await make_storage(db_url, pool_max=6) for _ in range(3)]
    rng = random.Random(7)
    words = "apple pear plum fig kiwi lime date grape melon berry cherry mango".split()

    def text() -> str:
        return " ".join(rng.sample(words, rng.randint(1, 6))) + f" n{rng.randint(0, 50)}"

    async def inserts(s, ns, n):
        for i in range(n):
            ms = [mem(ns, text(), minutes=i, type=rng.choice(fulltext.TYPES))
                  for _ in range(rng.randint(1, 4))]
            if i % 2:
                ms[0].context = text()
            await s.insert_memories(ms)

    async def supersedes(s, ns, n):
        for i in range(n):
            page, _ = await s.list_memories(ns, 20, 0)
            old = [m.id for m in rng.sample(page, min(2, len(page)))]
            await supersede(s, ns, old, T0, [mem(ns, text(), minutes=100 + i)])

    async def deletes(s, ns, n):
        for _ in range(n):
            page, _ = await s.list_memories(ns, 20, 0)
            if page:
                await delete(s, ns, rng.choice(page).id)

    async def jobs(s, ns, n):
        for i in range(n):
            await s.enqueue(op(ns, f"k{ns}{i}{rng.random()}"))
            job = await s.claim_job(60)
            if job is None:
                continue
            page, _ = await s.list_memories(job.namespace, 10, 0)
            sup = [(m.id, T0) for m in page[:1]]
            await complete_job(s, job, job.attempts, [mem(job.namespace, text())], sup)

    async def erase(s, ns):
        for _ in range(4):  # while the other writers are busy in it
            await asyncio.sleep(0.15)
            await s.delete_namespace(ns)

    await asyncio.gather(
        *[inserts(stores[i % 3], ns, 25) for i, ns in enumerate(["a", "b", "a", "c", "b", "c"])],
        *[supersedes(stores[i % 3], ns, 15) for i, ns in enumerate(["a", "b", "c"])],
        *[deletes(stores[i % 3], ns, 15) for i, ns in enumerate(["b", "a", "c"])],
        *[jobs(stores[i % 3], ns, 10) for i, ns in enumerate(["a", "c"])],
        erase(stores[1], "c"))
    await assert_exact(stores[0])
    assert (await stores[0].list_memories("a", 1, 0))[1] > 0
    # Emptying a namespace leaves no statistics behind.
    await stores[0].delete_namespace("a")
    await assert_exact(stores[0])
    assert not await stores[0].pool.fetchval(
        "SELECT count(*) FROM fulltext_terms WHERE namespace = 'a'")


async def test_erasure_unindexes_only_the_rows_it_deleted(storage):
    # A writer commits a new memory while delete_namespace's DELETE waits on a row lock of
    # that writer: the DELETE (its snapshot taken before) leaves the new memory alone, so the
    # erasure must leave its index row and counts alone too.
    old = mem("c", "an old pear")
    await storage.insert_memories([old])
    new = mem("c", "a new plum", minutes=1)
    async with storage.pool.acquire() as con:
        tx = con.transaction()
        await tx.start()
        await con.execute("SELECT 1 FROM memories WHERE id = $1 FOR UPDATE", old.id)
        await storage._insert(con, [new])
        await storage._bump(con, ["c"], await fulltext.sync(con, added=[new.id]))
        erase = asyncio.ensure_future(storage.delete_namespace("c"))
        await asyncio.sleep(0.3)  # the erasure's DELETE is now waiting for `old`
        assert not erase.done()
        await tx.commit()
    assert (await erase)[0] == 1
    assert [m.id for m in await storage.get_memories("c", [old.id, new.id])] == [new.id]
    await assert_exact(storage)
    assert [h.id for h in await storage.search_fulltext("c", ["plum"], 5)] == [new.id]


async def test_searches_stay_inside_their_namespace_in_the_index(storage):
    # The GIN scan itself is scoped by the namespace token: a one-row namespace does not
    # fetch the other tenants' rows holding its word; the statistics query probes the
    # query's lexemes even under a generic plan (no walk over a big namespace's words).
    await storage.insert_memories([mem("big", f"common word {i}") for i in range(3000)])
    await storage.insert_memories([mem("tiny", "common thing")])
    await storage.pool.execute("ANALYZE")
    hits = await storage.search_fulltext("tiny", ["common"], 10)
    assert len(hits) == 1
    async with storage.pool.acquire() as con, con.transaction():
        stats = await con.fetch(fulltext._STATS, "tiny", ["common"])
        terms, avglen = fulltext.weigh([(r["lexeme"], r["df"], r["df_text"], r["df_both"])
                                        for r in stats], 1, 2, 2)
        sql, params = fulltext.scoring_statement(terms, avglen)
        query = fulltext.quote(stats[0]["scope"]) + " & " + fulltext.quote("common")
        plan = "\n".join(r[0] for r in await con.fetch(
            "EXPLAIN (ANALYZE) " + sql, "tiny", [query], 10, *params))
        # The GIN scan with the token, or (migration 18) the namespace's own rows through
        # fulltext_newest: either way one row is fetched, not the other tenant's 3000.
        assert ("Bitmap Index Scan on fulltext_tsv" in plan and "rows=1 " in plan) or (
            "Index Scan using fulltext_newest" in plan and "Index Cond: (namespace = " in plan
            and "rows=1 " in plan), plan
        await con.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        await con.execute(f"PREPARE st(text, text[]) AS {fulltext._STATS}")
        plan = "\n".join(r[0] for r in await con.fetch(
            "EXPLAIN EXECUTE st('big', ARRAY['common'])"))
        await con.execute("DEALLOCATE st")
        assert "Index Cond: ((namespace = $1) AND (lexeme = " in plan, plan


def test_scans_skip_the_namespace_token_only_when_other_namespaces_are_small():
    def scope(rows, mine):
        return fulltext.scope({"rows": rows, "ft_docs": mine, "scope": "ns x"})
    assert scope(100_000, 100_000) is None  # one tenant: nothing to keep out
    assert scope(100_500, 100_000) is None
    assert scope(120_000, 100_000) == "ns x"
    assert scope(120_000, 1) == "ns x"
    assert scope(0, 5) == "ns x"  # unknown (statistics not flushed yet): scoped


# -- hostile input ------------------------------------------------------------------------------
WEIRD = ["o'brien", "back\\slash", "colon:A", "amp&ersand", "pipe|x", "bang!x", "<->", "a:*",
         "quote''d", "tab\tbed", "ümlaut", "日本語のテキスト", "emoji🙂", "x" * 300, "e-mail",
         "REC-1050", "3.14", "foo.example.com", "/usr/local/bin", "v1.2.3", "#tag", "@user"]


async def test_hostile_and_odd_terms_find_exactly_their_rows(storage):
    rows = [mem("ns", f"row about {w}", minutes=i) for i, w in enumerate(WEIRD)]
    await storage.insert_memories(rows + [mem("ns", "nothing special here")])
    for m, w in zip(rows, WEIRD):
        hits = {h.id for h in await storage.search_fulltext("ns", [w], 50)}
        if w in ("<->", "a:*"):  # no word in it ('a' is a stop word)
            assert hits == set(), w
        else:
            assert m.id in hits, w
    # Every lexeme the index holds, quoted, matches its own row and is valid tsquery.
    async with storage.pool.acquire() as con:
        for r in await con.fetch("SELECT id, tsv FROM fulltext"):
            for lex in await con.fetch("SELECT lexeme FROM unnest($1::tsvector)", r["tsv"]):
                q = fulltext.quote(lex["lexeme"])
                assert await con.fetchval("SELECT $1::tsvector @@ $2::tsquery", r["tsv"], q), q


async def test_hostile_terms_with_many_rows_take_the_level_path(storage, monkeypatch):
    monkeypatch.setattr(fulltext, "PLAIN_MAX_ROWS", 0)
    await storage.insert_memories([mem("ns", f"common words {i % 7} and o'brien's back\\slash",
                                       minutes=i) for i in range(300)])
    for terms in (["o'brien", "back\\slash", "common"], ["'", "\\", "common", "words"],
                  ["a & b", "!x", "words"], ["\x00", "words", "7"]):
        got = await storage.search_fulltext("ns", terms, 10)
        assert got == await storage.fulltext.search(
            storage.pool, "ns", [t.replace("\x00", " ") for t in terms], 10, plain=True)
    assert (await storage.pool.fetchval("SELECT count(*) FROM memories")) == 300


# -- schema -----------------------------------------------------------------------------------------
async def test_upgrades_a_version_4_database_and_backfills_the_statistics(db_url, make_storage):
    from recall_postgres.migrations import MIGRATIONS
    con = await asyncpg.connect(db_url)
    try:
        await con.execute("CREATE TABLE schema_version (version integer PRIMARY KEY, "
                          "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        for version, description, sql in MIGRATIONS[:4]:
            await con.execute(sql)
            await con.execute("INSERT INTO schema_version (version, description) VALUES ($1, $2)",
                              version, description)
        await con.execute("ALTER TABLE memories ADD COLUMN embedding real[]")
        for i in range(40):
            ns = "a" if i % 3 else "b"
            await con.execute(
                "INSERT INTO memories (id, namespace, text, type, valid_from, created_at, "
                "search_text, search_context, valid_until) VALUES ($1, $2, $3, $6, now(), "
                "now(), $3, $4, $5)", f"m{i}", ns, f"ticket REC-{1000 + i} about apples {i % 4}",
                "what about apples" if i % 2 else None,
                T0 if i % 5 == 0 else None, fulltext.TYPES[i % 4])
            await con.execute(
                "INSERT INTO namespaces VALUES ($1, nextval('namespace_version_seq')) "
                "ON CONFLICT (namespace) DO UPDATE SET version = nextval('namespace_version_seq')",
                ns)
    finally:
        await con.close()
    s = await make_storage(db_url)
    assert s.schema_version == LATEST
    await assert_exact(s)
    assert [h.id for h in await s.search_fulltext("a", ["1001"], 5)] == ["m1"]  # REC-1001
    assert await s.search_fulltext("a", ["1005"], 5) == []  # superseded before the upgrade
    assert not await s.pool.fetchval(
        "SELECT count(*) FROM information_schema.columns "
        "WHERE table_name = 'memories' AND column_name = 'tsv' AND table_schema = current_schema()")


async def test_memory_lookups_by_id_use_the_primary_key(storage):
    # What search does after ranking: get_memories / get_embeddings of ~100 ids. A prepared
    # statement ends up with a generic plan, which knows neither the namespace nor the ids;
    # with one big namespace among many tiny ones it must still probe the primary key, not
    # scan "the" namespace (SQLite's planner did, at 62 ms a search).
    await storage.insert_memories([mem("big", f"row {i}", embedding=[1.0, float(i)])
                                   for i in range(6000)])
    await storage.insert_memories([mem(f"tiny{i}", "row", embedding=[1.0, 0.0])
                                   for i in range(3000)])
    await storage.pool.execute("ANALYZE memories")
    ids = [r["id"] for r in await storage.pool.fetch(
        "SELECT id FROM memories WHERE namespace = 'big' ORDER BY random() LIMIT 100")]
    lit = "ARRAY[" + ",".join(f"'{i}'" for i in ids) + "]"
    async with storage.pool.acquire() as con, con.transaction():
        await con.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        for name, sql in (
                ("mems", f"SELECT id FROM memories WHERE id = ANY($2::text[]) "
                         f"AND {IN_NAMESPACE} AND valid_until IS NULL"),
                ("embs", f"SELECT id, embedding FROM memories WHERE id = ANY($2::text[]) "
                         f"AND {IN_NAMESPACE} AND embedding IS NOT NULL"),
                ("lock", f"SELECT id FROM memories WHERE id = ANY($2::text[]) "
                         f"AND {IN_NAMESPACE} ORDER BY id FOR UPDATE")):
            await con.execute(f"PREPARE {name}(text, text[]) AS {sql}")
            plan = "\n".join(r[0] for r in await con.fetch(
                f"EXPLAIN EXECUTE {name}('big', {lit})"))
            await con.execute(f"DEALLOCATE {name}")
            assert "memories_pkey" in plan, plan
        # What the statement looked like before: the generic plan walks the namespace.
        await con.execute("PREPARE old(text, text[]) AS SELECT id FROM memories "
                          "WHERE namespace = $1 AND id = ANY($2::text[]) AND valid_until IS NULL")
        plan = "\n".join(r[0] for r in await con.fetch(f"EXPLAIN EXECUTE old('big', {lit})"))
        await con.execute("DEALLOCATE old")
        assert "memories_pkey" not in plan, plan
    got = await storage.get_memories("big", ids)
    assert {m.id for m in got} == set(ids)
    assert await storage.get_memories("tiny1", ids) == []


# -- tied rows read newest first (ties.py) --------------------------------------------------------
async def _same_as_plain(storage, ns: str, q: list[str], limit: int) -> None:
    got = await storage.fulltext.search(storage.pool, ns, q, limit)
    want = await storage.fulltext.search(storage.pool, ns, q, limit, plain=True)
    assert [(h.id, h.score) for h in got] == [(h.id, h.score) for h in want], (q, limit)


def _newest_first_everywhere(monkeypatch) -> None:
    monkeypatch.setattr(fulltext, "PLAIN_MAX_ROWS", 0)
    monkeypatch.setattr(ties, "TIES_MIN_ROWS", 0)
    monkeypatch.setattr(ties, "MIN_ROWS", 0)
    monkeypatch.setattr(ties, "RARE_ROWS", 0)  # small corpora: every word would be "rare"


async def test_the_contribution_is_the_statement_arithmetic_to_the_bit(storage):
    # Rows without session context: each held word's part is its largest (tf 1), so a row's
    # score is exactly the sum of `contribution` over its words, in statement order.
    rng = random.Random(7)
    words = [f"w{i}" for i in range(30)]
    await storage.insert_memories([
        mem("ns", " ".join(rng.choices(words, weights=[1 / (k + 1) for k in range(30)],
                                       k=rng.randint(1, 14))), minutes=i) for i in range(300)])
    async with storage.pool.acquire() as con:
        for query in (["w0"], ["w1", "w2"], ["w3", "w0", "w22", "w29", "w5"], words[:9]):
            prepared = await fulltext._prepare(con, "ns", query, 500)
            scoring, weighed, _ = prepared
            order = fulltext.in_statement_order(weighed)
            rows = {r["id"]: r for r in await con.fetch(
                "SELECT id, len, tsv FROM fulltext WHERE namespace = 'ns'")}
            hits = await scoring.run(0.0)
            assert hits
            for h in hits:
                held = {x["lexeme"] for x in await con.fetch(
                    "SELECT lexeme FROM unnest($1::tsvector)", rows[h.id]["tsv"])}
                total = None
                for t in order:
                    v = (fulltext.contribution(t, rows[h.id]["len"], scoring.params[0])
                         if t.lexeme in held else 0.0)
                    total = v if total is None else total + v
                assert total == h.score, (query, h)


async def test_a_tied_class_is_read_newest_first_and_answers_exactly(storage, monkeypatch):
    # One template (same words, same length: one score) holds most rows; a few rows of the
    # same words are shorter (they must come first), a rare word tops them all, and rows of
    # several other shapes share some of the words.
    _newest_first_everywhere(monkeypatch)
    rng = random.Random(31)
    rows = []
    for i in range(1500):
        kind = rng.random()
        if kind < 0.6:
            text = f"the alpha budget was raised to n{rng.randint(0, 99)} thousand q{i % 4}"
        elif kind < 0.63:
            text = "alpha budget cut"  # shorter: scores above the class
        elif kind < 0.8:
            text = f"budget review with p{rng.randint(0, 300)} on day{i % 7} and more words"
        else:
            text = f"alpha x{rng.randint(0, 500)} y{rng.randint(0, 50)} notes"
        rows.append(mem("ns", text, minutes=i // 3))  # equal created_at: seq breaks ties
    rows.append(mem("ns", "alpha zeta budget", minutes=-5))
    await storage.insert_memories(rows)
    for limit in (5, 10, 50, 200):
        for q in (["alpha", "budget"], ["alpha", "budget", "zeta"], ["budget", "alpha", "x3"],
                  ["raised", "budget"], ["alpha", "thousand", "budget", "q1"]):
            await _same_as_plain(storage, "ns", q, limit)
    assert any("newest first" in k for k in storage.fulltext.plans), storage.fulltext.plans
    assert storage.fulltext.empty_scans  # the length-bounded proofs found nothing


async def test_length_bounded_scans_find_exactly_those_words_at_those_lengths(storage):
    # ties.at_length: rows holding every word at one length, through fulltext_at_len (the
    # index holds 'word n' tokens), equal to the plain filter on the words and the length;
    # another namespace's rows of the same words never enter a scoped scan.
    rng = random.Random(11)
    words = ["alpha", "budget", "gamma", "delta"]
    await storage.insert_memories(
        [mem(ns, " ".join(rng.choices(words + [f"z{i}" for i in range(40)],
                                      k=rng.randint(1, 9))), minutes=i)
         for i in range(400) for ns in ("ns",) + (("other",) if i % 3 == 0 else ())])
    terms = [fulltext.Term(w, 1, 1.0, True, False, 1.0) for w in words]
    async with storage.pool.acquire() as con:
        scope = await con.fetchval("SELECT recall_ft_scope('ns')")
        await con.execute("SET enable_seqscan = off")
        found = 0
        for held in ([0], [0, 1], [1, 2, 3]):
            for n in range(1, 8):
                query = ties.at_length(terms, held, [scope], n)
                sql = ("SELECT id FROM fulltext f WHERE recall_ft_at_len(f.tsv, f.len) @@ $1"
                       "::tsquery")
                plan = "\n".join(r[0] for r in await con.fetch("EXPLAIN " + sql, query))
                assert "fulltext_at_len" in plan, plan
                got = {r["id"] for r in await con.fetch(sql, query)}
                want = {r["id"] for r in await con.fetch(
                    "SELECT id FROM fulltext WHERE namespace = 'ns' AND len = $1 "
                    "AND tsv @@ $2::tsquery", n, fulltext.set_query(terms, held))}
                assert got == want, (held, n)
                found += len(want)
        await con.execute("RESET enable_seqscan")
    assert found > 20, found  # not vacuous


async def test_a_sparse_tied_class_is_read_deeper_and_answers_exactly(storage, monkeypatch):
    # The tied class is a tenth of the rows, and each of its words is in a fifth more: the
    # newest SCAN_ROWS hold fewer of the class than the answer needs (though the words' own
    # rows promised enough), so step 1 reads deeper (ties.deeper_scan) instead of scoring
    # the whole class; the answer is still exactly the plain query's.
    _newest_first_everywhere(monkeypatch)
    monkeypatch.setattr(ties, "SCAN_ROWS", 100)
    rng = random.Random(5)
    rows = []
    for i in range(1500):
        kind = rng.random()
        if kind < 0.1:
            text = f"alpha budget was raised q{i % 4}"  # one length: one score
        elif kind < 0.5:
            text = f"{'alpha' if kind < 0.3 else 'budget'} {rng.randint(0, 900)} of x{i % 70}"
        else:
            text = f"note {rng.randint(0, 900)} about x{rng.randint(0, 300)} and y{i % 50}"
        rows.append(mem("ns", text, minutes=i // 3))
    rows.append(mem("ns", "alpha budget cut", minutes=-5))  # old and shorter: on top
    await storage.insert_memories(rows)
    for limit in (10, 20):
        await _same_as_plain(storage, "ns", ["alpha", "budget"], limit)
    assert any("newest first, read deeper" in k for k in storage.fulltext.plans), (
        storage.fulltext.plans)


async def test_a_write_after_a_remembered_empty_scan_is_seen(storage, monkeypatch):
    # The empty length-bounded scan is remembered for the namespace's version; a write that
    # adds a shorter (hence higher) row of the tied words, older than every other row (so
    # the newest-first prefix never sees it), must be found by the next search.
    _newest_first_everywhere(monkeypatch)
    await storage.insert_memories([
        mem("ns", f"alpha budget raised to n{i % 50} thousand", minutes=i) for i in range(400)]
        + [mem("ns", f"other words {i}") for i in range(50)])
    await _same_as_plain(storage, "ns", ["alpha", "budget"], 10)
    assert storage.fulltext.empty_scans
    short = mem("ns", "alpha budget", minutes=-100)
    await storage.insert_memories([short])
    hits = await storage.fulltext.search(storage.pool, "ns", ["alpha", "budget"], 10)
    assert hits[0].id == short.id
    await _same_as_plain(storage, "ns", ["alpha", "budget"], 10)


TIE_WORDS = ["alpha", "beta", "gamma", "delta", "budget", "rec", "ticket", "ünï", "x9", "team"]
TIE_PLANS: Counter = Counter()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(30, 400), templates=st.integers(1, 5),
       with_context=st.floats(0, 0.5), deleted=st.floats(0, 0.2), limit=st.integers(1, 30),
       scan_rows=st.integers(1, 300), prefix_rows=st.integers(1, 40),
       overflow=st.integers(0, 5), max_lengths=st.integers(1, 16),
       rest_max=st.sampled_from([0, 50, 10**9]), rare_rows=st.sampled_from([0, 10, 10**9]),
       max_scan=st.sampled_from([0, 600, 10**9]), cost_ratio=st.sampled_from([1, 12, 10**6]),
       cached=st.booleans(),
       targets=st.sampled_from([levels.TARGETS, (0.01, 0.05, 0.2), (0.1, 1.0)]))
async def test_newest_first_equals_the_plain_query_on_random_templated_corpora(
        storage, seed, n, templates, with_context, deleted, limit, scan_rows, prefix_rows,
        overflow, max_lengths, rest_max, rare_rows, max_scan, cost_ratio, cached, targets):
    # Rows from a few templates (fixed words and length: big tied classes), some with one
    # word more or less, free words, contexts, equal created_at, deletes; queries of the
    # templates' words plus random ones. Every threshold of ties.py is drawn.
    rng = random.Random(seed)
    shapes = [rng.sample(TIE_WORDS, rng.randint(1, 4)) for _ in range(templates)]
    ns = f"h{seed}-{n}"
    mp = pytest.MonkeyPatch()
    _newest_first_everywhere(mp)
    for name, value in (("SCAN_ROWS", scan_rows), ("PREFIX_ROWS", prefix_rows),
                        ("TIE_OVERFLOW", overflow), ("MAX_LENGTHS", max_lengths),
                        ("REST_MAX_ROWS", rest_max), ("RARE_ROWS", rare_rows),
                        ("MAX_SCAN_ROWS", max_scan), ("SCAN_COST_RATIO", cost_ratio)):
        mp.setattr(ties, name, value)
    mp.setattr(levels, "TARGETS", targets)
    if not cached:
        storage.fulltext.empty_scans = None  # type: ignore[assignment]
    try:
        mems = []
        for i in range(n):
            words = list(rng.choice(shapes))
            if rng.random() < 0.2:
                words.append(rng.choice(TIE_WORDS))
            if rng.random() < 0.2 and len(words) > 1:
                words.pop(rng.randrange(len(words)))
            words += [f"f{rng.randint(0, 5)}"] * rng.randint(0, 2) + ["pad"] * rng.randint(0, 1)
            m = mem(ns, " ".join(words), minutes=rng.randint(0, n // 3))
            if rng.random() < with_context:
                m.context = " ".join(rng.choices(TIE_WORDS, k=rng.randint(1, 3)))
            mems.append(m)
        await storage.insert_memories(mems)
        for m in mems:
            if rng.random() < deleted:
                await delete(storage, ns, m.id)
        for _ in range(6):
            q = list(rng.choice(shapes)) + rng.choices(TIE_WORDS + ["f1"], k=rng.randint(0, 2))
            await _same_as_plain(storage, ns, q, limit)
        TIE_PLANS.update(storage.fulltext.plans)
    finally:
        mp.undo()
        storage.fulltext.empty_scans = {}


def test_the_templated_corpora_were_read_newest_first(pg_url) -> None:
    # (runs after the property test, in file order; it needs the server that test needs, so
    # without RECALL_TEST_PG_URL both skip instead of this one failing on nothing read)
    assert sum(v for k, v in TIE_PLANS.items() if "newest first" in k) >= 20, TIE_PLANS


async def test_a_released_connection_is_not_sent_the_session_reset(storage):
    # The pool's release runs no reset statement (storage._keep_session): the backend's
    # last statement is still the caller's.
    async with storage.pool.acquire() as con:
        pid = await con.fetchval("SELECT pg_backend_pid() AS kept_after_release")
    other = await asyncpg.connect(storage.url)
    try:
        last = await other.fetchval("SELECT query FROM pg_stat_activity WHERE pid = $1", pid)
    finally:
        await other.close()
    assert "kept_after_release" in last, last

