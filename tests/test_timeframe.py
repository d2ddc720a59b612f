"""Times named in a query (recall_core.search.timeframe) and how search ranks by them."""

from __future__ import annotations

import calendar
from datetime import date, datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_core.models import Memory
from recall_core.search.steps import TIME_FACTOR, apply_timeframe
from recall_core.search.timeframe import ANY_YEAR_SPAN, inside, ranges, windows


@pytest.mark.parametrize("query,expected", [
    ("What movie did Joanna watch on 1 May, 2022?", [(date(2022, 4, 24), date(2022, 5, 15))]),
    ("what did we ship on March 3rd 2024", [(date(2024, 2, 25), date(2024, 3, 17))]),
    ("What did she accomplish in January 2022?", [(date(2022, 1, 1), date(2022, 2, 14))]),
    ("Where was Tim in the week before 16 November 2023?", [(date(2023, 11, 9), date(2023, 11, 30))]),
    ("what happened in 2022", [(date(2022, 1, 1), date(2023, 1, 14))]),
    ("Which spot did Joanna visit in May?", [(None, 5)]),
    ("May I ask what you did?", []),
    ("how many users were there in march", [(None, 3)]),
    ("What was decided on 31 February 2022?", []),
    ("what editor do I use", []),
])
def test_windows(query, expected):
    assert windows(query) == expected


def test_a_month_without_a_year_matches_that_month_of_any_year():
    at = lambda y, m, d: datetime(y, m, d, tzinfo=timezone.utc)  # noqa: E731
    assert inside(at(2021, 5, 20), (None, 5)) and inside(at(2023, 6, 10), (None, 5))
    assert not inside(at(2023, 6, 20), (None, 5)) and not inside(at(2023, 4, 30), (None, 5))
    assert inside(at(2024, 1, 5), (None, 12))  # trailing days reach into the next year


def test_memories_stored_in_the_named_window_rank_first():
    may = Memory(id="may", namespace="ns", text="I watched the trilogy last night",
                 created_at=datetime(2022, 5, 2, tzinfo=timezone.utc))
    june = Memory(id="june", namespace="ns", text="I watched a movie",
                  created_at=datetime(2022, 6, 20, tzinfo=timezone.utc))
    relevance = {"may": 0.6, "june": 1.0}
    out = apply_timeframe(windows("What movie did she watch on 1 May, 2022?"), [may, june], relevance)
    assert out == {"may": 0.6, "june": 1.0 * TIME_FACTOR} and out["may"] > out["june"]
    # No time named, or nothing stored in the window: unchanged.
    assert apply_timeframe(windows("What movie did she watch?"), [may, june], relevance) == relevance
    assert apply_timeframe(windows("What did she watch in 2019?"), [may, june], relevance) == relevance


# -- the windows as stored time ranges (what storage.memories_created looks up) --------------
NOW = datetime(2026, 11, 24, 12, 0, tzinfo=timezone.utc)
_named = st.one_of(
    st.builds(lambda d: f"on {d.day} {d:%B}, {d.year}", st.dates(date(1998, 1, 1), date(2026, 11, 1))),
    st.builds(lambda d: f"in {d:%B} {d.year}", st.dates(date(1998, 1, 1), date(2026, 11, 1))),
    st.builds(lambda m: f"in {m}", st.sampled_from(list(calendar.month_name)[1:])),
    st.builds(lambda y: f"in {y}", st.integers(1998, 2026)),
)


@settings(max_examples=300, deadline=None)
@given(named=st.lists(_named, min_size=1, max_size=2),
       when=st.datetimes(datetime(1997, 1, 1), datetime(2026, 12, 31), timezones=st.just(timezone.utc)))
def test_ranges_hold_exactly_the_times_inside_a_window(named, when):
    # A memory stored within the last ANY_YEAR_SPAN years is in a range iff it is inside a
    # window: the storage lookup and the time factor agree on every memory.
    found = windows("What happened " + " and ".join(named) + "?")
    assert found
    in_range = any(start <= when < end for start, end in ranges(found, NOW))
    assert in_range == any(inside(when, w) for w in found)


def test_ranges_are_utc_days_end_exclusive():
    (first, last), = ranges(windows("on 1 May, 2022"), NOW)
    assert first == datetime(2022, 4, 24, tzinfo=timezone.utc)  # a week before
    assert last == datetime(2022, 5, 16, tzinfo=timezone.utc)   # two weeks after, whole day
    may = ranges(windows("in May"), NOW)
    assert len(may) == ANY_YEAR_SPAN + 1
    assert may[-1] == (datetime(2026, 5, 1, tzinfo=timezone.utc),
                       datetime(2026, 6, 15, tzinfo=timezone.utc))
