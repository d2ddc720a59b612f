"""Conversational locality in search (search.apply_sessions)."""

from __future__ import annotations

import pytest

from recall_core.models import Memory
from recall_core.search.steps import SESSION_WEIGHT, apply_sessions


def mem(i: str, session: str | None) -> Memory:
    return Memory(id=i, namespace="ns", text=i, session_id=session)


def test_memories_of_the_strongest_session_gain_the_most():
    ms = [mem("a1", "s1"), mem("a2", "s1"), mem("b1", "s2"), mem("loose", None)]
    rel = {"a1": 1.0, "a2": 0.2, "b1": 0.6, "loose": 0.6}
    out = apply_sessions(ms, rel)
    top = 1 + SESSION_WEIGHT
    assert out["a1"] == pytest.approx(1.0)                 # first everywhere, best session: 1
    assert out["a2"] == pytest.approx(0.2)
    assert out["b1"] == pytest.approx(0.6 * (1 + SESSION_WEIGHT * 0.6 / 1.2) / top)
    assert out["loose"] == pytest.approx(0.6 / top)        # no session: a session with no share
    # b1 and "loose" tie before; the one whose session holds more evidence goes first after
    assert out["b1"] > out["loose"]
    assert all(0.0 <= r <= 1.0 for r in out.values())


def test_no_sessions_or_no_relevance_changes_nothing():
    ms = [mem("x", None), mem("y", None)]
    assert apply_sessions(ms, {"x": 0.5, "y": 0.1}) == {"x": 0.5, "y": 0.1}
    assert apply_sessions([mem("z", "s")], {"z": 0.0}) == {"z": 0.0}
