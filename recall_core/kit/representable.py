"""The one rule for values at the edges of what a backend can represent.

Every entry (the MCP tools through `memory.validation`, the A2A routes, the admin API's and
the CLI's import through `memory.transfer.ImportLine`) checks what it accepts here, so that a
value accepted is one SQLite and PostgreSQL both store and Python reads back everywhere (tools,
inspector, admin API, export), and the rest is refused before anything is written with a
message naming the range and what to send instead. Storages read rows older versions wrote
through `stored_instant`, so such a row stays readable.

Why each bound:

* **instants** lie within `EARLIEST`..`LATEST` (UTC). Python's datetime spans years 1..9999;
  asyncpg writes its very first and last instant as PostgreSQL's `-infinity`/`infinity` and
  reads those back as naive `datetime.min`/`max` (a year-1 `created_at` broke the queue and
  the namespace's pages), and arithmetic near either end (a window, a lease, a local-time
  rendering) leaves the calendar. A day's margin on each side keeps both clear. A time without
  an offset is UTC; one whose offset moves it past a bound in UTC is refused the same way.
* **text** holds no NUL (PostgreSQL's text and jsonb cannot) and no lone surrogate (UTF-8
  cannot encode one; JSON's `\\ud800` escape carries one in), and fits its length.
* **numbers** are finite (NaN and Infinity are not JSON; `1e400` reads as Infinity in
  Python) and integers fit a signed 64-bit column (SQLite's INTEGER, PostgreSQL's bigint).
* **JSON** stored as sent (A2A messages and their metadata) obeys the above at every depth and
  nests at most `MAX_DEPTH` levels (parsers, protobuf's included, stop far sooner than the
  databases).
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

EARLIEST = datetime(1, 1, 2, tzinfo=timezone.utc)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=timezone.utc)
INSTANTS = "from 0001-01-02T00:00:00Z to 9999-12-30T23:59:59Z"
INT64 = (-(2**63), 2**63 - 1)
#: Nesting accepted in stored JSON (protobuf's parser, which the A2A SDK uses, allows 100).
MAX_DEPTH = 32


class Unrepresentable(ValueError):
    """A value no backend can be trusted to store and read back; the message says what was
    wrong, the accepted range and what to send instead."""


def _name(where: str) -> str:
    return where[:200].replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode()


def instant(value: datetime, where: str) -> datetime:
    """`value` as an aware UTC datetime within the accepted range (naive = UTC)."""
    at = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value
    try:
        at = at.astimezone(timezone.utc)
    except (OverflowError, ValueError):  # e.g. 0001-01-01T00:00+05:00: before year 1 in UTC
        at = None
    if at is None or not EARLIEST <= at <= LATEST:
        raise Unrepresentable(
            f"{_name(where)} {value.isoformat()} is outside the times that can be stored "
            f"({INSTANTS}, after conversion to UTC). Send a time within that range, or omit it.")
    return at


def stored_instant(value: datetime | None) -> datetime | None:
    """A time a storage read back, as an aware UTC datetime. An older version could store the
    first and last instants Python has, which PostgreSQL keeps as -infinity/infinity and
    asyncpg reads back naive: they are taken as UTC, and stay readable."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    if value.utcoffset() == timezone.utc.utcoffset(None):
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def text_problem(value: str, where: str, max_chars: int | None = None) -> str | None:
    """Why `value` cannot be stored as text, or None."""
    if "\x00" in value:
        return (f"{_name(where)} contains a NUL character (\\x00), which cannot be stored. "
                f"Remove it and retry.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return (f"{_name(where)} contains a lone surrogate (such as \\ud800), which is not "
                f"Unicode text and cannot be stored. Send valid UTF-8 text.")
    if max_chars is not None and len(value) > max_chars:
        return (f"{_name(where)} is {len(value)} characters; at most {max_chars} can be "
                f"stored. Send a shorter value.")
    return None


def text(value: str, where: str, max_chars: int | None = None) -> str:
    problem = text_problem(value, where, max_chars)
    if problem:
        raise Unrepresentable(problem)
    return value


#: Longest fact key part (entity, attribute) and value a write keeps: a PostgreSQL btree entry
#: holds at most 2704 bytes, and the key is indexed; the tools and import accept these lengths.
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 1000


def repaired_text(value: str) -> str:
    """Text an extractor (a model's output) wrote, made storable: NUL removed, a lone
    surrogate replaced by U+FFFD. What a caller sends is refused instead (`text`)."""
    if "\x00" in value:
        value = value.replace("\x00", "")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    return value


def storable_triple(entity: str, attribute: str, value: str) -> bool:
    """Whether a fact's key and value can be stored and indexed as they are."""
    return (len(entity) <= MAX_KEY_CHARS and len(attribute) <= MAX_KEY_CHARS
            and len(value) <= MAX_VALUE_CHARS
            and not any(text_problem(part, "") for part in (entity, attribute, value)))


def number_problem(value: int | float, where: str) -> str | None:
    """Why a number cannot be stored, or None: not finite, or an integer beyond int64."""
    if isinstance(value, float) and not math.isfinite(value):
        spelled = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        # (a number beyond a double, such as 1e400, reads as Infinity: the same answer)
        return (f"{_name(where)} is {spelled}, which is not a JSON number. Send a finite "
                f"number, or omit the field.")
    if isinstance(value, int) and not isinstance(value, bool) and not INT64[0] <= value <= INT64[1]:
        return (f"{_name(where)} is {str(value)[:40]}, beyond the integers that can be stored "
                f"(-2^63 to 2^63-1). Send a smaller integer, or the value as a string.")
    return None


def json_problem(value: Any, where: str, depth: int = 0) -> str | None:
    """Why a decoded JSON value cannot be stored as sent, naming where (a path such as
    `params.message.parts[0].text`); None when it can."""
    if depth > MAX_DEPTH:
        return depth_problem(where)
    if isinstance(value, str):
        return text_problem(value, where)
    if isinstance(value, (int, float)):
        return number_problem(value, where)
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            found = (text_problem(key, inner) if isinstance(key, str) else None) \
                or json_problem(item, inner, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = json_problem(item, f"{where}[{i}]", depth + 1)
            if found:
                return found
    return None


def depth_problem(where: str) -> str:
    return (f"{_name(where)} nests deeper than {MAX_DEPTH} levels, more than can be stored. "
            f"Send flatter data.")
