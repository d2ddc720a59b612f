"""The one response shape of every tool: {status, data, error, code}."""

from __future__ import annotations

from typing import Any


def ok(data: Any) -> dict[str, Any]:
    return {"status": "ok", "data": data, "error": None, "code": None}


def error(code: str, message: str, retry_after: float | None = None) -> dict[str, Any]:
    """`retry_after` (seconds; RATE_LIMITED, QUEUE_FULL) is the one datum an error carries."""
    data = None if retry_after is None else {"retry_after": retry_after}
    return {"status": "error", "data": data, "error": message, "code": code}
