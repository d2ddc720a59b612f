"""Bookkeeping written after the answer, in batches: a timer flushes what piled up.

Access counts (every search) and audit rows (every tool call) used to be a write transaction
on the caller's path each; batched, a busy server writes them once per interval. A crash can
lose the last interval's batch, never a memory or a job; `flush` writes at once (tests,
`MemoryService.drain`) and `close` runs at shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("recall.batching")


class Batcher:
    """Subclasses keep what is pending, say whether anything is (`pending`), and write it
    (`_write`, given what `_take` handed over)."""

    what = "bookkeeping"

    def __init__(self, delay_s: float):
        self.delay_s = delay_s
        #: The runtime's StorageFaults (memory/storage_faults.py), when set: a full,
        #: read-only or unreachable database is one named line (and on /health), not a
        #: traceback per batch.
        self.faults: Any = None
        self._timer: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    @property
    def pending(self) -> bool:
        raise NotImplementedError

    def _take(self) -> Any:
        raise NotImplementedError

    async def _write(self, batch: Any) -> None:
        raise NotImplementedError

    def _schedule(self) -> None:
        if self._timer is None or self._timer.done():
            self._timer = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        # Loops while callers keep adding, so nothing waits for a later call to be written.
        while self.pending:
            await asyncio.sleep(self.delay_s)
            try:
                await self.flush()
            except Exception as exc:  # noqa: BLE001 - logged; bookkeeping must not kill the server
                fault = self.faults.translate(exc) if self.faults is not None else None
                if fault is not None:
                    log.warning("writing %s failed: %s (this batch is lost)", self.what,
                                fault.code)
                else:
                    log.exception("writing %s failed", self.what)

    async def flush(self) -> None:
        async with self._lock:
            if self.pending:
                await self._write(self._take())

    async def close(self) -> None:
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
        await self.flush()
