"""Importance decay: memories nobody reads fade; memories that are read keep their weight.

The decayed importance is a pure function of what is stored about a memory:

    effective = base * exp(-rate * days / (1 + access_count))

where `base` is the importance the memory was written with (insert, re-statement, or
`update_importance`), `days` is the time since it was last touched (`last_accessed_at`, else
`created_at`) and `rate` is per day (`[decay] rate`, env RECALL_DECAY_LAMBDA; the default
0.0198 = ln 2 / 35 halves an untouched memory's importance in ~35 days). Every access divides
the rate: a memory read 4 times fades 5x slower, and each read restarts the clock.

Storage keeps `base` next to the importance the tools see, and `run_decay` always recomputes
from `base`, so running the job twice (or in two processes at once, or after a long pause)
gives the same result as running it once: runs never compound.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..contracts import DecayRow, Storage

log = logging.getLogger("recall.decay")

SECONDS_PER_DAY = 86400.0
#: Pages of this many active memories are read and written at a time.
PAGE = 500
#: A stored importance closer than this to the computed one is left alone (not rewritten).
MIN_CHANGE = 1e-3


def decayed_importance(base: float, created_at: datetime, last_accessed_at: datetime | None,
                       access_count: int, now: datetime, rate: float) -> float:
    """The importance a memory should have at `now` (see the module docstring).

    A clock behind the memory's timestamps (`now` earlier than the last touch) counts as zero
    days, so decay never raises a memory above its base. The result is within 0..1."""
    touched = created_at if last_accessed_at is None else max(created_at, last_accessed_at)
    days = max(0.0, (now - touched).total_seconds() / SECONDS_PER_DAY)
    value = base * math.exp(-max(0.0, rate) * days / (1 + max(0, access_count)))
    return min(1.0, max(0.0, value))


@dataclass
class DecayReport:
    scanned: int = 0
    updated: int = 0
    seconds: float = 0.0


def plan_decay(rows: Sequence[DecayRow], now: datetime, rate: float,
               min_change: float = MIN_CHANGE) -> list[tuple[str, str, float]]:
    """(namespace, id, new importance) for the rows whose importance should change."""
    out = []
    for r in rows:
        new = decayed_importance(r.base_importance, r.created_at, r.last_accessed_at,
                                 r.access_count, now, rate)
        if abs(new - r.importance) >= min_change:
            out.append((r.namespace, r.id, new))
    return out


async def run_decay(storage: Storage, rate: float, now: datetime, *, page: int = PAGE,
                    min_change: float = MIN_CHANGE,
                    before_page: Callable[[], Awaitable[None]] | None = None) -> DecayReport:
    """Apply `decayed_importance` to every active memory of every namespace, a page at a time
    (no transaction or lock is held between pages). `before_page` is awaited before each page:
    the worker lets tool calls go first there, so a pass over 100k memories (200 pages) does
    not hold up searches while it runs."""
    report = DecayReport()
    started = time.perf_counter()
    after: str | None = None
    while True:
        if before_page is not None:
            await before_page()
        rows = await storage.decay_candidates(after, page)
        if not rows:
            break
        report.scanned += len(rows)
        updates = plan_decay(rows, now, rate, min_change)
        if updates:
            await storage.apply_decay(updates)
            report.updated += len(updates)
        if len(rows) < page:
            break
        after = rows[-1].id
    report.seconds = time.perf_counter() - started
    return report
