"""Scale-out, as a user runs it: two `recall serve` processes on one Postgres database take
1,000 store_memory calls over MCP/HTTP, spread over both, 10% of them repeating an earlier
idempotency key (some on the other process, some while the first call is still running). One
process is killed with SIGKILL midway, holding claimed jobs and with calls in flight. A call
whose answer was lost is retried with the same key and text on the surviving process, as a
real client does. At the end every unique key has exactly one operation and one memory, and
nothing is stored twice: checked through the survivor's tools and in SQL.

Needs RECALL_TEST_PG_URL (skipped, saying so, without it); runs in a fresh schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from dataclasses import dataclass

import asyncpg
import pytest

from recall_postgres.queue import LOCK_CLASS
from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.slow]

NAMESPACES = ("north", "south")  # the same key strings in both: keys are per namespace
CALLS = 1000
DUPLICATE_EVERY = 10  # every 10th call repeats an earlier (namespace, key, text)
KILL_AFTER = 500  # answered calls before the kill
IN_FLIGHT = 16  # concurrent calls from the clients
CALL_TIMEOUT = 20.0
WORDS = ["amber", "basalt", "cobalt", "dahlia", "ember", "fjord", "garnet", "harbor", "indigo",
         "juniper", "kestrel", "lagoon", "magnet", "nectar", "obsidian", "pepper", "quartz",
         "raven", "saffron", "tundra", "umber", "velvet", "walnut", "zephyr"]

SERVER_ENV = {
    "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.slow_extractor",
    "RECALL_EXTRACTOR": "slow",
    "SLOW_EXTRACTOR_DELAY": "0.05",  # the queue backs up: jobs are queued and running at the kill
    "RECALL_WORKER__CONCURRENCY": "4",
    "RECALL_WORKER__LEASE_SECONDS": "3",  # the victim's jobs are claimable again 3 s after it dies
    "RECALL_WORKER__POLL_INTERVAL": "0.05",
    # Workers run beside the calls instead of waiting for a pause in them (0 = never wait):
    # with the default, the last 500 calls could all be answered before either server took
    # a job, so the kill found no calls in flight (seen in loaded full runs).
    "RECALL_WORKER__YIELD_PAUSE": "0",
    "RECALL_DECAY__INTERVAL": "0",
}


@dataclass(frozen=True)
class Call:
    index: int
    namespace: str
    key: str
    text: str
    server: int  # where the client sends it first


def plan_calls(seed: int = 7) -> tuple[list[Call], dict[tuple[str, str], str]]:
    """1,000 calls: 900 unique (namespace, key) pairs and 100 repeats of earlier ones. A repeat
    goes to the other server than its original, and half of them follow it closely enough to
    race it."""
    rnd = random.Random(seed)
    calls: list[Call] = []
    unique: dict[tuple[str, str], str] = {}
    firsts: list[Call] = []
    for i in range(CALLS):
        if i % DUPLICATE_EVERY == DUPLICATE_EVERY - 1:
            window = firsts[-3:] if i % (2 * DUPLICATE_EVERY) == DUPLICATE_EVERY - 1 else firsts
            orig = rnd.choice(window)
            calls.append(Call(i, orig.namespace, orig.key, orig.text, 1 - orig.server))
            continue
        n = len(firsts)
        ns = NAMESPACES[n % 2]
        key = f"key-{n // 2:04d}"
        a, b, c = rnd.sample(WORDS, 3)
        text = (f"Service {a} {n} keeps its {b} archive on volume v{n} "
                f"in rack {c} r{n * 7 % 1000}.")
        call = Call(i, ns, key, text, i % 2)
        firsts.append(call)
        calls.append(call)
        unique[(ns, key)] = text
    return calls, unique


async def _quietly_close(stack: contextlib.AsyncExitStack) -> None:
    # The victim's sessions end with their server gone; closing them may raise or hang.
    with contextlib.suppress(Exception, BaseExceptionGroup, asyncio.TimeoutError):
        await asyncio.wait_for(stack.aclose(), 10)


async def test_two_servers_one_killed_every_key_stored_exactly_once(db_url, tmp_path):
    calls, unique = plan_calls()
    assert len(unique) == 900 and len(calls) == CALLS
    servers = [ServerProcess(db_url, tmp_path, env=SERVER_ENV) for _ in range(2)]
    # Tokens first: the CLI migrates the fresh schema before either server starts.
    tokens = {ns: servers[0].token(ns) for ns in NAMESPACES}
    started = time.monotonic()
    await asyncio.gather(*(asyncio.to_thread(s.start) for s in servers))
    victim, survivor = servers
    stacks = [contextlib.AsyncExitStack() for _ in servers]
    con = await asyncpg.connect(db_url)
    try:
        agents: list[dict[str, Agent]] = [{}, {}]
        for i, s in enumerate(servers):
            for ns in NAMESPACES:
                agents[i][ns] = await stacks[i].enter_async_context(Agent(s.url, tokens[ns]))

        dead = asyncio.Event()
        answered = 0
        enough = asyncio.Event()
        outcomes: list[tuple[Call, int, dict]] = []  # (call, server that answered, data)
        lost_answers: list[Call] = []
        sem = asyncio.Semaphore(IN_FLIGHT)

        victim_in_flight = 0  # calls sent to the victim and not answered yet

        async def send(call: Call) -> None:
            nonlocal answered, victim_in_flight
            async with sem:
                target = survivor_index if dead.is_set() else call.server
                try:
                    if target == victim_index:
                        victim_in_flight += 1
                    try:
                        env = await asyncio.wait_for(
                            agents[target][call.namespace].call(
                                "store_memory", text=call.text, idempotency_key=call.key),
                            CALL_TIMEOUT)
                    finally:
                        if target == victim_index:
                            victim_in_flight -= 1
                except Exception:  # noqa: BLE001 - any transport failure is a lost answer
                    assert target == victim_index, f"the survivor failed call {call.index}"
                    await dead.wait()  # don't retry before the client knows the server is gone
                    lost_answers.append(call)
                    target = survivor_index
                    env = await asyncio.wait_for(
                        agents[target][call.namespace].call(
                            "store_memory", text=call.text, idempotency_key=call.key),
                        CALL_TIMEOUT)
                assert env["status"] == "ok", (call, env)
                outcomes.append((call, target, env["data"]))
                answered += 1
                if answered >= KILL_AFTER:
                    enough.set()

        victim_index, survivor_index = 0, 1

        async def killer() -> dict:
            await enough.wait()
            # Both processes must be holding claimed jobs when the victim dies. Jobs finish in
            # milliseconds, so the claims are read with the victim frozen (SIGSTOP): what it
            # holds then is what it dies with, as no one may take a claim whose owner's lock
            # is still held.
            deadline = time.monotonic() + 20
            while True:
                os.kill(victim.proc.pid, signal.SIGSTOP)
                rows = await con.fetch(
                    "SELECT claimed_by, array_agg(id) AS ids FROM operations "
                    "WHERE status = 'running' GROUP BY claimed_by")
                # ... and it must die with calls in flight (frozen, it answers none): on a
                # loaded machine the two servers sometimes held jobs together only once the
                # last calls had been answered.
                if len(rows) >= 2 and victim_in_flight > 0:
                    break
                os.kill(victim.proc.pid, signal.SIGCONT)
                assert time.monotonic() < deadline, \
                    "the two servers never held jobs together with calls in flight to the victim"
                await asyncio.sleep(0.01)
            claims = {r["claimed_by"]: list(r["ids"]) for r in rows}
            victim.kill()
            dead.set()
            # The victim's owner is the one whose advisory lock goes with its connections
            # (the survivor takes its claims over from then on).
            live_owners = """SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory'
                             AND granted AND objsubid = 2 AND classid = $1::oid"""
            deadline = time.monotonic() + 20
            while True:
                gone = set(claims) - {r[0] for r in await con.fetch(live_owners, LOCK_CLASS)}
                if gone or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.01)
            assert len(gone) == 1, f"expected the victim's owner lock alone to vanish: {gone}"
            held = claims[gone.pop()]
            queued = await con.fetchval("SELECT count(*) FROM operations WHERE status = 'queued'")
            return {"held": len(held), "queued": queued, "ids": held}

        # One gather: if the killer fails, the test fails at once instead of leaving the
        # callers that lost an answer waiting for a kill that never comes.
        at_kill, *_ = await asyncio.gather(killer(), *(send(c) for c in calls))
        assert victim.proc.poll() is not None, "the victim should be dead"
        assert at_kill["held"] > 0, "the victim should die holding claimed jobs"
        assert lost_answers, "the victim should die with calls in flight"
        sent_done = time.monotonic()

        # Every call got an answer, once the lost ones were retried on the survivor.
        assert len(outcomes) == CALLS
        job_of: dict[tuple[str, str], set[str]] = {}
        for call, _, data in outcomes:
            job_of.setdefault((call.namespace, call.key), set()).add(data["job_id"])
            assert data["idempotency_key"] == call.key
        assert all(len(ids) == 1 for ids in job_of.values()), "one key answered with two jobs"
        assert set(job_of) == set(unique)
        # Each key was queued by exactly one call; every other call got the cached job. A key
        # may show no "queued" answer only if a call for it lost its answer in the kill (the
        # victim committed it, and the retry found it).
        queued_answers: dict[tuple[str, str], int] = {k: 0 for k in unique}
        for call, _, data in outcomes:
            queued_answers[(call.namespace, call.key)] += bool(data["queued"])
        lost_keys = {(c.namespace, c.key) for c in lost_answers}
        assert max(queued_answers.values()) == 1, "a key was queued twice"
        assert {k for k, n in queued_answers.items() if n == 0} <= lost_keys

        # The survivor drains everything, the dead process's claims included.
        survivor_agents = agents[survivor_index]
        for ns in NAMESPACES:
            stats = await survivor_agents[ns].wait_idle(60)
            assert stats["failed_extractions"] == 0, stats
        texts_by_ns: dict[str, list[str]] = {}
        for ns in NAMESPACES:
            seen: list[str] = []
            offset = 0
            while True:
                page = await survivor_agents[ns].ok("inspect_memories", limit=50, offset=offset)
                seen += [m["text"] for m in page["memories"]]
                if not page["has_more"]:
                    break
                offset = page["next_offset"]
            assert page["total"] == len(seen)
            texts_by_ns[ns] = seen
        for ns in NAMESPACES:
            expected = sorted(t for (n, _), t in unique.items() if n == ns)
            assert sorted(texts_by_ns[ns]) == expected, f"{ns}: missing or duplicated memories"

        # The same, in SQL.
        per_key = await con.fetch(
            "SELECT namespace, idempotency_key, count(*) AS n, min(status) AS status, "
            "       min(id) AS id FROM operations GROUP BY namespace, idempotency_key")
        assert {(r["namespace"], r["idempotency_key"]) for r in per_key} == set(unique)
        assert {r["n"] for r in per_key} == {1}
        assert {r["status"] for r in per_key} == {"done"}
        assert {(r["namespace"], r["idempotency_key"]): {r["id"]} for r in per_key} == job_of
        per_job = await con.fetch(
            "SELECT source_job_id, count(*) AS n FROM memories GROUP BY source_job_id")
        assert {r["n"] for r in per_job} == {1}, "a job wrote its memories twice"
        assert len(per_job) == len(unique)
        missing = await con.fetch(
            """SELECT o.namespace, o.idempotency_key FROM operations o
               WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.source_job_id = o.id
                                   AND m.namespace = o.namespace
                                   AND m.text = o.payload->>'text')""")
        assert missing == [], f"keys without their memory: {missing[:5]}"
        # The jobs the victim died with ran again on the survivor, and completed once.
        rerun = await con.fetch("SELECT id, attempts FROM operations WHERE id = ANY($1::text[])",
                                at_kill["ids"])
        assert len(rerun) == at_kill["held"] and all(r["attempts"] >= 2 for r in rerun)
        assert survivor.proc.poll() is None
        print(f"\nscale-out: {len(unique)} keys, {CALLS} calls, victim held {at_kill['held']} "
              f"running + {at_kill['queued']} queued at the kill, {len(lost_answers)} answers lost "
              f"and retried; calls took {sent_done - started:.1f}s, drain "
              f"{time.monotonic() - sent_done:.1f}s")
    finally:
        await con.close()
        for stack in stacks:
            await _quietly_close(stack)
        for s in servers:
            s.stop()
