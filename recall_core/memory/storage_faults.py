"""Storage faults named: a full disk, a database that refuses writes, one that cannot be
reached. The one place that turns what a backend recognised (`Storage.classify_failure`)
into an error code and a message that says what happened and what to do, and that keeps the
state /health reports (degraded, with the reason) until a probe write succeeds again.

Every caller-waited service method translates through here (`MemoryService`'s `foreground`),
and so does the worker, whose job is then given back uncounted (jobs/worker.py): a call that
hit a fault wrote nothing, and what was acknowledged before stays stored.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..contracts import Storage
from ..errors import StorageFault, StorageFull, StorageReadOnly, StorageUnavailable

log = logging.getLogger("recall.storage")

AFTERWARDS = ("Nothing of this call was written; memories and stores acknowledged before are "
              "safe. Retry later (a store with the same idempotency_key is never queued "
              "twice); /health says degraded until the database takes writes again.")

#: kind -> (error class, what happened, what the operator must do)
KINDS: dict[str, tuple[type[StorageFault], str, str]] = {
    "full": (StorageFull, "The database's disk is full",
             "The server operator must free space or grow the volume the database lives on."),
    "read_only": (StorageReadOnly, "The database refuses writes (it is read-only)",
                  "The server operator must make it writable again (file or mount "
                  "permissions; for PostgreSQL a primary, not a standby, and "
                  "default_transaction_read_only off)."),
    "unavailable": (StorageUnavailable, "The database cannot be reached or opened",
                    "Retry in a moment; if it persists the server operator must bring the "
                    "database back (is it running, is its file or volume there?)."),
}


@dataclass
class Fault:
    kind: str
    code: str
    #: The driver's words (for the operator: /health with a token, the log), never a tenant's.
    detail: str
    since: float
    last_seen: float


class StorageFaults:
    """The current storage fault of one runtime, if any (one at a time: the newest kind)."""

    def __init__(self, storage: Storage, recheck_every: float = 2.0,
                 clock: Callable[[], float] = time.monotonic):
        self.storage = storage
        self.recheck_every = recheck_every
        self.clock = clock
        self.current: Fault | None = None
        self._checked = 0.0
        self._lock = asyncio.Lock()

    def translate(self, exc: BaseException) -> StorageFault | None:
        """The error to answer with when `exc` is a storage fault (and note it for /health);
        None when it is not one."""
        if isinstance(exc, StorageFault):
            return exc
        try:
            kind = self.storage.classify_failure(exc)
        except Exception:  # noqa: BLE001 - a classifier bug must not hide the original error
            log.exception("storage %s could not classify %r", self.storage.description, exc)
            return None
        if kind not in KINDS:
            return None
        cls, what, todo = KINDS[kind]
        self.note(kind, cls.code, f"{type(exc).__name__}: {exc}")
        return cls(f"{what}. {todo} {AFTERWARDS}")

    def note(self, kind: str, code: str, detail: str) -> None:
        now = self.clock()
        cur = self.current
        if cur is None or cur.kind != kind:
            log.error("storage fault %s (%s): %s", code, self.storage.description, detail)
            self.current = Fault(kind, code, detail, since=now, last_seen=now)
        else:
            cur.detail, cur.last_seen = detail, now

    async def recheck(self) -> Fault | None:
        """While a fault is reported, probe with a real write (at most every recheck_every
        seconds, with a time limit); clear it when the write succeeds."""
        if self.current is None:
            return None
        async with self._lock:
            if self.current is None or self.clock() - self._checked < self.recheck_every:
                return self.current
            self._checked = self.clock()
            try:
                await asyncio.wait_for(self.storage.check_writable(), timeout=5.0)
            except TimeoutError:
                self.note("unavailable", StorageUnavailable.code,
                          "the probe write did not finish within 5 s")
            except Exception as exc:  # noqa: BLE001 - the probe's failure is the report
                if self.translate(exc) is None:
                    log.warning("storage probe failed with an unrecognised error: %r", exc)
            else:
                log.warning("storage fault %s cleared: the database takes writes again",
                            self.current.code)
                self.current = None
            return self.current

    def reasons(self, *, detail: bool) -> list[str]:
        """For /health's `degraded`: "storage: STORAGE_FULL ..." (the driver's words with
        `detail`, for a caller with a token)."""
        cur = self.current
        if cur is None:
            return []
        what = KINDS[cur.kind][1]
        since = round(self.clock() - cur.since)
        line = f"storage: {cur.code}: {what} (for {since} s)"
        return [f"{line}: {cur.detail}" if detail else line]
