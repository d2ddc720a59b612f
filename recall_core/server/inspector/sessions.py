"""Server-side sessions of the inspector, and the throttle on sign-in attempts (issue 28).

The cookie holds a random session id, never the token: a cookie that leaks (a shared
browser profile, a proxy log) is worth one session, which sign-out ends for good, not a
credential that opens MCP, A2A and the admin API until someone revokes it.

Sessions live in this process's memory, keyed by the SHA-256 of their id, because:
* a session is worth less than the token it came from, so it need not outlive the process:
  a restart signs people out, which is the safe default, and nothing that opens a session
  is ever written to disk or to a backup;
* the token behind a session is looked up in storage on every request anyway, so revoking
  the token (or erasing its namespace) ends all its sessions at once, in every process;
* no schema change on either backend for what is hygiene.
The processes of one `recall serve --workers N` share them through a file in the group's
run directory instead (shared_sessions.py), with the same rules. Separate `recall serve`
servers behind one balancer still need sticky sessions, or the person signs in again.

Bounds: a session ends after `IDLE` without a request or `LIFETIME` after sign-in, and at
most `MAX_SESSIONS` are kept (the least recently used goes first), so memory stays bounded
whatever a client does.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

IDLE = 2 * 3600.0
LIFETIME = 12 * 3600.0
MAX_SESSIONS = 10_000


@dataclass
class Session:
    #: SHA-256 of the token the person signed in with (checked in storage on every request)
    token_hash: str
    started: float
    seen: float


def _key(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


class Sessions:
    """Session id -> the token hash it stands for. `clock` is injectable for tests of the
    bounds; the server uses the monotonic clock."""

    def __init__(self, idle: float = IDLE, lifetime: float = LIFETIME,
                 limit: int = MAX_SESSIONS, clock=time.monotonic):
        self.idle, self.lifetime, self.limit, self.clock = idle, lifetime, limit, clock
        self._by_key: OrderedDict[str, Session] = OrderedDict()

    def open(self, token_hash: str) -> str:
        """A new session for the holder of `token_hash`; returns its id (for the cookie)."""
        session_id = secrets.token_urlsafe(32)
        now = self.clock()
        self._by_key[_key(session_id)] = Session(token_hash, now, now)
        while len(self._by_key) > self.limit:
            self._by_key.popitem(last=False)
        return session_id

    def get(self, session_id: str | None) -> Session | None:
        """The live session with this id (and it counts as used now), else None."""
        if not session_id:
            return None
        key = _key(session_id)
        found = self._by_key.get(key)
        if found is None:
            return None
        now = self.clock()
        if now - found.seen > self.idle or now - found.started > self.lifetime:
            del self._by_key[key]
            return None
        found.seen = now
        self._by_key.move_to_end(key)
        return found

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._by_key.pop(_key(session_id), None)

    def close_token(self, token_hash: str) -> int:
        """End every session of a token (it was revoked); returns how many."""
        keys = [k for k, s in self._by_key.items() if s.token_hash == token_hash]
        for k in keys:
            del self._by_key[k]
        return len(keys)

    def __len__(self) -> int:
        return len(self._by_key)


class SignInThrottle:
    """At most `failures` failed sign-ins per client address in `window` seconds; then
    every attempt from that address is refused (even a right token) until the oldest
    failure leaves the window. Addresses are forgotten once their failures expire, and at
    most `max_addresses` are tracked (the least recently failing goes first)."""

    def __init__(self, failures: int = 10, window: float = 300.0, max_addresses: int = 10_000,
                 clock=time.monotonic):
        self.failures, self.window, self.max_addresses = failures, window, max_addresses
        self.clock = clock
        self._failed: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, address: str) -> deque[float] | None:
        times = self._failed.get(address)
        if times is None:
            return None
        cutoff = self.clock() - self.window
        while times and times[0] <= cutoff:
            times.popleft()
        if not times:
            del self._failed[address]
            return None
        return times

    def retry_after(self, address: str) -> int | None:
        """Whole seconds until `address` may try again, or None when it may now."""
        times = self._recent(address)
        if times is None or len(times) < self.failures:
            return None
        return max(1, math.ceil(times[0] + self.window - self.clock()))

    def failed(self, address: str) -> None:
        times = self._recent(address) or deque()
        times.append(self.clock())
        self._failed[address] = times
        self._failed.move_to_end(address)
        while len(self._failed) > self.max_addresses:
            self._failed.popitem(last=False)
