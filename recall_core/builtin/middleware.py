"""The default middleware plugin: registers `audit`, `rate_limit` and `timeout` through the same hook a
third-party plugin would use. This module only registers them; their classes are in
recall_core.server.mcp.default_middleware and load only when a server is built."""

from __future__ import annotations

from typing import Any

from ..hookspecs import hookimpl


def make_audit(settings: Any, runtime: Any):
    from ..server.mcp.default_middleware import AuditMiddleware

    return AuditMiddleware(runtime)


def make_timeout(settings: Any, runtime: Any):
    from ..server.mcp.default_middleware import TimeoutMiddleware

    return TimeoutMiddleware(runtime.config.limits.tool_timeout)


def make_rate_limit(settings: Any, runtime: Any):
    from ..server.mcp.rate_limit import NamespaceRateLimit

    limits = runtime.config.tenants
    return NamespaceRateLimit(limits.requests_per_second, limits.burst)


@hookimpl
def register_middleware(register):
    register("audit", make_audit, order=10)
    # Inside audit (a refused call is audited), before timeout and the tool.
    register("rate_limit", make_rate_limit, order=15)
    register("timeout", make_timeout, order=20)
