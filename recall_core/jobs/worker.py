"""Background worker: drains the durable queue, backfills embeddings, runs importance decay.

Jobs are claimed with a lease from storage, so several workers (and several processes on one
Postgres) share one queue; a job whose worker died is claimed again when its lease expires
(up to worker.max_attempts, then it fails with a reason), the lease is renewed while a job
runs, and the commit refuses a stale claim, so no job is written twice.

Every loop is supervised: an exception in one iteration is logged and the loop backs off and
continues; a loop that exits anyway is restarted. `health()` says which loops are alive and
whether one has been stuck on a single iteration for longer than worker.stuck_after.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import traceback
from datetime import timedelta
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..contracts import model_id
from .activity import Activity
from ..config import RecallConfig
from .decay import run_decay
from .retention import expire_tasks, scrub_old_payloads
from ..memory.writes import process
from ..models import utcnow
from ..contracts import Embedder, ExtractionError, Extractor, NotReady, Storage, extraction_failed
from ..events.deliverer import wake as wake_deliverer
from ..memory.storage_faults import StorageFaults
from .breaker import ExtractionBreaker

log = logging.getLogger("recall.worker")


class Worker:
    def __init__(self, storage: Storage, extractor: Extractor, embedder: Embedder | None,
                 config: RecallConfig, signal: asyncio.Event | None = None,
                 activity: Activity | None = None, faults: StorageFaults | None = None,
                 breaker: ExtractionBreaker | None = None, *, requeue: bool = True,
                 singletons: bool = True):
        self.storage = storage
        #: Re-queue at start the jobs left running by a previous run. False in a child of
        #: `--workers N`: its siblings' running jobs are theirs (the supervisor re-queued
        #: once, before any child started; a dead child's jobs come back with their lease).
        self.requeue = requeue
        #: Run decay, retention and the embedding backfill here. Only one process of a
        #: group does (server/group.py): their work is not claimed row by row.
        self.singletons = singletons
        #: Storage faults named and reported on /health (shared with the service).
        self.faults = faults or StorageFaults(storage)
        cfg = config.worker
        #: Pauses claiming while the model provider is down (breaker.py).
        self.breaker = breaker or ExtractionBreaker(cfg.breaker_threshold, cfg.breaker_probe,
                                                    cfg.breaker_probe_max)
        self.extractor = extractor
        self.embedder = embedder
        self.config = config
        self.signal = signal or asyncio.Event()
        #: Tool calls of this process; background work waits for a pause in them.
        self.activity = activity
        self._tasks: list[asyncio.Task[Any]] = []
        self._stopping = asyncio.Event()
        #: loop name -> monotonic time its current iteration began (None: idle/waiting).
        self._busy_since: dict[str, float | None] = {}
        self.restarts = 0
        #: The decay job's "now" (tests put a fake clock here).
        self.clock: Callable[[], datetime] = utcnow

    async def start(self) -> None:
        requeued = await self.storage.requeue_running() if self.requeue else 0
        if requeued:
            log.info("re-queued %d job(s) that were running when the server last stopped", requeued)
        loops: list[tuple[str, Callable[[], Any]]] = [
            (f"recall-worker-{i}", functools.partial(self._loop, f"recall-worker-{i}"))
            for i in range(self.config.worker.concurrency)]
        if self.embedder is not None and self.singletons:
            loops.append(("recall-backfill", self._backfill_loop))
        if self.config.decay.interval > 0 and self.singletons:
            loops.append(("recall-decay", self._decay_loop))
        if self.config.retention.interval > 0 and self.singletons:
            loops.append(("recall-retention", self._retention_loop))
        for name, factory in loops:
            self._busy_since[name] = None
            self._tasks.append(asyncio.create_task(self._supervise(name, factory), name=name))

    async def _supervise(self, name: str, factory: Callable[[], Any]) -> None:
        """Run a loop forever: restart it (after a pause) if it ever returns or raises."""
        while not self._stopping.is_set():
            try:
                await factory()
            except asyncio.CancelledError:
                raise
            except BaseException:  # noqa: BLE001 - logged; the loop is restarted
                log.exception("%s stopped with an error; restarting it", name)
            else:
                if self._stopping.is_set():
                    return
                log.error("%s returned unexpectedly; restarting it", name)
            self._busy_since[name] = None
            self.restarts += 1
            await asyncio.sleep(min(5.0, self.config.worker.poll_interval * 5))

    def health(self) -> dict[str, Any]:
        """{ok, loops, dead, stuck, restarts}: dead = loop tasks that ended (only after stop,
        or a bug in the supervisor); stuck = busy on one iteration longer than stuck_after."""
        now = time.monotonic()
        limit = self.config.worker.stuck_after
        dead = [t.get_name() for t in self._tasks if t.done()]
        stuck = [name for name, since in self._busy_since.items()
                 if since is not None and now - since > limit]
        return {"ok": not dead and not stuck and bool(self._tasks), "loops": len(self._tasks),
                "dead": dead, "stuck": stuck, "restarts": self.restarts}

    async def stop(self) -> None:
        self._stopping.set()
        self.signal.set()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    async def _give_way(self) -> None:
        """Let the tool calls of this process go first (activity.py)."""
        if self.activity is not None:
            cfg = self.config.worker
            await self.activity.pause(cfg.yield_pause, cfg.yield_max_wait)

    async def _wait(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.signal.wait(), timeout=seconds)
        except TimeoutError:
            pass

    async def _loop(self, name: str = "recall-worker") -> None:
        cfg = self.config.worker
        failures = 0
        while not self._stopping.is_set():
            if not self.breaker.allow():  # the model provider is down: claim nothing
                # A sleep, not _wait: stores keep setting the signal while the breaker is open.
                await asyncio.sleep(min(1.0, max(self.breaker.wait(), 0.05)))
                continue
            await self._give_way()
            self._busy_since[name] = time.monotonic()
            try:
                op = await self.storage.claim_job(cfg.lease_seconds, cfg.max_attempts)
                if op is None:
                    self.breaker.claimed_nothing()
                else:
                    await self.run_one(op)
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a storage hiccup must not kill the worker
                self.breaker.claimed_nothing()
                failures += 1
                fault = self.faults.translate(exc)
                if fault is not None:  # named, on /health; one line, not a traceback each time
                    log.warning("worker: %s (%d in a row); backing off", fault.code, failures)
                else:
                    log.exception("worker iteration failed (%d in a row); backing off", failures)
                self._busy_since[name] = None
                await asyncio.sleep(min(30.0, cfg.poll_interval * 2 ** min(failures, 8)))
                continue
            self._busy_since[name] = None
            if op is None:
                self.signal.clear()
                await self._wait(cfg.poll_interval)

    async def _renew(self, op) -> None:
        """Keep the claim's lease alive while the job runs (every third of the lease)."""
        cfg = self.config.worker
        while True:
            await asyncio.sleep(cfg.lease_seconds / 3)
            try:
                if not await self.storage.renew_lease(op.id, op.attempts, cfg.lease_seconds):
                    return  # the claim went stale; the commit will notice
            except Exception as exc:  # noqa: BLE001 - try again at the next tick
                fault = self.faults.translate(exc)
                log.warning("could not renew the lease of job %s%s", op.id,
                            f": {fault.code}" if fault else "", exc_info=fault is None)

    async def run_one(self, op) -> None:
        cfg = self.config.worker
        renewer = asyncio.create_task(self._renew(op), name=f"recall-lease-{op.id}")
        try:
            done = await process(self.storage, self.extractor, self.embedder, op, utcnow())
            if not done:
                log.warning("job %s: claim went stale (attempt %d); another worker owns it",
                            op.id, op.attempts)
            else:
                self.breaker.answered()
        except ExtractionError as exc:
            provider = exc.provider and exc.retryable
            if provider and not self.breaker.job_at_fault(op.id):
                # Not the job's fault: back to the queue with its attempt unspent.
                wait = self.breaker.provider_failed(str(exc))
                log.warning("job %s: the model provider failed; job given back (attempt not "
                            "counted): %s", op.id, exc)
                await self._release(op, wait)
                return
            if provider:  # the provider answers other jobs and keeps failing on this one
                exc = ExtractionError(f"the model provider keeps failing on this job while "
                                      f"answering others (its text?): {exc}")
            else:
                self.breaker.answered()  # the provider answered; the job's own output failed
            retry = exc.retryable and op.attempts < cfg.max_attempts
            log.warning("job %s attempt %d failed (%s): %s", op.id, op.attempts,
                        "will retry" if retry else "giving up", exc)
            await self._fail(op, str(exc), retry)
        except Exception as exc:  # noqa: BLE001 - recorded on the job, never swallowed silently
            fault = self.faults.translate(exc)
            if fault is not None:  # the database, not the job: given back uncounted
                log.warning("job %s: %s; job given back (attempt not counted)", op.id,
                            fault.code)
                await self._release(op, self._retry_at(op, fault=True))
                return
            retry = op.attempts < cfg.max_attempts
            log.error("job %s attempt %d crashed: %s", op.id, op.attempts, traceback.format_exc())
            await self._fail(op, f"{type(exc).__name__}: {exc}", retry)
        finally:
            renewer.cancel()

    async def _release(self, op, wait: float | datetime | None) -> None:
        """Give the job back uncounted (Storage.release_job), not before `wait` (seconds or
        a time). If even that write fails, the lease expiry hands the job back (counted)."""
        at = utcnow() + timedelta(seconds=wait) if isinstance(wait, (int, float)) else wait
        try:
            await self.storage.release_job(op.id, op.attempts, at)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not give job %s back (%s); its lease expiry will", op.id,
                        getattr(self.faults.translate(exc), "code", repr(exc)))

    async def _fail(self, op, error: str, retry: bool) -> None:
        """Record the failure, retrying the write a few times: storage may be briefly
        unavailable (e.g. "database is locked" while a CLI holds the write lock). If it
        still fails, the job stays running and its lease expiry hands it back (counted)."""
        event = None  # a failure for good is an event (extraction.failed), written with it
        if not retry and self.storage.capabilities.webhooks:
            event = extraction_failed(op.id, op.namespace, op.idempotency_key, op.attempts, error)
        for attempt in range(4):
            try:
                if event is None:
                    await self.storage.fail_job(op.id, op.attempts, error, retry,
                                                self._retry_at(op))
                else:
                    await self.storage.fail_job(op.id, op.attempts, error, retry,
                                                self._retry_at(op), event=event)
                    wake_deliverer()
                return
            except Exception:  # noqa: BLE001
                log.warning("recording the failure of job %s failed (try %d)", op.id, attempt + 1,
                            exc_info=True)
                await asyncio.sleep(0.2 * 2 ** attempt)

    def _retry_at(self, op, fault: bool = False):
        """Exponential backoff kept in the queue itself (the job's not-before time), so no
        worker of any process picks a rate-limited job up again too early, and this worker
        slot is free for other jobs meanwhile. (`fault`: a storage fault, a fixed short wait.)"""
        backoff = self.config.worker.retry_backoff
        if fault:
            return utcnow() + timedelta(seconds=max(1.0, backoff))
        if not backoff:
            return None
        return utcnow() + timedelta(seconds=min(60.0, backoff * 2 ** (op.attempts - 1)))

    async def _every(self, interval: float, what: str, run: Callable[[], Any]) -> None:
        """Call `run` every `interval` seconds until stopped. The first run waits one
        interval, at most a minute, so start-up never competes with it; a failed run is
        logged and tried again at the next interval."""
        delay = min(interval, 60.0)
        while True:
            try:
                await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                return
            except TimeoutError:
                pass
            delay = interval
            try:
                await run()
            except Exception:  # noqa: BLE001 - try again next interval
                log.exception("%s run failed; retrying in %.0f s", what, interval)

    async def _decay_loop(self) -> None:
        """Decay is a pure function of the stored timestamps, so a missed or repeated run
        (or one per process on a shared database) changes nothing: the next run catches
        up exactly."""
        cfg = self.config.decay

        async def run() -> None:
            report = await run_decay(self.storage, cfg.rate, self.clock(),
                                     before_page=self._give_way)
            log.log(logging.INFO if report.updated else logging.DEBUG,
                    "decay: %d active memories, %d importances changed (%.2f s)",
                    report.scanned, report.updated, report.seconds)

        await self._every(cfg.interval, "decay", run)

    async def _retention_loop(self) -> None:
        """Scrub finished stores' text after retention.operation_text_days (retention.py)."""
        cfg = self.config.retention

        async def run() -> None:
            n = await scrub_old_payloads(self.storage, cfg.operation_text_days, self.clock())
            if n:
                log.info("retention: scrubbed the text of %d finished store(s)", n)
            n = await expire_tasks(self.storage, cfg.task_days, self.clock())
            if n:
                log.info("retention: deleted %d A2A task(s) older than %g days", n, cfg.task_days)

        await self._every(cfg.interval, "retention", run)

    async def _backfill_loop(self) -> None:
        """Embed memories written while the model was warming up (or imported verbatim)."""
        assert self.embedder is not None
        while not self._stopping.is_set():
            if not self.embedder.ready:
                await asyncio.sleep(0.5)
                continue
            await self._give_way()
            try:
                rows = await self.storage.ids_missing_embeddings(64)
                if not rows:
                    await asyncio.sleep(2.0)
                    continue
                vectors = await self.embedder.embed([text for _, _, text in rows])
                by_ns: dict[str, list[tuple[str, list[float]]]] = {}
                for (ns, mid, _), vec in zip(rows, vectors):
                    by_ns.setdefault(ns, []).append((mid, vec))
                for ns, items in by_ns.items():
                    await self.storage.set_embeddings(ns, items, model=model_id(self.embedder))
            except NotReady:
                await asyncio.sleep(1.0)
            except Exception:  # noqa: BLE001
                log.exception("embedding backfill failed; retrying in 5 s")
                await asyncio.sleep(5.0)
