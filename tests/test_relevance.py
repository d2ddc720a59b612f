"""Evidence of relevance (recall_core.search.relevance) and how it enters the search score."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from recall_core.models import Memory, ScoredId, utcnow
from recall_core.kit import ramp
from recall_core.search.relevance import SATURATION, coverage, evidence, query_stems
from recall_core.search.scoring import combine


def mem(i: int, text: str) -> Memory:
    return Memory(id=f"m{i}", namespace="ns", text=text)


def test_coverage_counts_the_querys_content_terms_stemmed():
    stems = query_stems("Which editor themes does the user prefer?")
    assert coverage(stems, "The user prefers dark editor themes.") == pytest.approx(1.0)
    assert coverage(stems, "The user likes tea.") == pytest.approx(1 / 4)  # "user" only
    assert coverage(stems, "Deploys happen on Fridays.") == 0.0
    assert coverage(query_stems("qwzx plmok vbnrt"), "The user prefers dark editor themes.") == 0.0
    assert coverage(frozenset(), "anything") == 0.0


def test_ramp_calibrates_similarity():
    assert ramp(0.1, 0.25, 0.55) == 0.0
    assert ramp(0.25, 0.25, 0.55) == 0.0
    assert ramp(0.40, 0.25, 0.55) == pytest.approx(0.5)
    assert ramp(0.9, 0.25, 0.55) == 1.0
    assert ramp(0.5, 0.5, 0.5) == 1.0 and ramp(0.4, 0.5, 0.5) == 0.0


def test_evidence_takes_the_stronger_signal_and_bounds_unreturned_candidates():
    memories = [mem(1, "The user prefers dark editor themes."), mem(2, "It was last Saturday."),
                mem(3, "Nothing in common here.")]
    dense_hits = [ScoredId(id="m2", score=0.55), ScoredId(id="m1", score=0.40)]
    ev = evidence("which editor theme?", memories, [(lambda c: ramp(c, 0.25, 0.55), dense_hits)])
    assert ev["m1"] == pytest.approx(1.0)      # full term coverage beats cosine 0.40
    assert ev["m2"] == pytest.approx(1.0)      # no shared word, but close in embedding space
    # m3 was not among the dense hits: it ranks below the weakest one, so that one's
    # evidence bounds it (saturating: half-way support counts in full).
    assert ev["m3"] == pytest.approx(min(1.0, ramp(0.40, 0.25, 0.55) / SATURATION))
    weak = evidence("editor theme colour font", [mem(4, "The editor is slow.")], [(lambda c: 0.0, dense_hits)])
    assert weak["m4"] == pytest.approx(0.25 / SATURATION)  # one term of four


def test_without_calibrated_rankers_every_candidate_counts():
    """Keyword ranking alone (no dense ranker, or it is warming up): the ranker's own order
    decides, evidence does not re-rank it."""
    ev = evidence("editor theme", [mem(1, "The user prefers dark mode."), mem(2, "editor")], [])
    assert ev == {"m1": 1.0, "m2": 1.0}


def test_a_memory_without_evidence_scores_zero_whatever_its_rank():
    now = utcnow()
    a, b = mem(1, "a"), mem(2, "b")
    scored = dict((m.id, s) for m, s in combine([a, b], {"m1": 1.0, "m2": 0.5}, 0.3, now,
                                                  {"m1": 0.0, "m2": 1.0}))
    assert scored["m1"] == 0.0 and scored["m2"] > 0.0


@given(st.text(max_size=60), st.lists(st.text(max_size=60), min_size=1, max_size=5),
       st.lists(st.floats(-1, 1), min_size=0, max_size=5))
def test_evidence_is_always_between_0_and_1(query, texts, cosines):
    memories = [mem(i, t) for i, t in enumerate(texts)]
    hits = [ScoredId(id=f"m{i}", score=c) for i, c in enumerate(cosines)]
    ev = evidence(query, memories, [(lambda c: ramp(c, 0.25, 0.55), hits)])
    assert set(ev) == {m.id for m in memories}
    ev = evidence(query, memories, [])
    assert set(ev) == {m.id for m in memories}
    assert all(0.0 <= v <= 1.0 for v in ev.values())
