"""Memories, tokens, audit, tasks, isolation and erasure; keyword search on the tsvector."""

from __future__ import annotations

import asyncio
from datetime import timedelta, timezone

from recall_core.models import Memory, ToolCallRecord

from recall_postgres import fulltext

from recall_testkit.pg_rows import T0, mem, op
from recall_core.testing.helpers import supersede, current_of, delete


async def test_round_trip_keeps_every_field_and_returns_aware_utc(storage):
    from datetime import datetime, timedelta as td, timezone as tz
    plus2 = tz(td(hours=2))
    m = Memory(namespace="ns", text="Alice prefers tea", topic="drinks", type="preference",
               entity="alice", attribute="drink", value="tea", importance=0.8,
               valid_from=datetime(2026, 3, 1, 12, 0, tzinfo=plus2),
               created_at=datetime(2026, 3, 1, 10, 0),  # naive = UTC
               last_accessed_at=datetime(2026, 3, 2, tzinfo=timezone.utc), access_count=3,
               session_id="s1", agent_id="a1", source_job_id="j1")
    await storage.insert_memories([m])
    [got] = await storage.get_memories("ns", [m.id])
    assert got.model_dump(exclude={"created_at", "valid_from"}) == m.model_dump(
        exclude={"created_at", "valid_from"})
    assert got.valid_from == m.valid_from and got.valid_from.utcoffset() == timedelta(0)
    assert got.created_at == m.created_at.replace(tzinfo=timezone.utc)
    assert got.created_at.tzinfo is not None


async def test_list_newest_first_with_total_and_paging(storage):
    ms = [mem("ns", f"m{i}", minutes=i) for i in range(7)]
    await storage.insert_memories(ms)
    await storage.insert_memories([mem("other", "x")])
    await supersede(storage, "ns", [ms[0].id], T0, [])
    page, total = await storage.list_memories("ns", 4, 0)
    assert total == 6 and [m.text for m in page] == ["m6", "m5", "m4", "m3"]
    page, total = await storage.list_memories("ns", 4, 4)
    assert [m.text for m in page] == ["m2", "m1"]
    assert (await storage.list_memories("ns", 4, 100)) == ([], 6)


async def test_iter_memories_pages_through_everything_oldest_first(storage):
    ms = [mem("ns", f"m{i}", minutes=i // 3) for i in range(1203)]  # ties on created_at
    await storage.insert_memories(ms)
    await supersede(storage, "ns", [ms[5].id], T0, [])
    seen = [m.id async for m in storage.iter_memories("ns")]
    assert len(seen) == 1202 and len(set(seen)) == 1202 and ms[5].id not in seen
    every = [m async for m in storage.iter_memories("ns", active_only=False)]
    assert len(every) == 1203
    assert [m.created_at for m in every] == sorted(m.created_at for m in every)


async def test_triples_history_supersede_and_delete(storage):
    old = mem("ns", "Bob lives in Paris", entity="bob", attribute="city", value="paris")
    other_ns = mem("x", "Bob lives in Oslo", entity="bob", attribute="city", value="oslo")
    await storage.insert_memories([old, other_ns])
    new = mem("ns", "Bob lives in Rome", minutes=5, entity="bob", attribute="city", value="rome")
    at = T0 + timedelta(minutes=5)
    await supersede(storage, "ns", [old.id], at, [new])
    assert [m.id for m in await current_of(storage, "ns", "bob", "city")] == [new.id]
    hist = await storage.history("ns", "bob", "city")
    assert [m.id for m in hist] == [old.id, new.id] and hist[0].valid_until == at
    assert await storage.get_memories("ns", [old.id, new.id, other_ns.id]) == [
        (await storage.get_memories("ns", [new.id]))[0]]
    assert await delete(storage, "ns", old.id) is False  # superseded: not active
    assert await delete(storage, "x", new.id) is False  # other namespace
    assert await delete(storage, "ns", new.id) is True
    assert await delete(storage, "ns", new.id) is False


async def test_record_access_stats_importance_and_namespace_version(storage):
    a, b = mem("ns", "a", type="fact"), mem("ns", "b", type="decision")
    v0 = await storage.namespace_version("ns")
    await storage.insert_memories([a, b, mem("other", "c")])
    v1 = await storage.namespace_version("ns")
    assert v1 != v0
    at = T0 + timedelta(days=1)
    await asyncio.gather(*[storage.record_access("ns", [a.id, b.id], at) for _ in range(5)],
                         *[storage.record_access("ns", [b.id, a.id], at) for _ in range(5)])
    await storage.record_access("other", [a.id], at)  # wrong namespace: no effect
    got = {m.id: m for m in await storage.get_memories("ns", [a.id, b.id])}
    assert got[a.id].access_count == 10 and got[a.id].last_accessed_at == at
    assert await storage.stats("ns") == {"fact": 1, "decision": 1}
    await storage.update_importance([("ns", a.id, 0.1), ("other", b.id, 0.9)])
    got = {m.id: m for m in await storage.get_memories("ns", [a.id, b.id])}
    assert got[a.id].importance == 0.1 and got[b.id].importance == 0.5
    v2 = await storage.namespace_version("ns")
    await delete(storage, "ns", a.id)
    assert await storage.namespace_version("ns") not in (v1, v2)


async def test_tokens(storage):
    await storage.create_token("ns", "h1")
    await storage.create_token("ns", "h1")  # idempotent
    assert await storage.namespace_for_token("h1") == "ns"
    assert await storage.namespace_for_token("nope") is None
    assert await storage.revoke_token("h1") is True
    assert await storage.revoke_token("h1") is False
    assert await storage.namespace_for_token("h1") is None


async def test_audit_and_tasks_are_namespaced(storage):
    await storage.record_tool_call(ToolCallRecord(tool="store_memory", namespace="ns",
                                                  inputs_hash="abc", status="error",
                                                  code="INVALID_PARAM", duration_ms=1.5))
    await storage.record_tool_call(ToolCallRecord(tool="health", namespace=None,
                                                  inputs_hash="", status="ok", duration_ms=0.1))
    # A batch (core's audit log) is one statement, kept in order.
    await storage.record_tool_calls([
        ToolCallRecord(tool=f"t{i}", namespace="ns" if i % 2 else None, inputs_hash=str(i),
                       status="ok", duration_ms=i / 3, at=T0 + timedelta(seconds=i))
        for i in range(5)])
    await storage.record_tool_calls([])
    rows = await storage.pool.fetch("SELECT tool, status, code FROM tool_call_records ORDER BY id")
    assert [tuple(r) for r in rows] == [("store_memory", "error", "INVALID_PARAM"),
                                        ("health", "ok", None)] + [
                                        (f"t{i}", "ok", None) for i in range(5)]
    last = await storage.pool.fetchrow("SELECT * FROM tool_call_records ORDER BY id DESC LIMIT 1")
    assert (last["namespace"], last["duration_ms"], last["at"]) == (None, 4 / 3,
                                                                    T0 + timedelta(seconds=4))
    await storage.save_task("ns", "t1", {"state": "working", "n": [1, 2]})
    await storage.save_task("ns", "t1", {"state": "completed"})
    await storage.save_task("ns", "t2", {"state": "working"})
    assert await storage.get_task("ns", "t1") == {"state": "completed"}
    assert await storage.get_task("other", "t1") is None
    assert sorted(r.data["state"] for r in (await storage.list_tasks("ns")).rows) == [
        "completed", "working"]
    assert (await storage.list_tasks("other")).rows == []
    await storage.delete_task("other", "t1")
    assert await storage.get_task("ns", "t1") is not None
    await storage.delete_task("ns", "t1")
    assert await storage.get_task("ns", "t1") is None


async def test_delete_namespace_erases_only_that_namespace(storage):
    await storage.insert_memories([mem("ns", "one"), mem("ns", "two"), mem("keep", "three")])
    await supersede(storage, "ns", [], T0, [mem("ns", "four")])
    await storage.create_token("ns", "t-ns-1")
    await storage.create_token("ns", "t-ns-2")
    await storage.revoke_token("t-ns-2")
    await storage.create_token("keep", "t-keep")
    await storage.enqueue(op("ns", "k"))
    await storage.enqueue(op("keep", "k"))
    await storage.save_task("ns", "t", {"a": 1})
    before = await storage.namespace_version("ns")
    erased = await storage.delete_namespace("ns")
    assert (erased.memories, erased.tokens_revoked, erased.tables["api_tokens"]) == (3, 1, 2)
    assert await storage.list_memories("ns", 10, 0) == ([], 0)
    assert await storage.namespace_for_token("t-ns-1") is None
    assert await storage.count_jobs("ns", "queued") == 0
    assert await storage.get_task("ns", "t") is None
    assert await storage.namespace_version("ns") != before
    assert (await storage.list_memories("keep", 10, 0))[1] == 1
    assert await storage.namespace_for_token("t-keep") == "keep"
    assert await storage.count_jobs("keep", "queued") == 1


# -- keyword search ------------------------------------------------------------------------

async def test_fulltext_stems_ranks_and_filters(storage):
    a = mem("ns", "I am running the marathon in Berlin next spring")
    b = mem("ns", "Berlin is a city; Berlin has many runners who run daily", minutes=1)
    c = mem("ns", "Tea with milk, no sugar", minutes=2)
    gone = mem("ns", "Berlin berlin berlin", minutes=3)
    await storage.insert_memories([a, b, c, gone, mem("other", "Berlin marathon")])
    await supersede(storage, "ns", [gone.id], T0, [])
    hits = await storage.search_fulltext("ns", ["berlin", "runs"], 10)
    assert [h.id for h in hits][:2] == [b.id, a.id] or {h.id for h in hits} == {a.id, b.id}
    assert {h.id for h in hits} == {a.id, b.id}
    assert all(h.score > 0 for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)
    assert [h.id for h in await storage.search_fulltext("ns", ["sugar"], 10)] == [c.id]
    assert await storage.search_fulltext("ns", ["absent"], 10) == []
    assert len(await storage.search_fulltext("ns", ["berlin"], 1)) == 1


async def test_fulltext_sees_every_write_immediately(storage):
    m = mem("ns", "the quick brown fox")
    await storage.insert_memories([m])
    assert [h.id for h in await storage.search_fulltext("ns", ["fox"], 5)] == [m.id]
    # The keyword index is written by the storage's own writes, in their transactions.
    new = mem("ns", "a lazy dog", minutes=1)
    await supersede(storage, "ns", [m.id], T0, [new])
    assert await storage.search_fulltext("ns", ["fox"], 5) == []
    assert [h.id for h in await storage.search_fulltext("ns", ["dog"], 5)] == [new.id]
    assert await delete(storage, "ns", new.id)
    assert await storage.search_fulltext("ns", ["dog"], 5) == []


HOSTILE = ["'", "''", "\\", "a & b", "!x", "x | y", "(", ")", "a:*", "<->", "<2>", "&&",
           "' OR 1=1 --", "'); DROP TABLE memories; --", "\x00", "nul\x00byte", "\ud800",
           "ümlaut", "日本語", "🙂", "x" * 5000, " ", "", "the", "a" * 3000 + " b", "$1", "%",
           "::tsquery", "foo:A", "fat & (rat | cat)", "\n\t"]


async def test_fulltext_is_accent_and_case_insensitive_like_core_queries(storage):
    m = mem("ns", "Meeting at the Café in MÜNCHEN with Zoë")
    await storage.insert_memories([m, mem("ns", "nothing here")])
    for terms in (["cafe"], ["café"], ["munchen"], ["München"], ["zoe"], ["CAFES"]):
        assert [h.id for h in await storage.search_fulltext("ns", terms, 5)] == [m.id], terms
    [got] = await storage.get_memories("ns", [m.id])
    assert got.text == m.text  # only the index is folded


async def test_fulltext_hostile_terms_never_raise(storage):
    m = mem("ns", "plain text about rats and cats")
    await storage.insert_memories([m])
    for t in HOSTILE:
        await storage.search_fulltext("ns", [t], 10)
        await storage.search_fulltext("ns", [t, "cats"], 10)
    assert [h.id for h in await storage.search_fulltext("ns", HOSTILE + ["cats"], 10)] == [m.id]
    assert await storage.search_fulltext("ns", [], 10) == []
    assert await storage.search_fulltext("ns", ["cats"] * 500, 10) != []
    assert (await storage.pool.fetchval("SELECT count(*) FROM memories")) == 1


async def test_fulltext_uses_the_gin_index(storage):
    await storage.insert_memories([mem("ns", f"note number {i} about topic{i % 50}")
                                   for i in range(3000)])
    await storage.pool.execute("ANALYZE fulltext")
    terms, avglen = fulltext.weigh([("topic7", 60, 60, 0), ("note", 3000, 3000, 0)], 3000,
                                   15000, 5)
    sql, params = fulltext.scoring_statement(terms, avglen)
    async with storage.pool.acquire() as con, con.transaction():
        # Tiny tables are cheaper to scan; we check the index *can* serve the query shape.
        await con.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in await con.fetch(
            "EXPLAIN " + sql, "ns", ["'topic7' & 'note'", "'topic7'"], 10, *params))
    assert "fulltext_tsv" in plan, plan


async def test_latest_in_session_breaks_ties_by_insertion_order(storage):
    a = mem("ns", "first", session_id="s1")
    b = mem("ns", "second, same instant", session_id="s1")  # a job's memories share created_at
    older = mem("ns", "older", minutes=-5, session_id="s1")
    await storage.insert_memories([a, b, older, mem("ns", "other session", minutes=9, session_id="s2"),
                                   mem("x", "other namespace", minutes=9, session_id="s1")])
    assert (await storage.latest_in_session("ns", "s1")).id == b.id
    await supersede(storage, "ns", [b.id], T0, [])
    assert (await storage.latest_in_session("ns", "s1")).id == a.id
    assert await storage.latest_in_session("ns", "none") is None
    assert await storage.latest_in_session("y", "s1") is None
    # the same tie order everywhere: list newest first, iterate oldest first
    page, _ = await storage.list_memories("ns", 10, 0)
    assert [m.text for m in page] == ["other session", "first", "older"]
    assert [m.text async for m in storage.iter_memories("ns")] == ["older", "first", "other session"]
