"""Tool calls in flight, so background work can give way to them.

An agent waits on every tool call; nobody waits on an extraction. On a small machine the
worker's jobs (tens of ms of CPU and a write transaction each at 100k memories) competed with
the acks of the very stores that queued them: store_memory over HTTP answered in ~12 ms
p50 with the worker running and ~5.5 ms without it (bench/speed.py). So the worker starts a
job only once calls have paused for `pause_s`, and after waiting `max_wait_s` for a pause it
starts one anyway: under a steady stream of calls extraction slows down, it never stops.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Activity:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.in_flight = 0
        self.last_end = float("-inf")

    @contextmanager
    def call(self) -> Iterator[None]:
        """Mark one foreground call (a tool, an A2A skill) for its duration."""
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            self.last_end = self.clock()

    def idle_for(self) -> float:
        """Seconds since the last call ended; 0 while one is in flight."""
        if self.in_flight:
            return 0.0
        return max(0.0, self.clock() - self.last_end)

    async def pause(self, pause_s: float, max_wait_s: float) -> bool:
        """Wait until no call has run for `pause_s` (True), or at most `max_wait_s` (False)."""
        if pause_s <= 0:
            return True
        deadline = self.clock() + max_wait_s
        while True:
            idle = self.idle_for()
            if idle >= pause_s:
                return True
            left = deadline - self.clock()
            if left <= 0:
                return False
            await asyncio.sleep(min(pause_s - idle, left))
