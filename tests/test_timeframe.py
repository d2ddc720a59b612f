"""Times named in a query (recall_core.timeframe) and how search ranks by them."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from recall_core.models import Memory
from recall_core.search import TIME_FACTOR, apply_timeframe
from recall_core.timeframe import inside, windows


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
    out = apply_timeframe("What movie did she watch on 1 May, 2022?", [may, june], relevance)
    assert out == {"may": 0.6, "june": 1.0 * TIME_FACTOR} and out["may"] > out["june"]
    # No time named, or nothing stored in the window: unchanged.
    assert apply_timeframe("What movie did she watch?", [may, june], relevance) == relevance
    assert apply_timeframe("What did she watch in 2019?", [may, june], relevance) == relevance
