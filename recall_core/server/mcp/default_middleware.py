"""The default middleware's classes: audit and timeout around every MCP tool call.

They are plugins like any other: `recall_core.builtin.middleware` registers them through the
`register_middleware` hook (so a config can leave one out or order them), and the server builds
them from that registry. This module is what they do:

- audit (outermost): one JSON log line and one tool_call_records row per call, for successes
  and failures alike, with the status and code the caller actually got (the line at once,
  the row in a batch right after, see observability/audit.py). `audit_call` also records
  A2A tasks.
- timeout: a tool that runs longer than limits.tool_timeout answers TOOL_TIMEOUT.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import time
from typing import Any
from collections.abc import Sequence

from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import ToolResult

from ..auth import current_namespace_or_none
from .envelope import error
from ...observability.metrics import observe_call
from ...models import Returned, ToolCallRecord

audit_log = logging.getLogger("recall.audit")


def envelope_result(envelope: dict[str, Any]) -> ToolResult:
    """An envelope as the tool result FastMCP sends, for answers given by middleware (flagged
    isError when it is an error)."""
    return ToolResult(content=json.dumps(envelope), structured_content=envelope,
                      is_error=envelope.get("status") == "error")


def inputs_hash(arguments: Any) -> str:
    raw = json.dumps(arguments or {}, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def namespace_hash(namespace: str | None) -> str | None:
    """Names a tenant in logs without writing its identity there (16 hex digits)."""
    if namespace is None:
        return None
    return hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:16]


def _job_id(result: Any) -> str | None:
    sc = getattr(result, "structured_content", None)
    data = sc.get("data") if isinstance(sc, dict) else None
    job = data.get("job_id") if isinstance(data, dict) else None
    return job if isinstance(job, str) else None


def returned_of(data: Any) -> list[Returned]:
    """What a search answered (its `data`), for the retrieval audit: each result's id and
    score, best first; nothing for other answers."""
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        return []
    return [Returned(id=r["id"], score=float(r["score"])) for r in results
            if isinstance(r, dict) and isinstance(r.get("id"), str)
            and isinstance(r.get("score"), (int, float))]


def _returned(result: Any) -> list[Returned]:
    sc = getattr(result, "structured_content", None)
    if not isinstance(sc, dict) or sc.get("status") != "ok":
        return []
    return returned_of(sc.get("data"))


def call_outcome(result: Any) -> tuple[str, str | None]:
    """(status, code) of a tool's result, as the caller got it (tracing reads it too)."""
    sc = getattr(result, "structured_content", None)
    if isinstance(sc, dict) and sc.get("status") in ("ok", "error"):
        return sc["status"], sc.get("code")
    if getattr(result, "is_error", False):
        return "error", "INTERNAL"
    return "ok", None


class AuditMiddleware(Middleware):
    """The `audit` middleware: every tool call audited (see `audit_call`)."""

    def __init__(self, runtime: Any):
        self.runtime = runtime

    async def on_call_tool(self, context, call_next):
        started = time.perf_counter()
        name = context.message.name
        args = context.message.arguments
        status, code, job_id, returned = "error", "INTERNAL", None, []
        try:
            result = await call_next(context)
            status, code = call_outcome(result)
            job_id = _job_id(result)
            returned = _returned(result)
            return result
        finally:
            audit_call(self.runtime, name, current_namespace_or_none(), args, status, code,
                       (time.perf_counter() - started) * 1000, job_id=job_id,
                       returned=returned)


# Set while the server warms itself up (server/warmup.py): those calls are nobody's.
WARMING_UP: contextvars.ContextVar[bool] = contextvars.ContextVar("recall_warming_up", default=False)


def audit_call(runtime: Any, tool: str, namespace: str | None, args: Any, status: str,
               code: str | None, duration_ms: float, *, job_id: str | None = None,
               returned: Sequence[Returned] = ()) -> None:
    """One JSON log line now and one tool_call_records row (batched, see audit.py) for a call
    through any transport (MCP tools here, A2A tasks in a2a/executor.py). The log line names
    the namespace by its hash only; the row (tenant data, erased with it) keeps the name.
    `returned`: what a search gave the caller (the retrieval audit: ids and scores under the
    row, never the query; the log line says only how many)."""
    if WARMING_UP.get():
        return
    record = ToolCallRecord(tool=tool, namespace=namespace, inputs_hash=inputs_hash(args),
                            status=status, code=code, duration_ms=round(duration_ms, 3),
                            returned=list(returned))
    line = record.model_dump(mode="json", exclude={"returned"})
    if returned:
        line["returned"] = len(returned)
    line["namespace_hash"] = namespace_hash(line.pop("namespace", None))
    if job_id is not None:
        line["job_id"] = job_id
    audit_log.info(json.dumps({"event": "tool_call", **line}))
    runtime.audit.record(record)  # a failed batch write is logged there, never raised here
    observe_call(tool, status, code, duration_ms / 1000)


class TimeoutMiddleware(Middleware):
    """The `timeout` middleware: TOOL_TIMEOUT after limits.tool_timeout seconds."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    async def on_call_tool(self, context, call_next):
        try:
            return await asyncio.wait_for(call_next(context), timeout=self.seconds)
        except TimeoutError:
            return envelope_result(error(
                "TOOL_TIMEOUT",
                f"{context.message.name} did not finish within {self.seconds:g} s. Nothing "
                f"was returned; retry, narrow the request (smaller limit), or raise "
                f"limits.tool_timeout in the server config."))
