"""Default middleware, registered through the same hook a third-party plugin would use.
The implementations live in recall_core.server.mcp.middleware and load only when a server is built."""

from __future__ import annotations

from typing import Any

from ..hookspecs import hookimpl


def make_audit(settings: Any, runtime: Any):
    from ..server.mcp.middleware import AuditMiddleware

    return AuditMiddleware(runtime)


def make_timeout(settings: Any, runtime: Any):
    from ..server.mcp.middleware import TimeoutMiddleware

    return TimeoutMiddleware(runtime.config.limits.tool_timeout)


@hookimpl
def register_middleware(register):
    register("audit", make_audit, order=10)
    register("timeout", make_timeout, order=20)
