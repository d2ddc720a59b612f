"""The `rate_limit` middleware: tool calls per namespace, FastMCP's token bucket.

FastMCP's RateLimitingMiddleware keys its buckets by a client id we give it (the verified
credential's namespace, so one tenant's flood never spends another's budget) and answers
with a protocol error; a Recall tool answers with the envelope, so the call is refused here
as RATE_LIMITED with `retry_after` (seconds until the bucket holds a call again) in data.
Settings: `[tenants]` requests_per_second and burst in recall.toml (0 turns it off).
"""

from __future__ import annotations

from typing import Any

from fastmcp.server.middleware.rate_limiting import RateLimitError, RateLimitingMiddleware

from ..auth import current_namespace_or_none
from .default_middleware import envelope_result
from .envelope import error


def _namespace(context: Any) -> str:
    return current_namespace_or_none() or "(anonymous)"


class NamespaceRateLimit(RateLimitingMiddleware):
    def __init__(self, per_second: float, burst: int):
        super().__init__(max_requests_per_second=per_second, burst_capacity=burst,
                         get_client_id=_namespace)

    async def on_request(self, context, call_next):
        return await call_next(context)  # only tool calls are limited, in on_call_tool

    async def on_call_tool(self, context, call_next):
        if self.max_requests_per_second <= 0:
            return await call_next(context)
        refused = False

        async def admitted(ctx):
            nonlocal refused
            refused = False
            return await call_next(ctx)

        refused = True
        try:  # FastMCP's own check (token bucket per namespace), then the call
            return await RateLimitingMiddleware.on_request(self, context, admitted)
        except RateLimitError:
            if not refused:  # raised by something inside the call, not by this limit
                raise
        bucket = self.limiters.get(_namespace(context))
        wait = (1 - bucket.tokens) / bucket.refill_rate if bucket is not None else 1.0
        return envelope_result(error(
            "RATE_LIMITED",
            f"Too many calls from this namespace: the server allows "
            f"{self.max_requests_per_second:g} per second (bursts of {self.burst_capacity}). "
            f"Nothing was done; retry after {wait:.2f} s.", retry_after=round(max(wait, 0.001), 3)))
