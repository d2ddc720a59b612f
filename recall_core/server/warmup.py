"""Pay the first call's costs at start-up, before the server says it is serving.

The first tool call after `recall serve` started took ~220 ms on the server (later ones 1-2
ms): FastMCP and the MCP SDK import parts of their dispatch path on first use, and caches
fill. One in-memory round trip through the same MCP server (the real dispatch, middleware and
tools, a throwaway namespace that holds nothing, audit and metrics skipped) moves that cost
before "serving".
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from .auth import _stdio_namespace
from .mcp.default_middleware import WARMING_UP

log = logging.getLogger("recall")



async def warm_up(mcp: Any) -> float:
    from fastmcp import Client

    started = time.perf_counter()
    # A fresh namespace per start: empty, and no token maps to it.
    warming = WARMING_UP.set(True)
    namespace = _stdio_namespace.set(f"recall-warmup-{uuid.uuid4().hex}")
    try:
        async with Client(mcp) as client:
            await client.list_tools()
            await client.call_tool("get_memory_stats", {}, raise_on_error=False)
            await client.call_tool("search_memories", {"query": "warm up"}, raise_on_error=False)
            await client.call_tool("inspect_memories", {"limit": 1}, raise_on_error=False)
    except Exception:  # noqa: BLE001 - a failed warm-up costs a slow first call, nothing more
        log.warning("warm-up failed; the first call will be slower", exc_info=True)
    finally:
        _stdio_namespace.reset(namespace)
        WARMING_UP.reset(warming)
    seconds = time.perf_counter() - started
    log.info("warmed up in %.0f ms", seconds * 1000)
    return seconds
