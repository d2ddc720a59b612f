"""A per-minute budget of model calls and tokens, shared by every job of one extractor.

Hosted APIs bill and rate-limit per minute; a local server has one GPU (or one CPU thread) to
share. Before each call the extractor reserves one call and the tokens it expects to spend
(prompt plus output budget); after the call the reservation is corrected to what the server
reports as used. A call that does not fit waits for the oldest spending to leave the
one-minute window, at most `max_wait` seconds; past that it raises `BudgetExceeded`, and the
job goes back to the queue (a retry) instead of holding its lease while it waits.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

WINDOW = 60.0


class BudgetExceeded(Exception):
    """No room in the per-minute budget within the allowed wait."""

    def __init__(self, message: str, *, permanent: bool = False):
        super().__init__(message)
        #: True when this call can never fit (it alone needs more tokens than a minute allows).
        self.permanent = permanent


@dataclass
class _Spend:
    at: float
    tokens: int


class Reservation:
    """One call's share of the budget; `settle` replaces the estimate with the real count."""

    def __init__(self, budget: "RateBudget", spend: _Spend):
        self._budget = budget
        self._spend = spend

    def settle(self, tokens: int | None) -> None:
        if tokens is not None and tokens >= 0:
            self._spend.tokens = tokens


class RateBudget:
    def __init__(self, calls_per_minute: int | None, tokens_per_minute: int | None,
                 max_wait: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.calls_per_minute = calls_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.max_wait = max_wait
        self._clock = clock
        self._sleep = sleep
        self._spent: deque[_Spend] = deque()
        # Callers reserve one at a time, in arrival order, so a big call is not starved by a
        # stream of small ones.
        self._lock = asyncio.Lock()

    @property
    def limited(self) -> bool:
        return bool(self.calls_per_minute or self.tokens_per_minute)

    def used(self) -> tuple[int, int]:
        """(calls, tokens) spent in the last minute."""
        self._expire(self._clock())
        return len(self._spent), sum(s.tokens for s in self._spent)

    async def reserve(self, tokens: int) -> Reservation:
        if self.tokens_per_minute and tokens > self.tokens_per_minute:
            raise BudgetExceeded(
                f"one call needs about {tokens} tokens, more than the whole budget of "
                f"tokens_per_minute = {self.tokens_per_minute}", permanent=True)
        async with self._lock:
            deadline = self._clock() + self.max_wait
            while True:
                now = self._clock()
                wait = self._wait_needed(now, tokens)
                if wait <= 0:
                    spend = _Spend(now, tokens)
                    self._spent.append(spend)
                    return Reservation(self, spend)
                if now + wait > deadline:
                    calls, spent = self.used()
                    raise BudgetExceeded(
                        f"the per-minute budget is used up ({calls} call(s) of "
                        f"calls_per_minute = {self.calls_per_minute or 'unlimited'}, {spent} "
                        f"of tokens_per_minute = {self.tokens_per_minute or 'unlimited'}) and "
                        f"would not free up within max_wait = {self.max_wait:g}s")
                await self._sleep(wait)

    def _expire(self, now: float) -> None:
        while self._spent and self._spent[0].at <= now - WINDOW:
            self._spent.popleft()

    def _wait_needed(self, now: float, tokens: int) -> float:
        """Seconds until a call of `tokens` fits; 0 when it fits now."""
        self._expire(now)
        wait = 0.0
        if self.calls_per_minute and len(self._spent) >= self.calls_per_minute:
            oldest = self._spent[len(self._spent) - self.calls_per_minute]
            wait = max(wait, oldest.at + WINDOW - now)
        if self.tokens_per_minute:
            total = sum(s.tokens for s in self._spent)
            excess = total + tokens - self.tokens_per_minute
            for s in self._spent:
                if excess <= 0:
                    break
                wait = max(wait, s.at + WINDOW - now)
                excess -= s.tokens
        return wait
