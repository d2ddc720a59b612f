"""The inspector's sessions and sign-in throttle shared by the processes of a `--workers N`
group, in a small SQLite file in the group's run directory (server/group.py).

With several processes behind one port a browser's requests land on any of them; sessions
kept in one process's memory (sessions.py) signed people out at random. This keeps what
sessions.py promised, for the group instead of the process:
* nothing that opens a session reaches the database or its backups: the file lives in the
  run directory the supervisor removes when it stops, so a restart still signs people out;
* sign-out, revocation (`close_token`) and the bounds (IDLE, LIFETIME, MAX_SESSIONS) hold
  in every process at once, because they all read the one file;
* the throttle counts an address's failed sign-ins over the whole group, not N times over.
Same methods as `Sessions` and `SignInThrottle`; the stdlib sqlite3 module, synchronous:
each call is one indexed statement on a local file (well under a millisecond), and sign-in
traffic is a person's, not an agent's.
"""

from __future__ import annotations

import math
import secrets
import sqlite3
import threading
import time
from pathlib import Path

from .sessions import IDLE, LIFETIME, MAX_SESSIONS, Session, _key

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (key TEXT PRIMARY KEY, token_hash TEXT NOT NULL,
                                     started REAL NOT NULL, seen REAL NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_seen ON sessions (seen);
CREATE INDEX IF NOT EXISTS sessions_token ON sessions (token_hash);
CREATE TABLE IF NOT EXISTS failures (address TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS failures_address ON failures (address, at);
"""


class _File:
    """One connection per process to the group's file (autocommit; WAL so readers in other
    processes never wait for a writer)."""

    def __init__(self, path: Path):
        self.con = sqlite3.connect(str(path), timeout=5.0, isolation_level=None,
                                   check_same_thread=False)
        self.lock = threading.Lock()
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=OFF")  # the file dies with the group anyway
        self.con.executescript(_SCHEMA)

    def run(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
        with self.lock:
            return self.con.execute(sql, params)


class SharedSessions:
    """`Sessions` (sessions.py) over the group's file. Wall-clock time: the processes share
    no monotonic clock origin that Python promises."""

    def __init__(self, path: Path, idle: float = IDLE, lifetime: float = LIFETIME,
                 limit: int = MAX_SESSIONS, clock=time.time):
        self.idle, self.lifetime, self.limit, self.clock = idle, lifetime, limit, clock
        self.file = _File(path)

    def open(self, token_hash: str) -> str:
        session_id = secrets.token_urlsafe(32)
        now = self.clock()
        self.file.run("INSERT INTO sessions VALUES (?, ?, ?, ?)",
                      (_key(session_id), token_hash, now, now))
        # The least recently used beyond the bound go first, as in one process.
        self.file.run("DELETE FROM sessions WHERE key IN (SELECT key FROM sessions "
                      "ORDER BY seen DESC LIMIT -1 OFFSET ?)", (self.limit,))
        return session_id

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        key, now = _key(session_id), self.clock()
        row = self.file.run("SELECT token_hash, started, seen FROM sessions WHERE key = ?",
                            (key,)).fetchone()
        if row is None:
            return None
        if now - row[2] > self.idle or now - row[1] > self.lifetime:
            self.file.run("DELETE FROM sessions WHERE key = ?", (key,))
            return None
        self.file.run("UPDATE sessions SET seen = ? WHERE key = ?", (now, key))
        return Session(row[0], row[1], now)

    def close(self, session_id: str | None) -> None:
        if session_id:
            self.file.run("DELETE FROM sessions WHERE key = ?", (_key(session_id),))

    def close_token(self, token_hash: str) -> int:
        return self.file.run("DELETE FROM sessions WHERE token_hash = ?", (token_hash,)).rowcount

    def __len__(self) -> int:
        return self.file.run("SELECT count(*) FROM sessions").fetchone()[0]


class SharedThrottle:
    """`SignInThrottle` (sessions.py) over the group's file: `failures` failed sign-ins per
    address in `window` seconds, counted across the processes."""

    def __init__(self, path: Path, failures: int = 10, window: float = 300.0,
                 clock=time.time):
        self.failures, self.window, self.clock = failures, window, clock
        self.file = _File(path)

    def _recent(self, address: str) -> list[float]:
        cutoff = self.clock() - self.window
        self.file.run("DELETE FROM failures WHERE at <= ?", (cutoff,))
        return [r[0] for r in self.file.run(
            "SELECT at FROM failures WHERE address = ? ORDER BY at", (address,)).fetchall()]

    def retry_after(self, address: str) -> int | None:
        times = self._recent(address)
        if len(times) < self.failures:
            return None
        return max(1, math.ceil(times[-self.failures] + self.window - self.clock()))

    def failed(self, address: str) -> None:
        self.file.run("INSERT INTO failures VALUES (?, ?)", (address, self.clock()))
