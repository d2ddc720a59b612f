"""Access bookkeeping for search results, written in batches.

Every search raises its results' access_count (it feeds the strength and recency terms).
Writing that per search cost ~3 ms of every search at 100k memories on SQLite (a write
transaction competing with the next read on a 2-core machine, bench/RESULTS.md), so hits are
gathered in memory and written once per FLUSH_DELAY_S. A crash can lose the last interval's
counts, never a memory; `flush` (called by `MemoryService.drain` and at shutdown) writes them
at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime

from .models import utcnow
from .protocols import Storage

log = logging.getLogger("recall.access")

FLUSH_DELAY_S = 1.0


class AccessLog:
    def __init__(self, storage: Storage, delay_s: float = FLUSH_DELAY_S):
        self.storage = storage
        self.delay_s = delay_s
        self._pending: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._last_at: dict[str, datetime] = {}
        self._timer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def record(self, namespace: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        self._pending[namespace].update(ids)
        self._last_at[namespace] = utcnow()
        if self._timer is None or self._timer.done():
            self._timer = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        # Loops while searches keep adding hits, so none waits for a later search to be written.
        while self._pending:
            await asyncio.sleep(self.delay_s)
            try:
                await self.flush()
            except Exception:  # noqa: BLE001 - logged; the counts are bookkeeping, not data
                log.exception("writing access counts failed")

    async def flush(self) -> None:
        async with self._lock:
            pending, self._pending = self._pending, defaultdict(Counter)
            last_at, self._last_at = self._last_at, {}
            for namespace, counts in pending.items():
                # record_access adds one per id: a memory returned k times gets k rounds.
                for k in range(1, max(counts.values()) + 1):
                    await self.storage.record_access(
                        namespace, [i for i, n in counts.items() if n >= k], last_at[namespace])

    async def close(self) -> None:
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
        await self.flush()
