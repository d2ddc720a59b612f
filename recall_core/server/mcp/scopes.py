"""Scopes on MCP: every tool call needs the scope `access.tool_scopes` names for its tool, and
`tools/list` shows a credential only the tools it may call.

Hiding rather than marking: an agent plans its calls from `tools/list`, so a tool it cannot
call is one it would try and fail; FastMCP's own auth-based filtering (`AuthMiddleware`,
`auth=require_scopes(...)`) hides components the same way. A call to a hidden tool is still
answered, with the envelope's FORBIDDEN naming the missing scope (not "unknown tool", which
would send the caller looking for a typo).

Unlike FastMCP's AuthMiddleware this also applies over stdio: RECALL_TOKEN's scopes bind a
stdio session just as a bearer token's bind an HTTP one. It is core, not a middleware
plugin, so no configuration can leave it out; the server adds it inside the plugin middleware
(audit records a refused call with its code) and outside argument validation (a call outside
the scopes is FORBIDDEN whatever its arguments).
"""

from __future__ import annotations

from typing import Any

from fastmcp.server.middleware import Middleware

from ...access.tool_scopes import OPERATION_SCOPES, require_scope, required_scope
from ...errors import RecallError
from ..auth import current_principal
from .default_middleware import envelope_result
from .envelope import error


async def _annotations(context: Any, name: str) -> Any:
    """A plugin tool's annotations (core tools are in the map and need no lookup)."""
    if name in OPERATION_SCOPES or context.fastmcp_context is None:
        return None
    tool = await context.fastmcp_context.fastmcp.get_tool(name)
    return getattr(tool, "annotations", None)


class ScopeMiddleware(Middleware):
    async def on_call_tool(self, context, call_next):
        name = context.message.name
        try:
            require_scope(current_principal(), name, annotations=await _annotations(context, name))
        except RecallError as exc:
            return envelope_result(error(exc.code, exc.message))
        return await call_next(context)

    async def on_list_tools(self, context, call_next):
        tools = await call_next(context)
        try:
            principal = current_principal()
        except RecallError:
            return []  # nobody verified: nothing is callable
        return [t for t in tools
                if principal.has(required_scope(t.name, getattr(t, "annotations", None)))]
