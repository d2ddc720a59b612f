"""Test plugin: counts `tools/list` requests that reach the server's middleware.

Loaded with RECALL_PLUGIN_MODULES=plugins_for_tests.listing_counter. Its tool
`count_tool_listings` answers how many there were, so a test over real HTTP can see whether a
`tools/call` made the server list its tools first (python-sdk issue #3565, see app.py)."""

from fastmcp.server.middleware import Middleware

from recall_core import hookimpl
from recall_core.server.mcp.envelope import ok

LISTINGS = {"n": 0}


class CountListings(Middleware):
    async def on_list_tools(self, context, call_next):
        LISTINGS["n"] += 1
        return await call_next(context)


@hookimpl
def register_middleware(register):
    register("listing_counter", lambda settings, runtime: CountListings(), order=5)


@hookimpl
def register_tools(register):
    @register.tool
    async def count_tool_listings() -> dict:
        """Number of tools/list requests this server has handled."""
        return ok(LISTINGS["n"])
