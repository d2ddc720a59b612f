"""Test plugin: a `nap` tool that sleeps, so a request is still running when SIGTERM lands.

Loaded into a real server process with RECALL_PLUGIN_MODULES=plugins_for_tests.napping_tool."""

import asyncio

from recall_core import hookimpl


@hookimpl
def register_tools(register):
    @register.tool
    async def nap(seconds: float) -> dict:
        """Sleep for a number of seconds (tests only); takes that many seconds."""
        await asyncio.sleep(seconds)
        return {"status": "ok", "data": {"slept": seconds}, "error": None, "code": None}
