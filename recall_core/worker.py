"""Background worker: drains the durable queue, and backfills embeddings.

Jobs are claimed with a lease from storage, so several workers (and several processes on one
Postgres) share one queue; a job whose worker died is claimed again when its lease expires,
and `complete_job` refuses a stale claim, so no job is written twice.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from typing import Any

from .config import RecallConfig
from .extraction import process
from .models import utcnow
from .protocols import Embedder, ExtractionError, Extractor, NotReady, Storage

log = logging.getLogger("recall.worker")


class Worker:
    def __init__(self, storage: Storage, extractor: Extractor, embedder: Embedder | None,
                 config: RecallConfig, signal: asyncio.Event | None = None):
        self.storage = storage
        self.extractor = extractor
        self.embedder = embedder
        self.config = config
        self.signal = signal or asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        requeued = await self.storage.requeue_running()
        if requeued:
            log.info("re-queued %d job(s) that were running when the server last stopped", requeued)
        for i in range(self.config.worker.concurrency):
            self._tasks.append(asyncio.create_task(self._loop(i), name=f"recall-worker-{i}"))
        if self.embedder is not None:
            self._tasks.append(asyncio.create_task(self._backfill_loop(), name="recall-backfill"))

    async def stop(self) -> None:
        self._stopping.set()
        self.signal.set()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    async def _wait(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.signal.wait(), timeout=seconds)
        except TimeoutError:
            pass

    async def _loop(self, index: int) -> None:
        cfg = self.config.worker
        while not self._stopping.is_set():
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
            await self.storage.fail_job(op.id, op.attempts, str(exc), retry)
            if retry and cfg.retry_backoff:
                await asyncio.sleep(min(30.0, cfg.retry_backoff * 2 ** (op.attempts - 1)))
        except Exception as exc:  # noqa: BLE001 - recorded on the job, never swallowed silently
            retry = op.attempts < cfg.max_attempts
            log.error("job %s attempt %d crashed: %s", op.id, op.attempts, traceback.format_exc())
            await self.storage.fail_job(op.id, op.attempts, f"{type(exc).__name__}: {exc}", retry)

    async def _backfill_loop(self) -> None:
        """Embed memories written while the model was warming up (or imported verbatim)."""
        assert self.embedder is not None
        while not self._stopping.is_set():
            if not self.embedder.ready:
                await asyncio.sleep(0.5)
                continue
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
