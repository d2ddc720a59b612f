"""Input checks for tool parameters. Each failure names the parameter, what was expected and
what to do; nothing is written before these pass."""

from __future__ import annotations

import math
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

from ..errors import InvalidParam, TextTooLarge
from ..kit import representable

MAX_TOPIC_CHARS = 200
MAX_ID_CHARS = 200
#: A fact's value (an inspector correction, an import line): it is stored beside its key.
MAX_VALUE_CHARS = representable.MAX_VALUE_CHARS
# Largest offset accepted: JSON's exact integer range (2^63 overflowed SQLite and Postgres).
MAX_OFFSET = 2**53 - 1


def text(value: Any, name: str, max_bytes: int) -> str:
    if not isinstance(value, str):
        raise InvalidParam(f"{name} must be a string, got {type(value).__name__}. Send the text to remember as a string.")
    if not value.strip():
        raise InvalidParam(f"{name} is empty. Expected non-blank text; send what should be remembered.")
    storable(value, name)
    size = len(value.encode("utf-8"))
    if size > max_bytes:
        raise TextTooLarge(
            f"{name} is {size} bytes; the limit is {max_bytes} bytes. Split it into smaller "
            f"store_memory calls (for example one per message or paragraph)."
        )
    return value


def storable(value: str, name: str, max_chars: int | None = None) -> str:
    """The text rule of every entry (kit.representable): no NUL, no lone surrogate, at most
    `max_chars`."""
    problem = representable.text_problem(value, name, max_chars)
    if problem:
        raise InvalidParam(problem)
    return value


def unstorable(value: Any, path: str) -> str | None:
    """Why a decoded JSON value cannot be stored as sent, naming where (a path such as
    `params.message.parts[0].text`); None when it can. The rule is kit.representable's, for
    every backend alike: no NUL (PostgreSQL cannot hold it in text or jsonb while SQLite
    can) and no lone surrogate in a string or a key, finite numbers (NaN and Infinity are not
    JSON, and neither backend's JSON nor the A2A SDK's protobuf serialiser can write them
    back), integers within int64, and at most `representable.MAX_DEPTH` levels of nesting.
    The MCP tools refuse per parameter; A2A refuses a request that carries one anywhere,
    since the SDK stores the whole message in the task's history."""
    return representable.json_problem(value, path)


def nul_message(where: str) -> str:
    return representable.text_problem("\x00", where) or ""


def query(value: Any, max_chars: int | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidParam(
            "query is empty. Expected a non-blank search string; to list memories without a "
            "query, call inspect_memories instead."
        )
    if max_chars is not None and len(value) > max_chars:
        # Checked before any work: a 1 MB query cost ~4 s of the loop every caller shares.
        raise InvalidParam(
            f"query is {len(value)} characters; the limit is {max_chars} "
            f"(limits.max_query_chars). Search with the question or its key words, not a "
            f"document; to find a stored text, search for a distinctive phrase of it.")
    return storable(value, "query")


def optional_str(value: Any, name: str, max_chars: int = MAX_ID_CHARS) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidParam(f"{name} must be a string or omitted, got {type(value).__name__}.")
    value = value.strip()
    if not value:
        raise InvalidParam(f"{name} is blank. Omit it or pass a non-blank string.")
    return storable(value, name, max_chars)


def topic(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidParam(f"topic must be a string, got {type(value).__name__}.")
    value = value.strip()
    storable(value, "topic")
    if len(value) > MAX_TOPIC_CHARS:
        raise InvalidParam(f"topic is {len(value)} characters; at most {MAX_TOPIC_CHARS} are allowed. Use a short label such as 'editor' or 'project-x'.")
    return value


def limit(value: Any, cap: int, name: str = "limit") -> int:
    """Above the cap is lowered to the cap (documented); below 1 is an error."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParam(f"{name} must be an integer between 1 and {cap}, got {value!r}.")
    if value < 1:
        raise InvalidParam(f"{name} must be at least 1, got {value}. Pass a value between 1 and {cap}.")
    return min(value, cap)


def offset(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_OFFSET:
        raise InvalidParam(f"offset must be an integer from 0 to {MAX_OFFSET}, got {value!r}. Start at 0 and use next_offset from the previous page.")
    return value


def memory_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidParam("memory_id is empty. Pass the id of a memory as returned by "
                           "search_memories or inspect_memories.")
    if representable.text_problem(value, "memory_id", MAX_ID_CHARS):
        raise InvalidParam(f"memory_id {value[:40]!r} is not a memory id (ids are short and "
                           f"printable). Pass an id from search_memories or inspect_memories.")
    return value.strip()


def unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidParam(f"{name} must be a number between 0 and 1, got {value!r}.")
    return float(value)


def score_threshold(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidParam(f"score_threshold must be a number between 0 and 1 (scores are 0..1), got {value!r}. Use 0 to keep every result.")
    return float(value)


def max_tokens(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParam(f"max_tokens must be a positive integer or omitted, got {value!r}.")
    return value


def iso_time(value: Any, name: str, hint: str, bare_date: time) -> datetime:
    """An ISO 8601 date or time as an aware UTC datetime: a bare date is that day at
    `bare_date`, UTC; a time without an offset is UTC."""
    if not isinstance(value, str) or not value.strip() or "\x00" in value or len(value) > 64:
        shown = repr(value) if not isinstance(value, str) else repr(value[:40])
        raise InvalidParam(f"{name} must be an ISO 8601 date or time, got {shown}. {hint}")
    text = value.strip()
    try:
        try:
            at = datetime.combine(date.fromisoformat(text), bare_date, tzinfo=timezone.utc)
        except ValueError:  # not a bare date: a date and time
            at = datetime.fromisoformat(text)
            at = at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at
    except (ValueError, OverflowError):
        raise InvalidParam(f"{name} {text[:40]!r} is not an ISO 8601 date or time. {hint}") from None
    try:  # within what every backend stores (kit.representable), once in UTC
        return representable.instant(at, name)
    except representable.Unrepresentable as exc:
        raise InvalidParam(f"{name} {text[:40]!r} is outside the times that can be stored "
                           f"({representable.INSTANTS}, once in UTC). {hint}") from exc


def as_of(value: Any) -> datetime | None:
    """An ISO 8601 time for `search_memories(as_of=...)`, as an aware UTC datetime.

    A bare date (`2026-03-15`) means the end of that day, UTC (so "as of March 15" includes
    what was said that day); a time without an offset is UTC. None (omitted) stays None."""
    if value is None:
        return None
    hint = ("Pass an ISO 8601 time such as \"2026-03-15\" (the end of that day, UTC) or "
            "\"2026-03-15T09:30:00Z\", or omit as_of to search what is true now.")
    return iso_time(value, "as_of", hint, time.max)


#: How far ahead of the server's clock a `created_at` may be (a client's clock running a
#: little fast is not a statement about the future).
CLOCK_SKEW = timedelta(minutes=5)


def said_at(value: Any, now: datetime) -> datetime | None:
    """`store_memory(created_at=...)`: when the text was said, if not now. A bare date is the
    start of that day, UTC. Not after `now` (beyond CLOCK_SKEW): a memory of something said
    in the future would sort above everything said since. None (omitted) stays None."""
    if value is None:
        return None
    hint = ("Pass when the text was said as an ISO 8601 time such as \"2023-05-08T13:56:00Z\" "
            "or a date such as \"2023-05-08\" (the start of that day, UTC), or omit "
            "created_at when it is being said now.")
    at = iso_time(value, "created_at", hint, time.min)
    if at > now + CLOCK_SKEW:
        raise InvalidParam(f"created_at {value.strip()[:40]!r} is in the future (the server's "
                           f"time is {now.isoformat(timespec='seconds')}). {hint}")
    return at
