"""Access bookkeeping for search results, written in batches (see batching.py).

Every search raises its results' access_count (it feeds the strength and recency terms).
Writing that per search cost ~3 ms of every search at 100k memories on SQLite (a write
transaction competing with the next read on a 2-core machine, bench/RESULTS.md), so hits are
gathered in memory and written once per FLUSH_DELAY_S.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime

from .batching import Batcher
from ..models import utcnow
from ..contracts import Storage

FLUSH_DELAY_S = 1.0

_Batch = tuple[dict[str, Counter[str]], dict[str, datetime]]


class AccessLog(Batcher):
    what = "access counts"

    def __init__(self, storage: Storage, delay_s: float = FLUSH_DELAY_S):
        super().__init__(delay_s)
        self.storage = storage
        self._counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._last_at: dict[str, datetime] = {}

    def record(self, namespace: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        self._counts[namespace].update(ids)
        self._last_at[namespace] = utcnow()
        self._schedule()

    @property
    def pending(self) -> bool:
        return bool(self._counts)

    def _take(self) -> _Batch:
        batch = (dict(self._counts), self._last_at)
        self._counts, self._last_at = defaultdict(Counter), {}
        return batch

    async def _write(self, batch: _Batch) -> None:
        counts_by_ns, last_at = batch
        for namespace, counts in counts_by_ns.items():
            # record_access adds one per id: a memory returned k times gets k rounds.
            for k in range(1, max(counts.values()) + 1):
                await self.storage.record_access(
                    namespace, [i for i, n in counts.items() if n >= k], last_at[namespace])
