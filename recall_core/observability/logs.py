"""Logging for `recall serve` and the CLI: plain text lines, or one JSON object per line.

Everything goes through the root logger's single handler, third-party loggers included:
FastMCP's rich console boxes and uvicorn's own formatters are detached, so a JSON log stays
JSON from the first line to the last (a log shipper never meets a banner or a box).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import datetime, timezone
from typing import Any

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Loggers that install their own handlers or formatters.
THIRD_PARTY = ("fastmcp", "mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "a2a", "httpx")
# Attributes every LogRecord has; anything else was passed with `extra=` and is kept.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "logger", "msg", ...extra}`. A message that is itself a JSON object
    (the audit line) is merged in rather than nested as a string."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
        }
        message = record.getMessage()
        merged = False
        if message.startswith("{") and message.endswith("}"):
            try:
                fields = json.loads(message)
            except ValueError:
                fields = None
            if isinstance(fields, dict):
                out.update({k: v for k, v in fields.items() if k not in out})
                merged = True
        if not merged:
            out["msg"] = message
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class ClientGone(logging.Filter):
    """A client that hung up mid-request (an abandoned slow call, a load tool timing out) is
    the client's business: one INFO line saying so, not an ERROR with a traceback (uvicorn's
    "Exception in ASGI application" and the MCP SDK's "Error handling POST request" each
    printed ~60 lines for it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and _hung_up(exc):
            record.msg = (f"a client hung up before its request was read; nothing was done "
                          f"for it ({record.getMessage().strip()})")
            record.args = None
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def _hung_up(exc: BaseException) -> bool:
    seen = 0
    while exc is not None and seen < 5:
        if type(exc).__name__ == "ClientDisconnect":  # starlette.requests, not imported here
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return False


def setup_logging(level: str = "INFO", fmt: str = "text", stream: Any = None) -> None:
    # FastMCP attaches its rich console handler when it is imported (its log_enabled
    # setting): off, whenever it is imported later; detached below if it already was.
    os.environ.setdefault("FASTMCP_LOG_ENABLED", "false")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(ClientGone())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    for name in THIRD_PARTY:
        lg = logging.getLogger(name)
        for old in list(lg.handlers):
            lg.removeHandler(old)
        lg.propagate = True
