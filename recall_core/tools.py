"""The seven MCP tools: thin adapters from MCP arguments to MemoryService.

The namespace always comes from the verified token (`current_namespace`), never from an
argument. Every path returns the envelope; `guarded` turns RecallError into its code and any
other exception into INTERNAL (logged with its traceback, never reported as success).
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from fastmcp.exceptions import ValidationError as ArgumentError
from fastmcp.server.middleware import Middleware

from .auth import current_namespace
from .middleware import envelope_result
from .envelope import error, ok
from .errors import RecallError
from .service import MemoryService

log = logging.getLogger("recall.tools")

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
             "openWorldHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
               "openWorldHint": False}


async def guarded(fn: Callable[..., Awaitable[Any]], **kwargs: Any) -> dict[str, Any]:
    try:
        return ok(await fn(current_namespace(), **kwargs))
    except RecallError as exc:
        return error(exc.code, exc.message)
    except Exception as exc:  # noqa: BLE001 - reported as INTERNAL, with the log line to look at
        log.exception("tool %s failed", getattr(fn, "__name__", fn))
        return error("INTERNAL", f"Internal error ({type(exc).__name__}). Nothing was reported as "
                                 f"done; retry, and if it persists check the server log.")


class ArgumentErrors(Middleware):
    """Innermost: a call whose arguments fail the tool's schema still gets an envelope, and
    every error envelope (ours or a plugin tool's) is flagged `isError`, so a client or
    model that checks the flag sees the failure."""

    async def on_call_tool(self, context, call_next):
        try:
            result = await call_next(context)
        except ArgumentError as exc:
            first = str(exc).splitlines()
            detail = "; ".join(line.strip() for line in first[:4] if line.strip())
            return envelope_result(error(
                "INVALID_PARAM",
                f"Invalid arguments for {context.message.name}: {detail}. Check the tool's "
                f"parameter types and retry."))
        return flag_errors(result)


def flag_errors(result: Any) -> Any:
    sc = getattr(result, "structured_content", None)
    if isinstance(sc, dict) and sc.get("status") == "error" and not result.is_error:
        result.is_error = True
    return result


def register_core_tools(mcp: Any, service: MemoryService) -> None:
    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False,
                           "idempotentHint": True, "openWorldHint": False})
    async def store_memory(text: str, topic: str = "", idempotency_key: str | None = None,
                           session_id: str | None = None, agent_id: str | None = None) -> dict:
        """Save something worth remembering about the user or task; returns in milliseconds.

        Send raw conversation text or a statement ("I prefer dark mode", "We decided to use
        Postgres"). Recall queues it and extracts typed memories (preference, fact, decision,
        procedure) in the background, usually within seconds; newer facts supersede older
        contradicting ones. Pass the same idempotency_key when retrying so nothing is stored
        twice. topic groups related memories (e.g. "editor", "project-x").
        """
        return await guarded(service.store, text=text, topic=topic,
                             idempotency_key=idempotency_key, session_id=session_id,
                             agent_id=agent_id)

    @mcp.tool(annotations=READ_ONLY)
    async def search_memories(query: str, limit: int = 20, recency_weight: float = 0.3,
                              mmr_lambda: float = 0.5, score_threshold: float = 0.0,
                              max_tokens: int | None = None) -> dict:
        """Find memories relevant to a question before you answer; typically under 50 ms.

        Hybrid keyword + semantic search over current (not superseded) memories. limit is
        capped at 50. recency_weight 0..1 favours newer memories; mmr_lambda 0..1 trades
        relevance (1.0) for diversity; max_tokens caps the total text returned. Each result's
        score (0..1) is its rank-based relevance times the evidence that it answers the query
        (share of query terms it contains, or calibrated semantic similarity), so ~0 means
        nothing supports it; score_threshold=0.25 drops results for gibberish or unrelated
        queries while keeping nearly all real answers. data.degraded lists rankers that could
        not answer (e.g. a model still loading).
        """
        return await guarded(service.search, query=query, limit=limit,
                             recency_weight=recency_weight, mmr_lambda=mmr_lambda,
                             score_threshold=score_threshold, max_tokens=max_tokens)

    @mcp.tool(annotations=READ_ONLY)
    async def inspect_memories(limit: int = 20, offset: int = 0) -> dict:
        """List stored memories newest first, page by page; a few milliseconds.

        Use it to see what is remembered or to find a memory id to delete. limit is capped
        at 50; continue with next_offset while has_more is true.
        """
        return await guarded(service.inspect, limit=limit, offset=offset)

    @mcp.tool(annotations=DESTRUCTIVE)
    async def delete_memory(memory_id: str) -> dict:
        """Delete one memory by id when the user asks you to forget it; milliseconds.

        Get ids from search_memories or inspect_memories.
        """
        return await guarded(service.delete, memory_id=memory_id)

    @mcp.tool(annotations=READ_ONLY)
    async def get_memory_stats() -> dict:
        """Count memories by type and extractions still pending; a few milliseconds."""
        return await guarded(service.stats)

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": True,
                           "idempotentHint": False, "openWorldHint": False})
    async def consolidate_memories(topic: str, similarity_threshold: float = 0.85,
                                   dry_run: bool = False) -> dict:
        """Merge near-duplicate memories of one topic into canonical ones; seconds.

        Clusters the topic's memories by meaning (needs the embeddings plugin) and replaces
        each cluster with one memory; originals are kept as history. Run with dry_run=true
        first to see the plan without changing anything.
        """
        return await guarded(service.consolidate, topic=topic,
                             similarity_threshold=similarity_threshold, dry_run=dry_run)

    @mcp.tool(annotations=DESTRUCTIVE)
    async def delete_namespace_data(confirm: str) -> dict:
        """Erase ALL of this user's memories and revoke their tokens, on explicit request only; milliseconds.

        Irreversible. confirm must be exactly "DELETE MY DATA". After it, the current token
        stops working.
        """
        return await guarded(service.delete_namespace, confirm=confirm)
