"""Issue 13 reproductions, each on SQLite and on real Postgres (when RECALL_TEST_PG_URL is set),
through the real worker and storage: two racing stores of one fact, one sentence stating a
fact twice, storage errors around the queue, slow jobs and expired leases."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta


import pytest_asyncio

from recall_core.config import RecallConfig
from recall_core.models import Operation, utcnow
from recall_core.memory.service import MemoryService
from recall_core.memory import writes
from recall_core.memory.forget import forget
from recall_core.models import Memory
from recall_core.testing.helpers import current_of, dump_tables
from recall_core.jobs.worker import Worker
from recall_extractors.stub import StubExtractor
from recall_sqlite import make_storage

from recall_testkit.backends import BACKENDS, PG_URL
from recall_core import Extractor


@pytest_asyncio.fixture(params=BACKENDS)
async def storage(request, tmp_path):
    if request.param == "sqlite":
        s = make_storage(f"sqlite:///{tmp_path / 'r.db'}")
    else:
        from recall_postgres import make_postgres as make_pg
        s = make_pg(PG_URL)
    await s.open()
    yield s
    await s.close()


def ns() -> str:
    return f"integrity-{uuid.uuid4().hex[:8]}"


class Delayed(Extractor):
    """The stub extractor, slowed per text (the race in reproduction 1 needs the earlier
    store to finish last)."""

    name = "delayed"

    def __init__(self, delays: dict[str, float] | None = None, default: float = 0.0):
        self.inner = StubExtractor()
        self.delays = delays or {}
        self.default = default

    async def extract(self, text, topic=""):
        await asyncio.sleep(next((d for k, d in self.delays.items() if k in text), self.default))
        return await self.inner.extract(text, topic)

    async def merge(self, memories, topic=""):
        return await self.inner.merge(memories, topic)


def config(**worker) -> RecallConfig:
    return RecallConfig(worker={"concurrency": 2, "poll_interval": 0.02, "retry_backoff": 0,
                                "yield_pause": 0, **worker}, decay={"interval": 0})


async def drain(storage, namespace, timeout=20.0):
    for _ in range(int(timeout / 0.05)):
        if await storage.count_jobs(namespace, ("queued", "running")) == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("jobs did not finish")


async def run_worker(storage, extractor, cfg, namespace, texts, spacing=0.0):
    service = MemoryService(storage, cfg, extractor=extractor)
    worker = Worker(storage, extractor, None, cfg, service.job_signal)
    await worker.start()
    try:
        for text in texts:
            await service.store(namespace, text)
            if spacing:
                await asyncio.sleep(spacing)
        await drain(storage, namespace)
    finally:
        await worker.stop()
    return worker


async def test_racing_stores_leave_one_current_value_the_last_said(storage):
    # Reproduction 1: "I use vim", then emacs and VS Code close together with two workers;
    # emacs (stored first) finishes last. The later statement is current, whatever the order
    # the jobs finish in; emacs is history.
    n = ns()
    await run_worker(storage, Delayed(), config(), n, ["I use vim."])
    await run_worker(storage, Delayed({"emacs": 0.6}), config(), n,
                     ["I use emacs.", "I use VS Code."], spacing=0.01)
    current = await current_of(storage, n, "user", "editor")
    assert [m.value.lower() for m in current] == ["vs code"]
    history = await storage.history(n, "user", "editor")
    assert sorted(m.value.lower() for m in history) == ["emacs", "vim", "vs code"]
    assert all(m.valid_until is not None for m in history if m.value.lower() != "vs code")


async def test_one_sentence_stating_a_fact_twice_keeps_the_last_value(storage):
    # Reproduction 2: with "I use vim." stored, "At work I use VS Code. At home I use vim."
    # must leave vim current (the last statement), and VS Code as history of that text.
    n = ns()
    await run_worker(storage, Delayed(), config(), n, ["I use vim."])
    (vim,) = await current_of(storage, n, "user", "editor")
    await run_worker(storage, Delayed(), config(), n, ["At work I use VS Code. At home I use vim."])
    current = await current_of(storage, n, "user", "editor")
    assert [m.id for m in current] == [vim.id]  # re-stated: refreshed, not duplicated
    history = await storage.history(n, "user", "editor")
    assert sorted(m.value.lower() for m in history) == ["vim", "vs code"]
    (code,) = [m for m in history if m.value.lower() == "vs code"]
    assert code.valid_until == code.valid_from and code.superseded_by == vim.id


async def test_restating_an_old_value_after_a_newer_one_makes_it_current_again(storage):
    n = ns()
    await run_worker(storage, Delayed(), config(concurrency=1), n,
                     ["I use vim.", "I use emacs.", "I use vim."], spacing=0.01)
    current = await current_of(storage, n, "user", "editor")
    assert [m.value for m in current] == ["vim"]
    assert len(await storage.history(n, "user", "editor")) == 3  # the old vim row stays history


async def test_a_restatement_written_before_an_older_store_keeps_its_value_current(storage):
    # Found by the fact-model state machine: vim current; "I use emacs." then "I use vim." are
    # stored; the vim job is written first (a re-statement: refreshed), the emacs job after.
    # vim was said last, so vim must stay current and emacs be history between the two.
    n = ns()
    await run_worker(storage, Delayed(), config(), n, ["I use vim."])
    (vim,) = await current_of(storage, n, "user", "editor")
    await run_worker(storage, Delayed({"emacs": 0.6}), config(), n,
                     ["I use emacs.", "I use vim."], spacing=0.01)
    current = await current_of(storage, n, "user", "editor")
    assert [m.value.lower() for m in current] == ["vim"]
    history = sorted(await storage.history(n, "user", "editor"), key=lambda m: m.valid_from)
    (emacs,) = [m for m in history if m.value.lower() == "emacs"]
    (now,) = current
    # emacs held from when it was said until vim was said again; then vim again.
    assert emacs.valid_until == now.valid_from and emacs.superseded_by == now.id
    assert emacs.valid_from < now.valid_from
    old = next(m for m in history if m.id == vim.id)
    assert old.valid_until == emacs.valid_from and old.superseded_by == emacs.id


async def test_a_restatement_with_nothing_older_pending_only_refreshes(storage):
    # The common case stays one row: no older store can arrive, so no marker is kept.
    n = ns()
    await run_worker(storage, Delayed(), config(concurrency=1), n, ["I use vim.", "I use vim."],
                     spacing=0.05)
    assert len(await storage.history(n, "user", "editor")) == 1


async def test_history_views_leave_restatement_markers_out(storage):
    # CI found it (Postgres, two workers): the same value stored twice while the first job was
    # still running left a marker, and `recall history` showed it as a second, ended value.
    n = ns()
    await run_worker(storage, Delayed(), config(), n, ["I use vim."])
    await run_worker(storage, Delayed({"Honestly": 0.6}), config(), n,
                     ["Honestly, I use vim.", "I use vim."], spacing=0.01)
    stored = await storage.history(n, "user", "editor")
    assert len(stored) == 2  # the current row and the marker the late re-statement left
    service = MemoryService(storage, config(), extractor=Delayed())
    shown = await service.history(n, "user", "editor")
    assert [(m.value.lower(), m.valid_until) for m in shown] == [("vim", None)]


async def test_forget_scrubs_a_restatement_written_onto_history(storage):
    # Found by the fact-model state machine at 300 examples: vim current; "vim" stored again;
    # before that job is written, the current row is replaced (consolidation); the late job
    # lands on the history row it re-stated and changes nothing. Forgetting the fact must
    # scrub that store's text too, as it does for a re-statement that refreshed.
    n = ns()
    said = f"Note {uuid.uuid4().hex[:8]}: I use vim."
    await run_worker(storage, Delayed(), config(), n, [said])
    (vim,) = await current_of(storage, n, "user", "editor")
    service = MemoryService(storage, config(), extractor=Delayed())
    await service.store(n, said)  # queued: no worker runs until after the replacement
    new = Memory(namespace=n, text="user editor is emacs", entity="user", attribute="editor",
                 value="emacs")
    assert await writes.replace(storage, n, [vim], [new], utcnow())
    await run_worker(storage, Delayed(), config(), n, [])
    (now,) = await current_of(storage, n, "user", "editor")
    await forget(storage, n, now.id)
    assert said not in await dump_tables(storage)


class Flaky:
    """Real storage whose queue calls fail the first `n` times (injected, not mocked)."""

    def __init__(self, inner, fail: dict[str, int], namespace: str | None = None):
        # `namespace`: fail only its writes. On Postgres the suite shares one database, and
        # the fair queue may hand this test's worker another test's leftover job first.
        self.inner, self.fail, self.namespace = inner, dict(fail), namespace

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name not in self.fail:
            return attr
        if name == "write":  # a context manager: fail on entering the transaction
            def write(*args, **kwargs):
                if self.fail[name] > 0 and self.namespace in (None, args[0]):
                    self.fail[name] -= 1
                    raise RuntimeError("injected: database is locked (commit)")
                return attr(*args, **kwargs)
            return write

        async def wrapped(*args, **kwargs):
            if self.fail[name] > 0:
                self.fail[name] -= 1
                raise RuntimeError(f"injected: database is locked ({name})")
            return await attr(*args, **kwargs)
        return wrapped


class Failing(Extractor):
    name = "failing"

    async def extract(self, text, topic=""):
        raise RuntimeError("extractor exploded")

    async def merge(self, memories, topic=""):
        raise RuntimeError("no")


async def test_storage_errors_at_claim_and_fail_never_kill_the_worker(storage):
    # Reproduction 3: two storage errors in a row (claim, then fail_job) used to end the
    # worker task for good; now the loop backs off and goes on, and the job ends failed
    # with its reason.
    n = ns()
    flaky = Flaky(storage, {"claim_job": 2, "fail_job": 2})
    cfg = config(concurrency=1, max_attempts=1)
    worker = await run_worker(flaky, Failing(), cfg, n, ["I use vim."])
    failures = await storage.recent_failures(n)
    assert len(failures) == 1 and "extractor exploded" in failures[0]["error"]
    assert flaky.fail == {"claim_job": 0, "fail_job": 0}
    # and the same worker still works afterwards
    await run_worker(storage, Delayed(), config(), n, ["I use emacs."])
    assert [m.value for m in await current_of(storage, n, "user", "editor")] == ["emacs"]
    assert worker.health()["dead"] == []  # stopped cleanly: no loop died on its own


async def test_expired_leases_respect_max_attempts(storage):
    # Reproduction 4: a running job whose lease keeps expiring is not claimed forever: after
    # max_attempts it ends failed, with a reason that says why.
    n = ns()
    await storage.enqueue(Operation(namespace=n, idempotency_key="k", payload={"text": "x"}))
    seen = 0
    for _ in range(5):
        job = await storage.claim_job(0.05, 2)
        if job is None:
            break
        seen = job.attempts
        await asyncio.sleep(0.1)  # the worker "dies": the lease expires
    assert seen == 2
    assert await storage.claim_job(0.05, 2) is None
    (failure,) = await storage.recent_failures(n)
    assert failure["attempts"] == 2 and "lease" in failure["error"]


async def test_a_slow_job_keeps_its_lease_and_runs_once(storage):
    # Reproduction 4, the other half: a 1.2 s extraction with a 0.5 s lease is renewed
    # while it runs, so it is neither re-claimed nor counted again.
    n = ns()
    cfg = config(concurrency=2, lease_seconds=0.5, max_attempts=2)
    await run_worker(storage, Delayed(default=1.2), cfg, n, ["I use vim."])
    ops = [o for o in await storage.recent_failures(n)]
    assert ops == []
    (m,) = await current_of(storage, n, "user", "editor")
    op = await storage.get_operation(n, m.source_job_id)
    assert op.status == "done" and op.attempts == 1
    assert op.payload["result"]["memory_ids"] == [m.id]


async def test_renew_lease_only_for_the_current_claim(storage):
    n = ns()
    await storage.enqueue(Operation(namespace=n, idempotency_key="k", payload={"text": "x"}))
    job = await storage.claim_job(60)
    assert await storage.renew_lease(job.id, job.attempts, 60)
    assert not await storage.renew_lease(job.id, job.attempts + 1, 60)
    before = (await storage.get_operation(n, job.id)).lease_until
    assert before > utcnow() + timedelta(seconds=50)


async def test_a_job_records_which_extractor_made_its_memories(storage):
    n = ns()
    await run_worker(storage, Delayed(), config(), n, ["I use vim."])
    (m,) = await current_of(storage, n, "user", "editor")
    result = (await storage.get_operation(n, m.source_job_id)).payload["result"]
    assert result["extractor"] == "delayed" and result["memory_ids"] == [m.id]


async def test_a_storage_error_at_commit_is_retried_and_the_job_ends_done_once(storage):
    # Injected at the commit (storage.write): the job fails retryably, runs again, and ends
    # done with one current value (nothing written twice).
    n = ns()
    flaky = Flaky(storage, {"write": 2}, namespace=n)
    await run_worker(flaky, Delayed(), config(concurrency=1, max_attempts=5), n, ["I use vim."])
    assert flaky.fail["write"] == 0
    (m,) = await current_of(storage, n, "user", "editor")
    op = await storage.get_operation(n, m.source_job_id)
    assert op.status == "done" and op.attempts == 3


class Provider(Extractor):
    """The stub extractor behind a model provider that fails some texts for good (a 5xx on
    their content) and everything during an outage of `down` calls."""

    name = "provider"

    def __init__(self, poison: str = "poison", down: int = 0):
        # Rules alone: the test is about the queue, not about loading a model.
        self.inner, self.poison, self.down = StubExtractor(classifier=None), poison, down

    async def extract(self, text, topic=""):
        from recall_core.contracts import ExtractionError

        if self.down > 0 or self.poison in text:
            self.down = max(0, self.down - 1)
            raise ExtractionError("provider answered HTTP 503", retryable=True, provider=True)
        return await self.inner.extract(text, topic)

    async def merge(self, memories, topic=""):
        return await self.inner.merge(memories, topic)


def fast_breaker(**worker) -> RecallConfig:
    return config(concurrency=1, max_attempts=3, breaker_threshold=3, breaker_probe=0.02,
                  breaker_probe_max=0.05, **worker)


async def test_a_job_the_provider_always_fails_while_answering_others_ends_failed(storage):
    # One tenant's poison text must not be given back forever (pausing everyone's
    # extraction at every outage-like streak): once the provider has failed it three times
    # while answering other jobs in between, its failures count, and it ends failed.
    a, b = ns(), ns()
    cfg = fast_breaker()
    extractor = Provider()
    service = MemoryService(storage, cfg, extractor=extractor)
    worker = Worker(storage, extractor, None, cfg, service.job_signal)
    await worker.start()
    try:
        poisoned = (await service.store(a, "the poison text"))["job_id"]
        for i in range(15):
            await service.store(b, f"I use editor number {i}.")
        await drain(storage, a, timeout=60)
        await drain(storage, b, timeout=60)
    finally:
        await worker.stop()
    op = await storage.get_operation(a, poisoned)
    assert op.status == "failed" and op.attempts == 3, op
    assert "keeps failing on this job" in (op.error or "")
    assert await storage.count_jobs(b, ("done",)) == 15
    assert not worker.breaker.open


async def test_during_an_outage_no_job_is_at_fault_and_every_job_ends_done(storage):
    # Every call fails for a while (nothing answered in between): jobs are given back
    # uncounted however often they are tried, and all end done once the provider is back.
    n = ns()
    cfg, extractor = fast_breaker(), Provider(down=12)
    service = MemoryService(storage, cfg, extractor=extractor)
    worker = Worker(storage, extractor, None, cfg, service.job_signal)
    await worker.start()
    try:
        ids = [(await service.store(n, f"I live in city {i}."))["job_id"] for i in range(3)]
        await drain(storage, n, timeout=60)
    finally:
        await worker.stop()
    ops = [await storage.get_operation(n, i) for i in ids]
    assert extractor.down == 0
    assert [(o.status, o.attempts) for o in ops] == [("done", 1)] * 3, ops
