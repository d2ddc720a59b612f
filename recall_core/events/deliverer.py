"""The background deliverer: claims deliveries from the outbox and sends them.

Each claim holds at most one delivery per subscription (its oldest pending one), and every
claimed delivery is sent in its own task, so a slow or dead receiver holds one slot for its
own subscription and never delays another's; a subscription gets its events one at a time,
in order. A failed attempt goes back to the outbox with an exponential backoff with
jitter, kept in the database (so every process honours it), until `max_attempts`, then the
delivery is dead with its last status and answer. Nothing here runs in a tool call or an
extraction: they only write rows (`WriteTx.emit`) and wake this loop.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from datetime import timedelta
from typing import Any

import httpx

from ..contracts import Delivery, Storage, Subscription
from ..models import utcnow
from ..observability.metrics import observe_delivery
from .sender import Attempt, send

log = logging.getLogger("recall.webhooks")

_waiters: set[asyncio.Event] = set()


def wake() -> None:
    """Something was committed to the outbox in this process: deliver now, not at the next
    poll (other processes find it at their next poll)."""
    for event in list(_waiters):
        event.set()


class Deliverer:
    def __init__(self, storage: Storage, settings: Any):
        self.storage = storage
        self.settings = settings
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._inflight: set[asyncio.Task] = set()
        self._task: asyncio.Task | None = None
        self._client: httpx.AsyncClient | None = None
        #: outcomes since start, and delivery latency (commit to 2xx) of recent deliveries
        self.counts = {"delivered": 0, "retried": 0, "dead": 0}
        self.latencies: list[float] = []

    async def start(self) -> None:
        s = self.settings
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(s.timeout), follow_redirects=False, trust_env=False,
            limits=httpx.Limits(max_connections=s.concurrency * 2))
        _waiters.add(self._wake)
        self._task = asyncio.create_task(self._loop(), name="recall-webhooks")

    async def stop(self) -> None:
        self._stopping.set()
        _waiters.discard(self._wake)
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for task in list(self._inflight):  # their claims lapse; another process resends
            task.cancel()
        await asyncio.gather(*self._inflight, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()

    def health(self) -> dict[str, Any]:
        return {"in_flight": len(self._inflight), **self.counts}

    async def _loop(self) -> None:
        s = self.settings
        last_prune = 0.0
        while not self._stopping.is_set():
            self._wake.clear()
            free = s.concurrency - len(self._inflight)
            batch: list[Delivery] = []
            if free > 0:
                try:
                    batch = await self.storage.claim_deliveries(s.timeout + 5.0, free)
                except Exception:  # noqa: BLE001 - the database may be briefly away
                    log.warning("claiming webhook deliveries failed", exc_info=True)
            for delivery in batch:
                task = asyncio.create_task(self._deliver(delivery), name=f"recall-hook-{delivery.id}")
                self._inflight.add(task)
                task.add_done_callback(self._done)
            if time.monotonic() - last_prune > 3600:
                last_prune = time.monotonic()
                await self._prune()
            if batch and len(batch) == free:
                continue  # more may be ready
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=s.poll_interval)
            except TimeoutError:
                pass

    def _done(self, task: asyncio.Task) -> None:
        self._inflight.discard(task)
        self._wake.set()  # a slot is free, and the subscription's next event may be ready

    async def _prune(self) -> None:
        try:
            await self.storage.prune_webhooks(utcnow() - timedelta(days=self.settings.retention_days))
        except Exception:  # noqa: BLE001
            log.warning("pruning old webhook deliveries failed", exc_info=True)

    async def _deliver(self, delivery: Delivery) -> None:
        s = self.settings
        try:
            subs = await self.storage.list_subscriptions(delivery.namespace)
        except Exception:  # noqa: BLE001 - its claim lapses and it is tried again
            log.warning("reading subscription %s failed", delivery.subscription_id, exc_info=True)
            return
        sub = next((x for x in subs if x.id == delivery.subscription_id), None)
        if sub is None:
            return  # deleted meanwhile, with its deliveries
        try:  # the whole attempt, DNS and a slowly dribbled answer included
            attempt = await asyncio.wait_for(send(
                self._client, delivery, sub, utcnow(), s.allow_private_targets, s.body_cap),
                timeout=s.timeout)
        except TimeoutError:
            attempt = Attempt(None, error=f"timed out after {s.timeout:g} s")
        await self._record(delivery, sub, attempt)

    async def _record(self, delivery: Delivery, sub: Subscription, attempt: Attempt) -> None:
        s = self.settings
        attempts = delivery.attempts + 1
        latency = None
        if attempt.ok:
            status, at = "delivered", None
            latency = (utcnow() - delivery.event_at).total_seconds()
            self.latencies = [*self.latencies[-999:], latency]
        elif attempts >= s.max_attempts:
            status, at = "dead", None
            log.warning("webhook delivery %s to subscription %s is dead after %d attempts: %s",
                        delivery.id, sub.id, attempts, attempt.error)
        else:
            status = "pending"
            at = utcnow() + timedelta(seconds=self.backoff(attempts))
        outcome = "retried" if status == "pending" else status
        self.counts[outcome] += 1
        observe_delivery(outcome, latency)
        for i in range(4):
            try:
                await self.storage.finish_delivery(delivery.id, delivery.claim, status, at,
                                                   attempt.status, attempt.body, attempt.error)
                return
            except Exception:  # noqa: BLE001 - the lease expiry resends it (same webhook-id)
                log.warning("recording webhook delivery %s failed (try %d)", delivery.id, i + 1,
                            exc_info=True)
                await asyncio.sleep(0.2 * 2 ** i)

    def backoff(self, attempts: int) -> float:
        """Jittered (a random wait between half the exponential ceiling and all of it), so
        receivers coming back after an outage are not hit by every delivery at once."""
        s = self.settings
        ceiling = min(s.retry_max, s.retry_base * 2 ** (attempts - 1))
        return max(0.05, random.uniform(ceiling / 2, ceiling))
