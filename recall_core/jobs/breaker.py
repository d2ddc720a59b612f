"""A circuit breaker around extraction: when the model provider is down, stop asking it.

A provider failure (an `ExtractionError` with `provider=True`: unreachable, timed out,
overloaded, 5xx, rate limited) is not the job's fault: the worker gives the job back with its
attempt uncounted (`Storage.release_job`). After `threshold` of them in a row the breaker
opens: the worker claims no job until the next probe time, then lets exactly one job through
as the probe (half-open). If the provider answers (with memories or with output the job
itself spoiled) the breaker closes and every worker loop resumes; if not, it stays open and
the next probe waits twice as long, up to `probe_max`. /health, get_memory_stats and the
inspector show `status()`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

log = logging.getLogger("recall.worker")


#: A job the provider failed this many times, having answered other jobs since the job's first
#: failure, is failing by itself (its text makes the provider fail: too long, refused, a 5xx
#: on its content): from then on its provider failures count as attempts, so it ends failed
#: instead of being given back forever and pausing everyone's extraction. (Answered since the
#: *first* failure, not between each two: the other jobs may all be answered in one burst
#: while this one waits for its retry time.)
SUSPECT_LIMIT = 3
#: Jobs remembered for that (the oldest are forgotten first).
REMEMBERED = 10_000


class ExtractionBreaker:
    def __init__(self, threshold: int = 3, probe_first: float = 5.0, probe_max: float = 300.0,
                 clock: Callable[[], float] = time.monotonic):
        self.answers = 0  # times the provider answered
        self._suspects: dict[str, tuple[int, int]] = {}  # job -> (answers at 1st failure, failures)
        self.threshold = threshold
        self.probe_first = probe_first
        self.probe_max = probe_max
        self.clock = clock
        self.failures = 0  # provider failures in a row
        self.reason: str | None = None
        self.opened_at: datetime | None = None
        self._delay = probe_first
        self._next_probe = 0.0
        self._probing = False

    @property
    def open(self) -> bool:
        return self.opened_at is not None

    def allow(self) -> bool:
        """May a worker loop claim a job now? Closed: yes. Open: only one loop, once the probe
        time has come (its job is the probe)."""
        if not self.open:
            return True
        if self._probing or self.clock() < self._next_probe:
            return False
        self._probing = True
        return True

    def claimed_nothing(self) -> None:
        """The probing loop found no job: the probe is still to be made, by the next claim."""
        self._probing = False

    def wait(self) -> float:
        """Seconds until the next probe (0 when closed)."""
        return max(0.0, self._next_probe - self.clock()) if self.open else 0.0

    def job_at_fault(self, job_id: str) -> bool:
        """Note a provider failure of `job_id`; True when the provider has failed it
        SUSPECT_LIMIT times and answered other jobs since its first failure (during an outage
        nothing is answered, so no job is ever at fault for it)."""
        first, failures = self._suspects.pop(job_id, (self.answers, 0))
        self._suspects[job_id] = (first, failures + 1)
        while len(self._suspects) > REMEMBERED:
            del self._suspects[next(iter(self._suspects))]
        return failures + 1 >= SUSPECT_LIMIT and self.answers > first

    def answered(self) -> None:
        """The provider answered (the job succeeded, or failed by its own output)."""
        self.answers += 1
        if self.open:
            log.warning("extraction resumed: the model provider answered again after %d "
                        "failure(s) in a row", self.failures)
        self.failures, self.reason, self.opened_at = 0, None, None
        self._delay, self._probing = self.probe_first, False

    def provider_failed(self, reason: str) -> float:
        """Count one provider failure; returns how long the failed job should wait before
        it is claimed again (the time to the next probe, or the first probe delay)."""
        self.failures += 1
        self.reason = reason
        now = self.clock()
        if self.open:
            probe = self._probing
            if probe:
                self._delay = min(self.probe_max, self._delay * 2)
            self._probing = False
            self._next_probe = now + self._delay
            log.warning("extraction still paused: %s failed (%s); next probe in %.0f s",
                        "the probe" if probe else "a job already running", reason, self._delay)
        elif self.failures >= self.threshold:
            self.opened_at = datetime.now(timezone.utc)
            self._next_probe = now + self._delay
            log.error("extraction paused after %d model-provider failures in a row (%s); "
                      "no job is claimed until a probe in %.0f s succeeds (attempts are not "
                      "spent meanwhile)", self.failures, reason, self._delay)
        return self._delay

    def status(self) -> dict[str, Any]:
        """{paused, reason, since, consecutive_failures, next_probe_in}."""
        if not self.open:
            return {"paused": False, "consecutive_failures": self.failures}
        assert self.opened_at is not None
        return {"paused": True, "reason": self.reason, "since": self.opened_at.isoformat(),
                "consecutive_failures": self.failures,
                "next_probe_in": round(self.wait(), 1)}

    def describe(self, *, detail: bool = True) -> list[str]:
        """For /health's and the inspector's `degraded` (the provider's words with `detail`:
        they may name its URL)."""
        if not self.open:
            return []
        line = (f"extraction: paused after {self.failures} model-provider failures in a row "
                f"(next probe in {self.wait():.0f} s; queued jobs wait, their attempts unspent)")
        return [f"{line}: {self.reason}" if detail else line]
