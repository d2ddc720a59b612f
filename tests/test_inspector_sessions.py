"""The inspector's session store and sign-in throttle keep their bounds (issue 28): idle and
absolute expiry, a cap on sessions, revocation by token, the throttle's window. A fake clock
stands in for time (the HTTP behaviour is in test_inspector_security.py)."""

from __future__ import annotations

import pytest

from recall_core.server.inspector.sessions import Sessions, SignInThrottle
from recall_core.server.inspector.shared_sessions import SharedSessions, SharedThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["process", "group"])
def make_sessions(request, tmp_path):
    """One process's sessions, or a `--workers N` group's (a file in its run directory:
    two objects on one file stand for two processes)."""
    if request.param == "process":
        return lambda **kw: Sessions(**kw)
    return lambda **kw: SharedSessions(tmp_path / "inspector.db", **kw)


def test_sessions_expire_when_idle_or_old_and_stay_bounded(make_sessions):
    clock = Clock()
    s = make_sessions(idle=60, lifetime=300, limit=3, clock=clock)
    a = s.open("h1")
    assert s.get(a).token_hash == "h1" and s.get("forged") is None and s.get(None) is None
    clock.now += 59
    assert s.get(a) is not None  # used: the idle clock restarts
    clock.now += 61
    assert s.get(a) is None  # idle too long, and gone for good
    b = s.open("h1")
    for _ in range(6):
        clock.now += 50
        assert s.get(b) is not None
    clock.now += 1
    assert s.get(b) is None  # over its lifetime, however busy
    ids = [s.open(f"h{i}") for i in range(5)]
    assert len(s) == 3 and s.get(ids[0]) is None and s.get(ids[-1]) is not None


def test_closing_a_token_ends_all_its_sessions_only(make_sessions):
    s = make_sessions()
    mine = [s.open("h1"), s.open("h1")]
    other = s.open("h2")
    assert s.close_token("h1") == 2
    assert all(s.get(i) is None for i in mine) and s.get(other) is not None
    s.close(other)
    assert s.get(other) is None and len(s) == 0


def test_the_throttle_counts_failures_per_address_in_a_window():
    clock = Clock()
    t = SignInThrottle(failures=3, window=100, max_addresses=2, clock=clock)
    for _ in range(3):
        assert t.retry_after("a") is None
        t.failed("a")
        clock.now += 10
    assert t.retry_after("a") == 70  # the first failure leaves the window in 70 s
    assert t.retry_after("b") is None
    clock.now += 69
    assert t.retry_after("a") == 1
    clock.now += 1
    assert t.retry_after("a") is None
    t.failed("b"), t.failed("c")
    assert len(t._failed) == 2  # bounded: the least recently failing address went


def test_a_group_shares_sessions_and_the_throttle_across_processes(tmp_path):
    clock = Clock()
    path = tmp_path / "inspector.db"
    one, two = (SharedSessions(path, clock=clock) for _ in range(2))
    sid = one.open("h1")
    assert two.get(sid).token_hash == "h1"  # signed in on one, signed in on the other
    two.close(sid)
    assert one.get(sid) is None  # signed out on the other, signed out everywhere
    a, b = (SharedThrottle(path, failures=3, window=100, clock=clock) for _ in range(2))
    a.failed("x"), b.failed("x")
    assert a.retry_after("x") is None
    clock.now += 10
    a.failed("x")
    assert b.retry_after("x") == 90  # three failures over the group, not per process
    clock.now += 100
    assert a.retry_after("x") is None
