"""The seven MCP tools: thin adapters from MCP arguments to MemoryService.

The caller (namespace, agent, scopes) always comes from the verified token
(`current_principal`), never from an argument: `agent_id` is recorded, it never widens what
a caller sees. Every path returns the envelope; `answer_with_envelope` turns RecallError into its
code and any other exception into INTERNAL (logged with its traceback, never reported as
success).
"""

# No `from __future__ import annotations`: the tools' parameter types are built from the
# config (the page cap) inside register_core_tools, and FastMCP reads annotations at runtime.

import logging
from typing import Any, Awaitable, Callable

from fastmcp.exceptions import ValidationError as ArgumentError
from fastmcp.server.middleware import Middleware
from pydantic import ValidationError as PydanticValidationError

from . import schemas as m
from ..auth import current_principal, verified_namespace
from ...access.partitions import CallerNamespace
from .default_middleware import envelope_result
from .envelope import error, ok
from ...errors import RecallError
from ...memory.service import MemoryService

log = logging.getLogger("recall.tools")

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
             "openWorldHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
               "openWorldHint": False}


async def answer_with_envelope(fn: Callable[..., Awaitable[Any]], **kwargs: Any) -> dict[str, Any]:
    """`await fn(caller, **kwargs)` answered as the envelope (the caller: the verified
    namespace, carrying its principal, whose partitions the service reads and writes: a
    `CallerNamespace`): the result as data, a
    RecallError as its code and message, anything else as INTERNAL."""
    try:
        await verified_namespace()  # over stdio: the token checked again
        return ok(await fn(CallerNamespace(current_principal()), **kwargs))
    except RecallError as exc:
        return error(exc.code, exc.message, getattr(exc, "retry_after", None))
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
            return envelope_result(error(
                "INVALID_PARAM",
                f"Invalid arguments for {context.message.name}: {describe_argument_error(exc)}. "
                f"Check the tool's parameter types and ranges and retry."))
        return flag_errors(result)


def describe_argument_error(exc: Exception) -> str:
    """`limit: must be >= 1 (got 0); query: missing` -- pydantic's own lines carry a
    documentation URL and type codes that mean nothing to the model reading them."""
    cause = exc.__cause__ if isinstance(exc.__cause__, PydanticValidationError) else exc
    if not isinstance(cause, PydanticValidationError):
        lines = [line.strip() for line in str(exc).splitlines()
                 if line.strip() and "errors.pydantic.dev" not in line]
        return "; ".join(lines[:4])
    parts = []
    for err in cause.errors(include_url=False)[:4]:
        name = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] in ("missing", "missing_argument"):
            parts.append(f"{name}: required")
            continue
        got = repr(err.get("input"))
        got = got if len(got) <= 40 else got[:37] + "..."
        parts.append(f"{name}: {err['msg']} (got {got})")
    return "; ".join(parts)


def flag_errors(result: Any) -> Any:
    sc = getattr(result, "structured_content", None)
    if isinstance(sc, dict) and sc.get("status") == "error" and not result.is_error:
        result.is_error = True
    return result


def register_core_tools(mcp: Any, service: MemoryService) -> None:
    """Recall's seven tools, in the order `tools/list` shows them."""
    limit = m.limit_param(service.config.limits.page_cap)
    register_memory_tools(mcp, service, limit)
    register_upkeep_tools(mcp, service)


def register_memory_tools(mcp: Any, service: MemoryService, Limit: Any) -> None:
    """Remember and recall: store_memory, search_memories, inspect_memories."""

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": False,
                           # a call without an idempotency_key is a new job each time
                           "idempotentHint": False, "openWorldHint": False},
              output_schema=m.envelope_schema(m.StoreData))
    async def store_memory(text: m.Text, topic: m.Topic = "",
                           idempotency_key: m.IdempotencyKey = None,
                           session_id: m.SessionId = None, agent_id: m.AgentId = None,
                           created_at: m.SaidAt = None,
                           visibility: m.Visibility = None) -> dict:
        """Save something worth remembering about the user or task; returns in milliseconds.

        Send raw conversation text or a statement ("I prefer dark mode", "We decided to use
        Postgres"). Recall queues it and extracts typed memories (preference, fact, decision,
        procedure) in the background, usually within seconds; newer facts supersede older
        contradicting ones. Pass the same idempotency_key when retrying so nothing is stored
        twice. topic groups related memories (e.g. "editor", "project-x"). created_at dates
        text said earlier (replaying a past conversation); omit it for what is said now.
        With an agent's token memories are private to that agent unless visibility="shared".
        """
        return await answer_with_envelope(service.store, text=text, topic=topic,
                                          idempotency_key=idempotency_key, session_id=session_id,
                                          agent_id=agent_id, created_at=created_at,
                                          visibility=visibility)

    @mcp.tool(annotations=READ_ONLY, output_schema=m.envelope_schema(m.SearchData))
    async def search_memories(query: m.Query, limit: Limit = 20,
                              recency_weight: m.RecencyWeight = 0.3,
                              mmr_lambda: m.MmrLambda = 0.5,
                              score_threshold: m.ScoreThreshold = 0.0,
                              max_tokens: m.MaxTokens = None, as_of: m.AsOf = None) -> dict:
        """Find memories relevant to a question before you answer; typically under 50 ms.

        Hybrid keyword + semantic search over current (not superseded) memories. limit is
        capped at 50. recency_weight 0..1 favours newer memories; mmr_lambda 0..1 trades
        relevance (1.0) for diversity; max_tokens caps the total text returned. Each result's
        score (0..1) is its rank-based relevance times the evidence that it answers the query
        (share of query terms it contains, or calibrated semantic similarity), so ~0 means
        nothing supports it; score_threshold=0.25 drops results for gibberish or unrelated
        queries while keeping nearly all real answers. For a question about the past ("what
        editor did I use in March?") pass as_of (ISO 8601; a bare date is the end of that day,
        UTC): results are the memories valid then, including values replaced since, each with
        valid_from and valid_until (slower: up to about a second for large histories).
        data.degraded lists rankers that could not answer (e.g. a
        model still loading).
        """
        return await answer_with_envelope(service.search, query=query, limit=limit,
                                          recency_weight=recency_weight, mmr_lambda=mmr_lambda,
                                          score_threshold=score_threshold, max_tokens=max_tokens,
                                          as_of=as_of)

    @mcp.tool(annotations=READ_ONLY, output_schema=m.envelope_schema(m.InspectData))
    async def inspect_memories(limit: Limit = 20, offset: m.Offset = 0) -> dict:
        """List stored memories newest first, page by page; a few milliseconds.

        Use it to see what is remembered or to find a memory id to delete. limit is capped
        at 50; continue with next_offset while has_more is true.
        """
        return await answer_with_envelope(service.inspect, limit=limit, offset=offset)


def register_upkeep_tools(mcp: Any, service: MemoryService) -> None:
    """Look after what is remembered: delete_memory, get_memory_stats, consolidate_memories,
    delete_namespace_data."""

    @mcp.tool(annotations=DESTRUCTIVE, output_schema=m.envelope_schema(m.DeleteData))
    async def delete_memory(memory_id: m.MemoryId) -> dict:
        """Forget one memory by id when the user asks you to forget it; milliseconds, up to a second for a long history.

        Get ids from search_memories or inspect_memories. For a fact (entity/attribute/value)
        this forgets the whole fact, every value it ever had: "forget where I live" removes
        every stored city, not just the current one. Its text is removed everywhere Recall
        keeps it; other memories stay.
        """
        return await answer_with_envelope(service.delete, memory_id=memory_id)

    @mcp.tool(annotations=READ_ONLY, output_schema=m.envelope_schema(m.StatsData))
    async def get_memory_stats() -> dict:
        """Count memories by type and extractions still pending; a few milliseconds."""
        return await answer_with_envelope(service.stats)

    @mcp.tool(annotations={"readOnlyHint": False, "destructiveHint": True,
                           "idempotentHint": False, "openWorldHint": False},
              output_schema=m.envelope_schema(m.ConsolidateData))
    async def consolidate_memories(topic: m.Topic, similarity_threshold: m.SimilarityThreshold = 0.85,
                                   dry_run: m.DryRun = False) -> dict:
        """Merge near-duplicate memories of one topic into canonical ones; seconds.

        Clusters the topic's memories by meaning (needs the embeddings plugin) and replaces
        each cluster with one memory; originals are kept as history. Run with dry_run=true
        first to see the plan without changing anything.
        """
        return await answer_with_envelope(service.consolidate, topic=topic,
                                          similarity_threshold=similarity_threshold,
                                          dry_run=dry_run)

    @mcp.tool(annotations=DESTRUCTIVE, output_schema=m.envelope_schema(m.EraseData))
    async def delete_namespace_data(confirm: m.Confirm) -> dict:
        """Erase ALL of this user's memories and revoke their tokens, on explicit request only; milliseconds.

        Irreversible. With an agent's token it erases only that agent's private memories. confirm must be exactly "DELETE MY DATA". After it, the current token
        stops working. Returns a receipt (rows removed per table, the time, a digest): give it
        to the user to keep; the server keeps only its digest.
        """
        return await answer_with_envelope(service.delete_namespace, confirm=confirm)
