"""Background worker: drains the durable queue, backfills embeddings, runs importance decay.

Jobs are claimed with a lease from storage, so several workers (and several processes on one
Postgres) share one queue; a job whose worker died is claimed again when its lease expires,
and `complete_job` refuses a stale claim, so no job is written twice.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from datetime import timedelta
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .activity import Activity
from .config import RecallConfig
from .decay import run_decay
from .writes import process
from .models import utcnow
from .protocols import Embedder, ExtractionError, Extractor, NotReady, Storage

log = logging.getLogger("recall.worker")


class Worker:
    def __init__(self, storage: Storage, extractor: Extractor, embedder: Embedder | None,
                 config: RecallConfig, signal: asyncio.Event | None = None,
                 activity: Activity | None = None):
        self.storage = storage
        self.extractor = extractor
        self.embedder = embedder
        self.config = config
        self.signal = signal or asyncio.Event()
        #: Tool calls of this process; background work waits for a pause in them.
        self.activity = activity
        self._tasks: list[asyncio.Task[Any]] = []
        self._stopping = asyncio.Event()
        #: The decay job's "now" (tests put a fake clock here).
        self.clock: Callable[[], datetime] = utcnow

    async def start(self) -> None:
        requeued = await self.storage.requeue_running()
        if requeued:
            log.info("re-queued %d job(s) that were running when the server last stopped", requeued)
        for i in range(self.config.worker.concurrency):
            self._tasks.append(asyncio.create_task(self._loop(i), name=f"recall-worker-{i}"))
        if self.embedder is not None:
            self._tasks.append(asyncio.create_task(self._backfill_loop(), name="recall-backfill"))
        if self.config.decay.interval > 0:
            self._tasks.append(asyncio.create_task(self._decay_loop(), name="recall-decay"))

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

    async def _loop(self, index: int) -> None:
        cfg = self.config.worker
        while not self._stopping.is_set():
            await self._give_way()
            try:
                op = await self.storage.claim_job(cfg.lease_seconds)
            except Exception:  # noqa: BLE001 - a storage hiccup must not kill the worker
                log.exception("claim_job failed; retrying")
                await asyncio.sleep(cfg.poll_interval)
                continue
            if op is None:
                self.signal.clear()
                await self._wait(cfg.poll_interval)
                continue
            await self.run_one(op)

    async def run_one(self, op) -> None:
        cfg = self.config.worker
        try:
            done = await process(self.storage, self.extractor, self.embedder, op, utcnow())
            if not done:
                log.warning("job %s: claim went stale (attempt %d); another worker owns it",
                            op.id, op.attempts)
        except ExtractionError as exc:
            retry = exc.retryable and op.attempts < cfg.max_attempts
            log.warning("job %s attempt %d failed (%s): %s", op.id, op.attempts,
                        "will retry" if retry else "giving up", exc)
            await self.storage.fail_job(op.id, op.attempts, str(exc), retry, self._retry_at(op))
        except Exception as exc:  # noqa: BLE001 - recorded on the job, never swallowed silently
            retry = op.attempts < cfg.max_attempts
            log.error("job %s attempt %d crashed: %s", op.id, op.attempts, traceback.format_exc())
            await self.storage.fail_job(op.id, op.attempts, f"{type(exc).__name__}: {exc}", retry,
                                        self._retry_at(op))

    def _retry_at(self, op):
        """Exponential backoff kept in the queue itself (the job's not-before time), so no
        worker of any process picks a rate-limited job up again too early, and this worker
        slot is free for other jobs meanwhile."""
        backoff = self.config.worker.retry_backoff
        if not backoff:
            return None
        return utcnow() + timedelta(seconds=min(60.0, backoff * 2 ** (op.attempts - 1)))

    async def _decay_loop(self) -> None:
        """Run decay every `decay.interval` seconds. The first run waits one interval, at
        most a minute, so start-up never competes with it. Decay is a pure function of the
        stored timestamps, so a missed or repeated run (or one per process on a shared
        database) changes nothing: the next run catches up exactly."""
        cfg = self.config.decay
        delay = min(cfg.interval, 60.0)
        while True:
            try:
                await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                return
            except TimeoutError:
                pass
            delay = cfg.interval
            try:
                report = await run_decay(self.storage, cfg.rate, self.clock(),
                                         before_page=self._give_way)
                log.log(logging.INFO if report.updated else logging.DEBUG,
                        "decay: %d active memories, %d importances changed (%.2f s)",
                        report.scanned, report.updated, report.seconds)
            except Exception:  # noqa: BLE001 - try again next interval
                log.exception("decay run failed; retrying in %.0f s", cfg.interval)

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
                    await self.storage.set_embeddings(ns, items)
            except NotReady:
                await asyncio.sleep(1.0)
            except Exception:  # noqa: BLE001
                log.exception("embedding backfill failed; retrying in 5 s")
                await asyncio.sleep(5.0)
