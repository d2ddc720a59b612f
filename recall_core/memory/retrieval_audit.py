"""The retrieval audit, as a person reads it: which searches returned a memory, and what one
search returned (issue 30: "why did my agent say that?", answered without logging text).

The rows are written by the audit middleware (`server/mcp/default_middleware.audit_call`)
under each search's tool-call record: ids, ranks and scores, never the query (only the hash
of the call's arguments). They are erased with the namespace, and a forgotten memory's rows
go with it."""

from __future__ import annotations

from collections.abc import Sequence

from typing import Any

from ..contracts import MemoryFilter, Storage

#: How many recent searches a memory's page lists.
RECENT_CALLS = 20


async def calls_returning(storage: Storage, namespace: str, memory_id: str,
                          limit: int = RECENT_CALLS) -> list[Any]:
    """The namespace's recent searches that returned `memory_id`, newest first."""
    return await storage.calls_returning(namespace, memory_id, limit)


async def call_story(storage: Storage, namespace: str, call_id: str,
                     spaces: Sequence[str] = ()) -> dict[str, Any] | None:
    """One audited call of the namespace and the memories it returned, in order, each with
    its score and the memory (None when it has since been forgotten), looked up in `spaces`
    (the partitions the reader sees; default: the namespace)."""
    call = await storage.call_results(namespace, call_id)
    if call is None:
        return None
    ids = [mid for mid, _ in call.returned]
    found = {}
    for mid in ids:  # by id, superseded rows too: the page shows what the agent was given
        for space in spaces or (namespace,):
            rows, _ = await storage.query_memories(
                space, MemoryFilter(memory_id=mid, state="all"), 1, 0)
            if rows:
                found[mid] = rows[0]
                break
    returned = [{"rank": i, "id": mid, "score": score, "memory": found.get(mid)}
                for i, (mid, score) in enumerate(call.returned, 1)]
    return {"call": call, "returned": returned}
