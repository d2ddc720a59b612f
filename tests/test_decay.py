"""Importance decay: a pure function of stored timestamps, applied by a job that never
compounds, on both storage backends; the worker runs it; the documented env names work."""

from __future__ import annotations

import asyncio
import math
import time
from datetime import datetime, timedelta, timezone

import pytest

from recall_core.config import load_config
from recall_core.jobs.decay import decayed_importance, plan_decay, run_decay
from recall_core.models import Memory, Operation, utcnow
from recall_core.contracts import DecayRow
from recall_core.jobs.worker import Worker
from recall_sqlite import SQLiteSettings, make_storage
from recall_testkit.serverproc import Agent, ServerProcess
from recall_core.testing.helpers import supersede, complete_job

# Fresh Postgres schemas for the "postgres" param (skipped unless RECALL_TEST_PG_URL is set).
try:
    from recall_testkit.postgres import db_url, pg_scratch, pg_url, schemas  # noqa: F401
except ImportError as exc:  # recall-postgres not installed
    _missing = str(exc)

    @pytest.fixture
    def db_url():
        pytest.skip(f"recall-postgres is not installed ({_missing})")

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
RATE = 0.0198  # the default: ln 2 / 35 days
HALF_LIFE = math.log(2) / RATE  # 35.0 days


def days(n: float) -> datetime:
    return T0 + timedelta(days=n)


# -- the pure function --------------------------------------------------------------------
def test_default_rate_halves_an_untouched_memory_in_35_days():
    assert HALF_LIFE == pytest.approx(35.0, abs=0.01)
    assert load_config(None).decay.rate == RATE
    assert decayed_importance(0.8, T0, None, 0, days(0), RATE) == 0.8
    assert decayed_importance(0.8, T0, None, 0, days(35), RATE) == pytest.approx(0.4, abs=1e-3)
    assert decayed_importance(0.8, T0, None, 0, days(70), RATE) == pytest.approx(0.2, abs=1e-3)


def test_access_count_divides_the_rate_and_the_last_access_restarts_the_clock():
    # read 4 times: five times slower (half-life 175 days), counted from the last read
    slow = decayed_importance(0.8, T0, days(10), 4, days(10 + 175), RATE)
    assert slow == pytest.approx(0.4, abs=1e-3)
    assert decayed_importance(0.8, T0, days(10), 4, days(10), RATE) == 0.8
    once = decayed_importance(0.8, T0, days(10), 1, days(45), RATE)
    never = decayed_importance(0.8, T0, None, 0, days(45), RATE)
    assert once == pytest.approx(0.8 * math.exp(-RATE * 35 / 2)) and once > never
    more = [decayed_importance(0.8, T0, days(10), n, days(100), RATE) for n in range(6)]
    assert more == sorted(more) and len(set(more)) == 6


def test_edge_cases_stay_within_base_and_0_1():
    assert decayed_importance(0.8, T0, None, 0, days(-5), RATE) == 0.8  # clock behind: no rise
    assert decayed_importance(0.8, T0, days(-3), 0, days(1), RATE) == \
        decayed_importance(0.8, T0, None, 0, days(1), RATE)  # access before creation: creation
    assert decayed_importance(0.8, T0, None, 0, days(10_000), RATE) == pytest.approx(0.0)
    assert decayed_importance(0.5, T0, None, 0, days(100), 0.0) == 0.5  # rate 0: no decay
    assert decayed_importance(1.0, T0, None, -3, days(1), RATE) <= 1.0


def test_plan_skips_rows_already_at_their_value():
    fresh = DecayRow("ns", "a", 0.8, 0.8, T0, None, 0)
    old = DecayRow("ns", "b", 0.8, 0.8, days(-35), None, 0)
    restored = DecayRow("ns", "c", 0.8, 0.1, T0, days(0), 3)  # just read: back to base
    plan = plan_decay([fresh, old, restored], days(0), RATE)
    assert [(ns, i) for ns, i, _ in plan] == [("ns", "b"), ("ns", "c")]
    assert plan[0][2] == pytest.approx(0.4, abs=1e-3) and plan[1][2] == 0.8


# -- the job, on both backends ---------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgres"])
def backend_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return request.getfixturevalue("db_url")  # a fresh Postgres schema, or a skip


@pytest.fixture
async def storage(backend_url):
    if backend_url.startswith("sqlite"):
        s = make_storage(backend_url, SQLiteSettings())
    else:
        from recall_postgres import PostgresSettings, PostgresStorage

        s = PostgresStorage(backend_url, PostgresSettings())
    await s.open()
    yield s
    await s.close()


def mem(ns: str, text: str, importance: float = 0.8, created: float = 0, **kw) -> Memory:
    return Memory(namespace=ns, text=text, importance=importance, created_at=days(created),
                  valid_from=days(created), **kw)


async def importances(storage, ns: str) -> dict[str, float]:
    rows, _ = await storage.list_memories(ns, 1000, 0)
    return {m.text: m.importance for m in rows}


async def test_run_decay_is_a_pure_function_of_timestamps_and_never_compounds(storage):
    await storage.insert_memories([mem("a", "untouched"), mem("a", "young", created=30),
                                   mem("b", "read often", importance=0.6)])
    read = (await storage.list_memories("b", 10, 0))[0][0]
    for _ in range(4):
        await storage.record_access("b", [read.id], days(5))

    first = await run_decay(storage, RATE, days(35), page=2)
    assert (first.scanned, first.updated) == (3, 3)
    a, b = await importances(storage, "a"), await importances(storage, "b")
    assert a["untouched"] == pytest.approx(0.4, abs=1e-3)
    assert a["young"] == pytest.approx(0.8 * math.exp(-RATE * 5))
    assert b["read often"] == pytest.approx(0.6 * math.exp(-RATE * 30 / 5))

    # the same clock again: nothing to do, nothing changes
    again = await run_decay(storage, RATE, days(35), page=2)
    assert again.updated == 0 and await importances(storage, "a") == a

    # 70 days: a quarter of the base, not (half of half) of the half already applied
    await run_decay(storage, RATE, days(70))
    assert (await importances(storage, "a"))["untouched"] == pytest.approx(0.2, abs=1e-3)
    # a long pause or a clock set back recomputes from the base, it never drifts
    await run_decay(storage, RATE, days(35))
    assert (await importances(storage, "a"))["untouched"] == pytest.approx(0.4, abs=1e-3)


async def test_reading_or_restating_a_memory_brings_its_importance_back(storage):
    m = mem("a", "the user's editor is vim", entity="user", attribute="editor", value="vim")
    await storage.insert_memories([m])
    await run_decay(storage, RATE, days(70))
    assert (await importances(storage, "a"))[m.text] == pytest.approx(0.2, abs=1e-3)

    await storage.record_access("a", [m.id], days(70))  # a search returned it
    await run_decay(storage, RATE, days(70))
    assert (await importances(storage, "a"))[m.text] == 0.8

    await run_decay(storage, RATE, days(70 + 2 * HALF_LIFE))  # one access: half the rate
    assert (await importances(storage, "a"))[m.text] == pytest.approx(0.4, abs=1e-3)

    # "I use vim" stated again: the refresh restores the base importance at once
    op, _ = await storage.enqueue(Operation(namespace="a", idempotency_key="again"))
    claimed = await storage.claim_job(60)
    assert await complete_job(storage, op, claimed.attempts, [], refresh=[(m.id, 0.5)])
    assert (await importances(storage, "a"))[m.text] == 0.8


async def test_superseded_memories_are_left_alone(storage):
    old, new = mem("a", "the user lives in Rome"), mem("a", "the user lives in Oslo")
    await storage.insert_memories([old, new])
    await supersede(storage, "a", [old.id], days(1), [])
    report = await run_decay(storage, RATE, days(35))
    assert report.scanned == 1
    history = [m async for m in storage.iter_memories("a", active_only=False)]
    assert {m.text: m.importance for m in history}["the user lives in Rome"] == 0.8


async def test_many_memories_in_pages(storage):
    await storage.insert_memories([mem(f"ns{i % 3}", f"memory {i}", created=-i)
                                   for i in range(1234)])
    started = time.perf_counter()
    report = await run_decay(storage, RATE, days(0), page=500)
    elapsed = time.perf_counter() - started
    assert report.scanned == 1234 and report.updated == 1233  # memory 0 is brand new
    got = {}
    for ns in ("ns0", "ns1", "ns2"):
        got.update(await importances(storage, ns))
    for i in (0, 1, 35, 700, 1233):
        assert got[f"memory {i}"] == pytest.approx(0.8 * math.exp(-RATE * i), abs=1e-9)
    assert elapsed < 20


async def test_a_pass_waits_before_each_page(storage):
    # The worker passes its give-way wait here, so tool calls go first between pages.
    await storage.insert_memories([mem("a", f"memory {i}", created=-i) for i in range(1100)])
    waits = []

    async def before_page():
        waits.append(len(waits))

    report = await run_decay(storage, RATE, days(0), page=500, before_page=before_page)
    assert report.scanned == 1100 and len(waits) == 3  # pages of 500, 500, 100


# -- wiring: worker loop and env names -------------------------------------------------
async def test_worker_runs_decay_every_interval_and_stops_cleanly(tmp_path):
    storage = make_storage(f"sqlite:///{tmp_path / 'r.db'}", SQLiteSettings())
    await storage.open()
    try:
        await storage.insert_memories([mem("a", "untouched")])
        config = load_config(None, db=str(tmp_path / "r.db"))
        config.worker.concurrency = 0
        config.decay.interval = 0.05
        config.retention.interval = 0
        clock = [days(35)]
        worker = Worker(storage, None, None, config)  # type: ignore[arg-type]
        worker.clock = lambda: clock[0]
        await worker.start()
        assert [t.get_name() for t in worker._tasks] == ["recall-decay"]

        async def settled(want: float) -> None:
            deadline = time.monotonic() + 10
            while abs((await importances(storage, "a"))["untouched"] - want) > 1e-3:
                assert time.monotonic() < deadline, await importances(storage, "a")
                await asyncio.sleep(0.02)

        await settled(0.4)
        clock[0] = days(70)
        await settled(0.2)
        await worker.stop()
        assert worker._tasks == []
        clock[0] = days(140)
        await asyncio.sleep(0.2)
        assert (await importances(storage, "a"))["untouched"] == pytest.approx(0.2, abs=1e-3)
    finally:
        await storage.close()


async def test_interval_zero_disables_the_job(tmp_path):
    storage = make_storage(f"sqlite:///{tmp_path / 'r.db'}", SQLiteSettings())
    await storage.open()
    try:
        config = load_config(None)
        config.worker.concurrency = 0
        config.decay.interval = 0
        config.retention.interval = 0
        worker = Worker(storage, None, None, config)  # type: ignore[arg-type]
        await worker.start()
        assert worker._tasks == []
        await worker.stop()
    finally:
        await storage.close()


def test_documented_env_names(monkeypatch, tmp_path):
    monkeypatch.setenv("RECALL_DECAY_JOB_INTERVAL", "120")
    monkeypatch.setenv("RECALL_DECAY_LAMBDA", "0.05")
    cfg = load_config(None)
    assert (cfg.decay.interval, cfg.decay.rate) == (120.0, 0.05)
    # the nested names still work, and win when both are set; flags/toml rank as usual
    monkeypatch.setenv("RECALL_DECAY__RATE", "0.07")
    assert load_config(None).decay.rate == 0.07
    monkeypatch.delenv("RECALL_DECAY__RATE")
    toml = tmp_path / "recall.toml"
    toml.write_text("[decay]\ninterval = 5\nrate = 0.01\n")
    assert (load_config(toml).decay.interval, load_config(toml).decay.rate) == (120.0, 0.05)
    monkeypatch.delenv("RECALL_DECAY_JOB_INTERVAL")
    monkeypatch.delenv("RECALL_DECAY_LAMBDA")
    assert (load_config(toml).decay.interval, load_config(toml).decay.rate) == (5.0, 0.01)
    import os
    assert "RECALL_DECAY__INTERVAL" not in os.environ  # the alias leaves no trace
    monkeypatch.setenv("RECALL_DECAY_LAMBDA", "fast")
    from recall_core.errors import ConfigError
    with pytest.raises(ConfigError, match="RECALL_DECAY_LAMBDA"):
        load_config(None)


async def test_real_server_decays_with_the_documented_env_names(tmp_path):
    """`recall serve` with RECALL_DECAY_JOB_INTERVAL / RECALL_DECAY_LAMBDA: a memory last
    touched 70 days ago loses importance by the configured half-life (70 days here)."""
    from recall_core.server.auth import create_token

    db = str(tmp_path / "r.db")
    seeded = make_storage(f"sqlite:///{db}", SQLiteSettings())
    await seeded.open()
    old = utcnow() - timedelta(days=70)
    await seeded.insert_memories([
        Memory(namespace="ops", text="The staging database lives on host db7.", topic="ops",
               importance=0.8, created_at=old, valid_from=old),
        Memory(namespace="ops", text="Deploys happen on Tuesdays.", topic="ops", importance=0.8)])
    token = await create_token(seeded, "ops")
    await seeded.close()
    env = {"RECALL_DECAY_JOB_INTERVAL": "0.3", "RECALL_DECAY_LAMBDA": str(math.log(2) / 70)}
    srv = ServerProcess(db, tmp_path, env=env).start()
    try:
        async with Agent(srv.url, token) as a:
            deadline = time.monotonic() + 20
            while True:
                page = await a.ok("inspect_memories")
                got = {m["text"]: m["importance"] for m in page["memories"]}
                if got["The staging database lives on host db7."] < 0.79:
                    break
                assert time.monotonic() < deadline, f"no decay ran: {got}\n{srv.log()}"
                await asyncio.sleep(0.1)
            assert got["The staging database lives on host db7."] == pytest.approx(0.4, abs=2e-3)
            assert got["Deploys happen on Tuesdays."] == pytest.approx(0.8, abs=2e-3)
    finally:
        srv.stop()
