"""Times a query names ("in May 2022", "on 1 May, 2022", "in 2023"), as windows of when a
memory about them would have been stored.

"What movie did Joanna watch on 1 May, 2022?" is answered by what was said around then
("I watched The Lord of the Rings last night"), whose words share nothing with the date.
Search ranks memories stored inside a window the query names above those outside it
(search.apply_timeframe). Only absolute times are read: a relative one ("last week") depends on
when the question is asked, which the query does not say.

A memory is stored when it is said, usually after what it tells happened ("last Friday",
"last week"), so a window reaches TRAILING_DAYS past the time it names, and a week before a
day it names ("the week before 16 November").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta, timezone

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted((m for m in MONTHS if len(m) > 3 or m == "may"),
                                          key=len, reverse=True)) + r"|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
# Most specific first; each pattern is tried on what the earlier ones left.
_PATTERNS = [
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I),          # 1 May, 2022
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),                   # May 1, 2022
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.I),                           # May 2022
    re.compile(rf"\b(?:in|of|during|early|late|mid|since|until|by)\s+-?{_MONTH}(?!\w)", re.I),  # in May
    re.compile(rf"\b(?:in|of|during|since|until|by)\s+{_YEAR}\b", re.I),        # in 2022
]
TRAILING_DAYS = 14
LEADING_DAYS = 7
#: A month named without a year ("in March") is that month of any year (`inside`); as stored
#: ranges (`ranges`) it is that month of each of the last ANY_YEAR_SPAN years up to now.
ANY_YEAR_SPAN = 30

Window = tuple[date, date] | tuple[None, int]  # (first, last) or (None, month) for any year


def windows(query: str) -> list[Window]:
    """The time windows `query` names; [] when it names none."""
    found: list[Window] = []
    text = query
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            w = _window(m.groupdict())
            if w is not None:
                found.append(w)
        text = pattern.sub(" ", text)
    return found


def _window(g: dict) -> Window | None:
    month = MONTHS.get((g.get("month") or "").lower().rstrip("."))
    year = int(g["year"]) if g.get("year") else None
    try:
        if month and year and g.get("day"):
            d = date(year, month, int(g["day"]))
            return d - timedelta(days=LEADING_DAYS), d + timedelta(days=TRAILING_DAYS)
        if month and year:
            last = calendar.monthrange(year, month)[1]
            return date(year, month, 1), date(year, month, last) + timedelta(days=TRAILING_DAYS)
        if month:
            return None, month
        if year:
            return date(year, 1, 1), date(year, 12, 31) + timedelta(days=TRAILING_DAYS)
    except ValueError:  # "31 February 2022"
        return None
    return None


def inside(when: datetime, window: Window) -> bool:
    day = when.astimezone(timezone.utc).date()
    first, last = window
    if first is None:  # a month of any year, plus the trailing days
        month = int(last)  # type: ignore[arg-type]
        start = date(day.year, month, 1)
        if day < start:
            start = date(day.year - 1, month, 1)
        end = date(start.year, month, calendar.monthrange(start.year, month)[1])
        return start <= day <= end + timedelta(days=TRAILING_DAYS)
    return first <= day <= last  # type: ignore[operator]


def within(when: datetime, found: Sequence[Window]) -> bool:
    """Whether `when` is inside any of the windows."""
    return any(inside(when, w) for w in found)


def ranges(found: Sequence[Window], now: datetime) -> list[tuple[datetime, datetime]]:
    """The windows as UTC time ranges [start, end) of when a memory was stored: what a storage
    can look up (`TimeRanges.memories_created`). The same days `inside` accepts; a month of any
    year covers the last ANY_YEAR_SPAN years."""
    out: list[tuple[datetime, datetime]] = []
    for first, last in found:
        if first is None:
            month = int(last)  # type: ignore[arg-type]
            for year in range(now.year - ANY_YEAR_SPAN, now.year + 1):
                end = date(year, month, calendar.monthrange(year, month)[1])
                out.append(_span(date(year, month, 1), end + timedelta(days=TRAILING_DAYS)))
        else:
            out.append(_span(first, last))  # type: ignore[arg-type]
    return out


def _span(first: date, last: date) -> tuple[datetime, datetime]:
    return (datetime.combine(first, time(), timezone.utc),
            datetime.combine(last + timedelta(days=1), time(), timezone.utc))
