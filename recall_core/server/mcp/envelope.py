"""The one response shape of every tool: {status, data, error, code}."""

from __future__ import annotations

from typing import Any


def ok(data: Any) -> dict[str, Any]:
    return {"status": "ok", "data": data, "error": None, "code": None}


def error(code: str, message: str) -> dict[str, Any]:
    return {"status": "error", "data": None, "error": message, "code": code}
