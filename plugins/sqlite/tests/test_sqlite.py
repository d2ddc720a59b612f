"""SQLite-specific behaviour the shared contract cannot know about: the file format, WAL,
migrations, several processes on one file, settings, the plugin hook."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

import recall_sqlite
from recall_core.config import RecallConfig, plugin_settings
from recall_core.errors import ConfigError
from recall_core.models import Memory, Operation
from recall_core.testing import registrations
from recall_sqlite.codec import to_db
from recall_sqlite import SQLiteSettings, SQLiteStorage, make_storage, schema
from recall_sqlite.connection import path_from_url
from recall_core.testing.helpers import supersede, delete


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=5)


def run_python(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


# -- file format, WAL, migrations ---------------------------------------------------------
async def test_wal_mode_and_description(storage: SQLiteStorage, db_path: Path) -> None:
    assert raw(db_path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert storage.description == f"sqlite {db_path} (WAL)"


async def test_schema_version_recorded_and_not_rerun(storage: SQLiteStorage, db_path: Path) -> None:
    await storage.close()
    before = raw(db_path).execute("SELECT version, applied_at FROM schema_version").fetchall()
    assert [v for v, _ in before] == [v for v, _ in schema.MIGRATIONS]
    again = make_storage(f"sqlite:///{db_path}")
    await again.open()
    await again.close()
    assert raw(db_path).execute("SELECT version, applied_at FROM schema_version").fetchall() == before


async def test_new_migration_runs_once(storage: SQLiteStorage, db_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    await storage.insert_memories([Memory(namespace="a", text="kept across the upgrade")])
    await storage.close()
    nxt = schema.LATEST + 1
    # CREATE TABLE without IF NOT EXISTS fails if it ever runs twice
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, (nxt, ("CREATE TABLE extra (x)",))))
    for _ in range(2):
        s = make_storage(f"sqlite:///{db_path}")
        await s.open()
        assert [m.text async for m in s.iter_memories("a")] == ["kept across the upgrade"]
        await s.close()
    versions = [r[0] for r in raw(db_path).execute("SELECT version FROM schema_version")]
    assert versions[-1] == nxt and versions.count(nxt) == 1


async def test_a_version_3_file_is_reindexed_for_length_free_scores(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Files written before migration 4 keep their memories searchable: the full-text index is
    # rebuilt (columnsize=0 plus the pad column) from the active rows.
    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:3])
        old = make_storage(f"sqlite:///{db_path}")
        await old.open()
        await old.close()
    # Rows as a version-3 file holds them (today's insert writes columns v3 lacks).
    kept = Memory(namespace="a", text="the heron nests by the river", context="birds?")
    gone = Memory(namespace="a", text="the heron moved away")
    conn = raw(db_path)
    for m, until in ((kept, None), (gone, gone.created_at)):
        conn.execute(
            "INSERT INTO memories (id, namespace, text, topic, type, importance, valid_from, "
            "valid_until, created_at, access_count, context) VALUES (?, ?, ?, '', 'fact', 0.5, "
            "?, ?, ?, 0, ?)", (m.id, m.namespace, m.text, to_db(m.valid_from), to_db(until),
                               to_db(m.created_at), m.context))
    conn.commit()
    conn.close()
    new = make_storage(f"sqlite:///{db_path}")
    await new.open()
    try:
        assert [h.id for h in await new.search_fulltext("a", ["heron"], 5)] == [kept.id]
        assert [h.id for h in await new.search_fulltext("a", ["birds"], 5)] == [kept.id]
    finally:
        await new.close()
    conn = raw(db_path)
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    assert conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == schema.LATEST
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'memories_fts_docsize'"
                        ).fetchone()[0] == 0


async def test_failed_migration_changes_nothing(storage: SQLiteStorage, db_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    await storage.close()
    nxt = schema.LATEST + 1
    broken = (nxt, ("CREATE TABLE half (x)", "THIS IS NOT SQL"))
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, broken))
    s = make_storage(f"sqlite:///{db_path}")
    with pytest.raises(sqlite3.OperationalError):
        await s.open()
    conn = raw(db_path)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half'").fetchone()[0] == 0
    assert conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == schema.LATEST


def test_processes_opening_a_new_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    code = """
        import asyncio, sys
        from recall_sqlite import make_storage
        async def main():
            s = make_storage("sqlite:///" + sys.argv[1])
            await s.open()
            await s.create_token("ns", "hash-" + sys.argv[2])
            await s.close()
        asyncio.run(main())
    """
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(db), str(i)],
                              stderr=subprocess.PIPE, text=True) for i in range(4)]
    for p in procs:
        assert p.wait(timeout=60) == 0, p.stderr.read() if p.stderr else ""
    conn = raw(db)
    assert conn.execute("SELECT count(*) FROM schema_version").fetchone()[0] == len(schema.MIGRATIONS)
    assert conn.execute("SELECT count(*) FROM api_tokens").fetchone()[0] == 4


async def test_datetimes_are_sortable_utc_text(storage: SQLiteStorage, db_path: Path) -> None:
    op, _ = await storage.enqueue(Operation(namespace="a", idempotency_key="k"))
    text = raw(db_path).execute("SELECT created_at FROM operations").fetchone()[0]
    assert text == op.created_at.isoformat(timespec="microseconds") and text.endswith("+00:00")


# -- several connections and processes ----------------------------------------------------
async def test_data_persists_and_another_process_sees_it(storage: SQLiteStorage, db_path: Path) -> None:
    m = Memory(namespace="a", text="remember the milk", embedding=[1.0, 0.0])
    await storage.insert_memories([m])
    op, _ = await storage.enqueue(Operation(namespace="a", idempotency_key="k", payload={"x": 1}))
    out = run_python("""
        import asyncio, json, sys
        from recall_sqlite import make_storage
        async def main():
            s = make_storage("sqlite:///" + sys.argv[1])
            await s.open()
            got = await s.get_memories("a", [sys.argv[2]])
            hits = await s.search_fulltext("a", ["milk"], 5)
            op = await s.get_operation("a", sys.argv[3])
            await s.create_token("a", "from-child")
            print(json.dumps([got[0].text, [h.id for h in hits], op.payload]))
            await s.close()
        asyncio.run(main())
    """, str(db_path), m.id, op.id)
    assert json.loads(out) == ["remember the milk", [m.id], {"x": 1}]
    assert await storage.namespace_for_token("from-child") == "a"
    # and the child's vector write path: our index sees changes made by another process
    assert [h.id for h in await storage.search_vectors("a", [1.0, 0.0], 5)] == [m.id]
    run_python("""
        import asyncio, sys
        from recall_core.models import Memory
        from recall_sqlite import make_storage
        async def main():
            s = make_storage("sqlite:///" + sys.argv[1])
            await s.open()
            await s.insert_memories([Memory(id="child", namespace="a", text="x", embedding=[1.0, 0.1])])
            from recall_core.testing.helpers import delete
            await delete(s, "a", sys.argv[2])
            await s.close()
        asyncio.run(main())
    """, str(db_path), m.id)
    assert [h.id for h in await storage.search_vectors("a", [1.0, 0.0], 5)] == ["child"]


async def test_writer_waits_for_another_connection_lock(storage: SQLiteStorage, db_path: Path) -> None:
    other = raw(db_path)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO api_tokens (token_hash, namespace, created_at) "
                  "VALUES ('uncommitted', 'a', 'now')")
    loop = asyncio.get_running_loop()
    loop.call_later(0.3, other.execute, "COMMIT")
    start = time.perf_counter()
    # reads are never blocked by the writer (WAL) and never see uncommitted rows
    assert await storage.namespace_for_token("uncommitted") is None
    assert await storage.claim_job(60) is None  # an idle poll does not need the write lock
    assert time.perf_counter() - start < 0.25
    _, created = await storage.enqueue(Operation(namespace="a", idempotency_key="k"))
    assert created and time.perf_counter() - start >= 0.25
    assert await storage.namespace_for_token("uncommitted") == "a"


async def test_busy_timeout_setting_applies(db_path: Path) -> None:
    s = make_storage(f"sqlite:///{db_path}", {"busy_timeout_ms": 50})
    await s.open()
    try:
        other = raw(db_path)
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await s.enqueue(Operation(namespace="a", idempotency_key="k"))
        other.execute("ROLLBACK")
        assert (await s.enqueue(Operation(namespace="a", idempotency_key="k")))[1] is True
    finally:
        await s.close()


async def test_enqueue_ack_is_fast(storage: SQLiteStorage) -> None:
    samples = []
    for i in range(200):
        start = time.perf_counter()
        await storage.enqueue(Operation(namespace="a", idempotency_key=f"k{i}", payload={"text": "x" * 2000}))
        samples.append(time.perf_counter() - start)
    samples.sort()
    assert samples[len(samples) // 2] < 0.005, f"median enqueue {samples[100] * 1000:.2f} ms"


async def test_cancelled_write_leaves_no_open_transaction(storage: SQLiteStorage) -> None:
    expected = 0
    for delay in (None, 0, 0.001, 0.005, 0.02):
        rows = [Memory(namespace="a", text=f"row {i}") for i in range(3000)]
        task = asyncio.create_task(storage.insert_memories(rows))
        if delay is not None:
            await asyncio.sleep(delay)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        _, total = await storage.list_memories("a", 1, 0)
        assert total in (expected, expected + 3000)  # all or nothing
        expected = total
        await storage.insert_memories([Memory(namespace="a", text="after")])
        expected += 1
        assert (await storage.list_memories("a", 1, 0))[1] == expected


@pytest.mark.parametrize("readers", [1, 3])
async def test_a_quick_read_does_not_queue_behind_a_slow_one(db_path: Path, readers: int) -> None:
    # Each connection runs its statements in order on its own thread; with one reader a token
    # check waited for whatever the worker was reading (store ack p50 33 ms at 100k memories).
    storage = make_storage(f"sqlite:///{db_path}", SQLiteSettings(readers=readers))
    await storage.open()
    try:
        slow = asyncio.create_task(storage.db.fetch(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000) "
            "SELECT count(*) FROM c"))
        await asyncio.sleep(0.05)
        assert await storage.namespace_for_token("no such hash") is None
        # answered while the slow read still runs, unless both had to share one connection
        assert slow.done() is (readers == 1)
        assert (await slow)[0][0] == 5000000
    finally:
        await storage.close()


async def test_not_opened_is_a_clear_error(db_path: Path) -> None:
    s = make_storage(f"sqlite:///{db_path}")
    with pytest.raises(RuntimeError, match="open"):
        await s.enqueue(Operation(namespace="a", idempotency_key="k"))


# -- full text specifics ------------------------------------------------------------------
async def test_fulltext_isolation_and_ranking(storage: SQLiteStorage) -> None:
    # B's rows outrank all of A's (the term twice); A must still get its own best 5.
    await storage.insert_memories([Memory(namespace="b", text="zebra zebra") for _ in range(1500)])
    mine = [Memory(namespace="a", text="zebra " + " ".join(["filler"] * i)) for i in range(1, 11)]
    old = Memory(namespace="a", text="zebra")
    await storage.insert_memories(mine)
    await storage.insert_memories([old])
    await supersede(storage, "a", [old.id], old.created_at, [])
    hits = await storage.search_fulltext("a", ["zebra"], 5)
    # Scores ignore length, so A's rows tie: the newest go first (the superseded one is gone).
    assert [h.id for h in hits] == [m.id for m in mine[::-1][:5]]
    assert len({h.score for h in hits}) == 1
    assert len(await storage.search_fulltext("b", ["zebra"], 2000)) == 1500
    for term in ("NOT", '"', "ns", "text:zebra", "*"):
        hits = await storage.search_fulltext("a", [term, "zebra"], 20)
        assert sorted(h.id for h in hits) == sorted(m.id for m in mine), term


async def test_fulltext_text_hits_outrank_context_hits_however_short_the_memories(
        storage: SQLiteStorage) -> None:
    # Scores ignore length; FTS5 then saturates a term by k1 * (1 - b - b * columns / avgdl),
    # which turns negative for short rows unless the pad column keeps avgdl up (migration 4):
    # a one-word context hit would then outscore a one-word text hit.
    await storage.insert_memories([Memory(namespace="a", text=f"w{i}") for i in range(300)])
    in_text = Memory(namespace="a", text="kiwi")
    in_context = Memory(namespace="a", text="ok", context="kiwi")
    await storage.insert_memories([in_text, in_context])
    hits = await storage.search_fulltext("a", ["kiwi"], 5)
    assert [h.id for h in hits] == [in_text.id, in_context.id]
    assert hits[0].score > hits[1].score > 0


async def test_fulltext_stems_and_folds_diacritics(storage: SQLiteStorage) -> None:
    run = Memory(namespace="a", text="She runs every morning at the Café Müller")
    await storage.insert_memories([run, Memory(namespace="a", text="unrelated")])
    for term in ("running", "run", "cafe", "café", "muller", "MÜLLER".lower()):
        assert [h.id for h in await storage.search_fulltext("a", [term], 5)] == [run.id], term


async def test_fulltext_namespace_token_is_exact(storage: SQLiteStorage) -> None:
    names = ["a", "ab", "a b", "ns-a", "user:42", "ünï 🚀", "x" * 300, '"quoted" ns', "NOT"]
    for ns in names:
        await storage.insert_memories([Memory(namespace=ns, text=f"shared word for {len(ns)}")])
    for ns in names:
        hits = await storage.search_fulltext(ns, ["shared"], 10)
        assert len(hits) == 1 and (await storage.get_memories(ns, [hits[0].id])), ns


async def test_fulltext_index_stays_consistent_under_churn(storage: SQLiteStorage, db_path: Path) -> None:
    rows = [Memory(namespace=f"n{i % 3}", text=f"churn word{i % 7} item{i}") for i in range(300)]
    await storage.insert_memories(rows)
    for i, m in enumerate(rows):
        if i % 3 == 0:
            await supersede(storage, m.namespace, [m.id], m.created_at,
                                             [Memory(namespace=m.namespace, text=f"churn replaced {i}")])
        elif i % 5 == 0:
            await delete(storage, m.namespace, m.id)
    await storage.delete_namespace("n2")
    conn = raw(db_path)
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    for ns in ("n0", "n1", "n2"):
        active = conn.execute("SELECT count(*) FROM memories WHERE namespace = ? AND valid_until "
                              "IS NULL AND text LIKE 'churn%'", (ns,)).fetchone()[0]
        assert len(await storage.search_fulltext(ns, ["churn"], 1000)) == active
        assert sum((await storage.stats(ns)).values()) == active
    # The per-namespace counts BM25 uses (migration 16) follow every change; an erased
    # namespace keeps no row there.
    docs = dict(conn.execute("SELECT namespace, docs FROM fts_namespaces"))
    assert docs == dict(conn.execute("SELECT namespace, count(*) FROM memories "
                                     "WHERE valid_until IS NULL GROUP BY namespace"))
    assert "n2" not in docs


async def test_fulltext_skips_terms_in_most_of_a_large_namespace(storage: SQLiteStorage) -> None:
    rows = [Memory(namespace="a", text=f"the user said note {i}") for i in range(2100)]
    zebra = Memory(namespace="a", text="the user saw a zebra")
    await storage.insert_memories([*rows, zebra])
    assert [h.id for h in await storage.search_fulltext("a", ["the", "zebra"], 5)] == [zebra.id]
    # every term common: the rarest is kept, so there are still results
    assert len(await storage.search_fulltext("a", ["the", "user"], 5)) == 5
    assert len(await storage.search_fulltext("a", ["the"], 5)) == 5


async def test_fulltext_term_counts_are_refreshed_by_writes(storage: SQLiteStorage) -> None:
    # Term counts are cached per data version. A word that was common and became rare must
    # not keep its old count: its bound would be too low and the split would prune the rows
    # that now lead.
    await storage.insert_memories([Memory(namespace="a", text=f"filler {i}") for i in range(2200)])
    common = [Memory(namespace="a", text=f"common filler{i}") for i in range(1000)]
    await storage.insert_memories(common)
    await storage.insert_memories([Memory(namespace="a", text="rare beta") for _ in range(60)])
    first = await storage.search_fulltext("a", ["rare", "common"], 30)
    assert first and storage._fulltext._hit_cache  # counted and kept
    for m in common[5:]:
        await delete(storage, "a", m.id)
    again = await storage.search_fulltext("a", ["rare", "common"], 30)
    # now the rarer word: its five rows lead
    assert {h.id for h in again[:5]} == {m.id for m in common[:5]}


async def test_near_duplicate_search_scores_only_rows_with_a_rare_term(storage: SQLiteStorage) -> None:
    rows = [Memory(namespace="a", text=f"the team project update number {i % 50}") for i in range(3000)]
    twin = Memory(namespace="a", text="the team project update about Zorblax migration")
    await storage.insert_memories([*rows, twin])
    terms = ["team", "project", "update", "zorblax", "migration"]
    hits = await storage.search_near_duplicates("a", terms, 1, 5)
    assert hits[0].id == twin.id
    assert storage._fulltext.plans["near-duplicates"] == 1
    # only rows holding one of the two rarest terms are candidates: none of the 3000 others
    assert [h.id for h in await storage.search_near_duplicates(
        "a", ["zorblax", "quux", "team"], 1, 5)] == [twin.id]


async def test_get_memories_looks_ids_up_by_the_id_index(storage: SQLiteStorage,
                                                        db_path: Path) -> None:
    # Scanning the namespace instead made a 100-id lookup cost 62 ms at 100k memories.
    from recall_sqlite.codec import by_ids

    await storage.insert_memories([Memory(namespace="a", text=f"row {i}") for i in range(3000)])
    conn = raw(db_path)
    conn.execute("ANALYZE")
    for columns, condition in (("id", "valid_until IS NULL"), ("id", "embedding IS NOT NULL")):
        plan = " ".join(r[3] for r in conn.execute(
            "EXPLAIN QUERY PLAN " + by_ids(columns, condition, 100), ["a", *map(str, range(100))]))
        assert "(id=?)" in plan and "namespace" not in plan, plan


# -- vectors ------------------------------------------------------------------------------
async def test_vector_index_matches_brute_force_under_churn(storage: SQLiteStorage, db_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    import numpy as np

    from recall_sqlite import memories as memories_module
    from recall_sqlite import vectors

    monkeypatch.setattr(vectors, "KEEP_EVENTS", 40)  # force log pruning + reloads
    monkeypatch.setattr(memories_module, "PRUNE_EVERY", 7)
    other = make_storage(f"sqlite:///{db_path}")  # a second writer, as another process would be
    await other.open()
    rng = random.Random(3)
    live: dict[str, list[float]] = {}
    try:
        for step in range(400):
            writer = other if rng.random() < 0.3 else storage
            action = rng.random()
            if action < 0.5 or not live:
                m = Memory(namespace="a", text="v", embedding=[rng.gauss(0, 1) for _ in range(4)])
                await writer.insert_memories([m, Memory(namespace="b", text="v", embedding=m.embedding)])
                live[m.id] = m.embedding  # type: ignore[assignment]
            elif action < 0.65:
                mid = rng.choice(sorted(live))
                await delete(writer, "a", mid)
                del live[mid]
            elif action < 0.8:
                mid = rng.choice(sorted(live))
                await supersede(writer, "a", [mid], Memory(namespace="a", text="").created_at, [])
                del live[mid]
            else:
                mid = rng.choice(sorted(live))
                live[mid] = [rng.gauss(0, 1) for _ in range(4)]
                await writer.set_embeddings("a", [(mid, live[mid])])
            if step % 5 == 0 and not 150 <= step < 250:  # a long gap outlives the log
                q = [rng.gauss(0, 1) for _ in range(4)]
                got = [h.id for h in await storage.search_vectors("a", q, 5)]
                ids = sorted(live)
                mat = np.array([live[i] for i in ids], dtype=np.float32)
                scores = (mat / np.linalg.norm(mat, axis=1, keepdims=True)) @ (np.array(q) / np.linalg.norm(q))
                want = [ids[i] for i in np.argsort(-scores)[:5]]
                assert got == want, step
    finally:
        await other.close()


async def test_vectors_of_another_width_are_ignored(storage: SQLiteStorage) -> None:
    small = Memory(namespace="a", text="old model", embedding=[1.0, 0.0])
    wide = Memory(namespace="a", text="new model", embedding=[1.0, 0.0, 0.0, 0.0])
    await storage.insert_memories([small, wide])
    assert [h.id for h in await storage.search_vectors("a", [1.0, 0.0, 0.0, 0.0], 5)] == [wide.id]
    assert [h.id for h in await storage.search_vectors("a", [1.0, 0.0], 5)] == [small.id]


# -- URL, settings, plugin hook -----------------------------------------------------------
def test_path_from_url() -> None:
    assert path_from_url("sqlite:////var/lib/recall/recall.db") == "/var/lib/recall/recall.db"
    assert path_from_url("sqlite:///relative.db") == "relative.db"
    assert path_from_url("sqlite:///:memory:") == ":memory:"
    assert path_from_url("sqlite:////tmp/x.db?mode=rwc") == "/tmp/x.db"
    for bad in ("postgresql://h/db", "sqlite://host/x.db", "sqlite:///", "/just/a/path"):
        with pytest.raises(ValueError, match="sqlite:////absolute"):
            path_from_url(bad)


async def test_missing_parent_directory_is_an_error_not_created(tmp_path: Path) -> None:
    # A typo'd directory must not silently become a fresh empty database.
    s = make_storage(f"sqlite:///{tmp_path / 'deep' / 'er' / 'recall.db'}")
    with pytest.raises(ConfigError, match="does not exist.*mkdir -p"):
        await s.open()
    assert not (tmp_path / "deep").exists()
    (tmp_path / "deep" / "er").mkdir(parents=True)
    await s.open()
    await s.close()
    assert (tmp_path / "deep" / "er" / "recall.db").exists()


def test_settings_are_typed_and_strict() -> None:
    assert SQLiteSettings().busy_timeout_ms == 5000
    with pytest.raises(ValidationError):
        SQLiteSettings.model_validate({"busy_timeout": 10})
    with pytest.raises(ValidationError):
        SQLiteSettings.model_validate({"synchronous": "SOMETIMES"})
    cfg = RecallConfig(plugins={"sqlite": {"busy_timeout_ms": 100}})
    assert plugin_settings(cfg, "sqlite", SQLiteSettings).busy_timeout_ms == 100
    with pytest.raises(ConfigError, match="busy_timeout_ms"):
        plugin_settings(RecallConfig(plugins={"sqlite": {"typo": 1}}), "sqlite", SQLiteSettings)


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALL_PLUGIN_SQLITE_CACHE_SIZE_KIB", "1024")
    assert plugin_settings(RecallConfig(), "sqlite", SQLiteSettings).cache_size_kib == 1024


def test_register_storage_hook(recall_plugin_manager) -> None:
    pm = recall_plugin_manager
    pm.register(recall_sqlite, name="sqlite-under-test")
    try:
        registry = registrations(pm, "register_storage")
        entry = registry.get("sqlite")
        assert entry.settings is SQLiteSettings
        built = entry.factory("sqlite:////tmp/never-opened.db", SQLiteSettings())
        assert isinstance(built, SQLiteStorage) and built.path == "/tmp/never-opened.db"
    finally:
        pm.unregister(name="sqlite-under-test")


def test_entry_point_is_declared() -> None:
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="recall")}
    assert eps.get("sqlite") == "recall_sqlite"


async def test_a2a_tasks_stored_before_migration_8_are_listed_by_their_keys(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Migration 8 reads context, state and status time out of the documents of tasks stored
    # before ListTasks paged in the database, so those tasks filter and order like new ones.
    from recall_core.testing.helpers import check_tasks_listed_by_keys, tasks_stored_before_task_keys

    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:7])
        old = make_storage(f"sqlite:///{db_path}")
        await old.open()
        await old.close()
    conn = raw(db_path)
    conn.executemany("INSERT INTO a2a_tasks (namespace, task_id, data, created_at, updated_at) "
                     "VALUES ('ns', ?, ?, '2026-11-24', '2026-11-24')",
                     tasks_stored_before_task_keys())
    conn.commit()
    conn.close()
    new = make_storage(f"sqlite:///{db_path}")
    await new.open()
    try:
        await check_tasks_listed_by_keys(new)
    finally:
        await new.close()

async def test_keys_spelt_apart_before_migration_10_are_merged(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Migration 10 spells every stored fact key one way (recall_core.kit.keys.key_form) and
    # merges the keys that meet by the fact rules (the shared check in
    # recall_core.testing.key_migration).
    from recall_core.testing.key_migration import check_merged, write_spelt_apart

    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:9])
        old = make_storage(f"sqlite:///{db_path}")
        await old.open()
        try:
            await write_spelt_apart(old)
        finally:
            await old.close()
    new = make_storage(f"sqlite:///{db_path}")
    await new.open()
    try:
        await check_merged(new)
    finally:
        await new.close()


# -- vectors load in the background above the inline limit (recall_core.kit.vector_loads) --
async def test_vectors_of_a_big_namespace_load_in_the_background(tmp_path):
    from recall_core.testing.vector_loads import background_load_answers_not_ready_then_searches

    s = SQLiteStorage(str(tmp_path / "loads.db"), SQLiteSettings(vector_inline_rows=10))
    await s.open()
    try:
        await background_load_answers_not_ready_then_searches(s)
    finally:
        await s.close()


async def test_vectors_beyond_the_cache_budget_are_never_loaded(tmp_path):
    from recall_core.testing.vector_loads import too_big_for_the_cache_is_refused

    s = SQLiteStorage(str(tmp_path / "big.db"), SQLiteSettings(vector_cache_mb=1))
    await s.open()
    try:
        await too_big_for_the_cache_is_refused(s)
    finally:
        await s.close()


# -- the approximate index (recall_core.kit.ann_index), forced on with a threshold of 0 ------
def _ann_opener(tmp_path):
    def settings() -> SQLiteSettings:
        return SQLiteSettings(vector_ann_min_rows=0, vector_index_dir=str(tmp_path / "ix"))

    async def open_storage() -> SQLiteStorage:
        s = SQLiteStorage(str(tmp_path / "ann.db"), settings())
        await s.open()
        return s
    return open_storage, tmp_path / "ix"


async def test_ann_answers_equal_exact_on_small_data(tmp_path):
    from recall_core.testing.ann_vectors import ann_answers_equal_exact

    await ann_answers_equal_exact(_ann_opener(tmp_path)[0])


async def test_ann_restart_reuses_the_saved_index(tmp_path):
    from recall_core.testing.ann_vectors import restart_reuses_the_saved_index

    await restart_reuses_the_saved_index(*_ann_opener(tmp_path))


async def test_ann_forgotten_vectors_leave_answers_and_file(tmp_path):
    from recall_core.testing.ann_vectors import forgotten_vectors_leave_answers_and_file

    await forgotten_vectors_leave_answers_and_file(*_ann_opener(tmp_path))


async def test_ann_corrupt_file_is_rebuilt(tmp_path):
    from recall_core.testing.ann_vectors import corrupt_or_foreign_file_is_rebuilt

    await corrupt_or_foreign_file_is_rebuilt(*_ann_opener(tmp_path))


async def test_ann_index_is_saved_beside_the_database_by_default(tmp_path):
    from recall_core.testing.ann_vectors import restart_reuses_the_saved_index

    async def open_storage() -> SQLiteStorage:
        s = SQLiteStorage(str(tmp_path / "beside.db"), SQLiteSettings(vector_ann_min_rows=0))
        await s.open()
        return s
    await restart_reuses_the_saved_index(open_storage, tmp_path / "beside.db.vectors")
