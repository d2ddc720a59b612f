"""Background extraction gives way to tool calls (recall_core/activity.py) and is never
starved by them."""

from __future__ import annotations

import asyncio
import time

import recall_extractors
import recall_sqlite
from recall_core.jobs.activity import Activity
from recall_core.server.runtime import build_runtime
from recall_core.config import load_config
from recall_core.plugins import get_plugin_manager


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_idle_time_counts_from_the_end_of_the_last_call():
    clock = FakeClock()
    act = Activity(clock)
    assert act.idle_for() == float("inf")  # nothing ever ran
    with act.call():
        clock.now += 5
        assert act.idle_for() == 0.0  # in flight
        with act.call():
            pass
        assert act.in_flight == 1 and act.idle_for() == 0.0  # the outer one still runs
    clock.now += 0.25
    assert act.in_flight == 0 and act.idle_for() == 0.25


async def test_pause_waits_for_a_gap_and_gives_up_after_max_wait():
    act = Activity()
    assert await act.pause(0.05, 1.0)  # idle: at once
    with act.call():
        t0 = time.monotonic()
        assert not await act.pause(0.05, 0.2)  # a call never ends: gives up
        assert 0.18 <= time.monotonic() - t0 < 1.0
    t0 = time.monotonic()
    assert await act.pause(0.05, 1.0)  # the call ended: waits out the pause only
    assert 0.04 <= time.monotonic() - t0 < 0.5
    assert await act.pause(0, 0)


async def _runtime(tmp_path, **worker):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    config = load_config(None, db=str(tmp_path / "r.db"), extractor="stub",
                         worker={"concurrency": 2, "poll_interval": 0.05, **worker})
    return await build_runtime(config, pm)


async def _pending(rt) -> int:
    return await rt.storage.count_jobs("ns", ("queued", "running"))


async def _until_done(rt, timeout: float) -> float:
    t0 = time.monotonic()
    while await _pending(rt):
        assert time.monotonic() - t0 < timeout, "extraction never ran"
        await asyncio.sleep(0.02)
    return time.monotonic() - t0


async def test_extraction_waits_while_a_call_runs_then_catches_up(tmp_path):
    rt = await _runtime(tmp_path, yield_pause=0.05, yield_max_wait=30)
    try:
        with rt.service.activity.call():  # a slow tool call, e.g. a large consolidation
            await rt.service.store("ns", "I prefer green tea in the morning.")
            await asyncio.sleep(0.5)
            assert await _pending(rt) == 1  # queued, not started
        await _until_done(rt, timeout=10)
        assert (await rt.service.inspect("ns"))["total"] == 1
    finally:
        await rt.close()


async def test_a_steady_stream_of_calls_slows_extraction_but_never_stops_it(tmp_path):
    rt = await _runtime(tmp_path, yield_pause=0.05, yield_max_wait=0.3)
    try:
        await rt.service.store("ns", "Our CI runs on GitHub Actions.")
        t0 = time.monotonic()
        # calls back to back, never a 50 ms gap, for up to 5 s
        while await _pending(rt) and time.monotonic() - t0 < 5:
            await rt.service.search("ns", "ci", limit=5)
        waited = time.monotonic() - t0
        assert await _pending(rt) == 0, "starved by the calls"
        assert 0.25 <= waited < 3.0
    finally:
        await rt.close()


async def test_no_pause_setting_means_no_waiting(tmp_path):
    rt = await _runtime(tmp_path, yield_pause=0)
    try:
        with rt.service.activity.call():
            await rt.service.store("ns", "We decided to ship on Fridays.")
            assert await _until_done(rt, timeout=5) < 2.0
    finally:
        await rt.close()
