"""What one caller sees: the partitions of its namespace it reads (`access.partitions`), and
the service's reads and changes spread over them.

One partition (the owner of a namespace without agents, i.e. every single-user server) is
the plain namespace code path: each helper below calls storage once, exactly as before.
Memory ids are globally unique, so a lookup by id in several partitions finds at most one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..access import partitions as parts
from ..access.principal import Principal
from ..contracts import Erased, Storage
from ..errors import MemoryNotFound, RecallError
from ..models import Memory
from ..search.request import SearchOutcome, SearchRequest

T = TypeVar("T")

#: What the service's methods accept as the caller: a verified principal, or a namespace
#: name meaning its owner (operator commands, the CLI, older callers).
Caller = Principal | str


@dataclass(frozen=True)
class View:
    """A caller and the storage namespaces it reads, its shared namespace first."""

    principal: Principal
    partitions: tuple[str, ...]

    @property
    def namespace(self) -> str:
        return self.principal.namespace

    @property
    def home(self) -> str:
        return parts.home(self.principal)

    def changeable(self, space: str) -> bool:
        return parts.changeable(self.principal, space)

    @property
    def writable(self) -> tuple[str, ...]:
        """The partitions it reads and may change (consolidation, erase)."""
        return tuple(p for p in self.partitions if self.changeable(p))


def principal_of(who: Caller) -> Principal:
    """A bare namespace is its owner; a `CallerNamespace` (what tools are given) its caller."""
    if isinstance(who, Principal):
        return who
    carried = getattr(who, "principal", None)
    return carried if isinstance(carried, Principal) else Principal(who)


async def view_of(storage: Storage, who: Caller) -> View:
    """The owner reads the namespace and every agent's partition that exists; an agent the
    namespace and its own partition."""
    principal = principal_of(who)
    if principal.is_owner:
        found = await storage.list_partitions(principal.namespace)
        return View(principal, (principal.namespace, *found))
    return View(principal, parts.agent_partitions(principal))


async def each(spaces: Sequence[str], call: Callable[[str], Awaitable[T]]) -> list[T]:
    """`call(space)` for every partition; one partition: one plain call."""
    if len(spaces) == 1:
        return [await call(spaces[0])]
    return list(await asyncio.gather(*(call(s) for s in spaces)))


async def locate(storage: Storage, view: View, memory_id: str) -> str | None:
    """The partition (among those the caller reads) holding the active memory `memory_id`."""
    found = await each(view.partitions,
                       lambda s: storage.get_memories(s, [memory_id]))
    for space, rows in zip(view.partitions, found):
        if rows:
            return space
    return None


async def changeable_home(storage: Storage, view: View, memory_id: str, what: str) -> str:
    """The partition of a memory the caller is about to change: MEMORY_NOT_FOUND when it
    sees no such memory, FORBIDDEN when it sees it but may not change it (an agent and a
    shared memory)."""
    if len(view.partitions) == 1:
        return view.partitions[0]  # the plain path: the operation itself says not found
    space = await locate(storage, view, memory_id)
    if space is None:
        raise MemoryNotFound(
            f"No memory with id {memory_id!r} is visible to this credential. Find ids with "
            f"inspect_memories or search_memories.")
    if not view.changeable(space):
        raise RecallError(
            f"Memory {memory_id!r} is shared: an agent's credential can {what} only its own "
            f"private memories, and shared memories are changed by the namespace's owner. Ask "
            f"the owner, or store the new value (a newer fact replaces the old one).",
            code="FORBIDDEN")
    return space


async def list_page(storage: Storage, spaces: Sequence[str], limit: int, offset: int
                    ) -> tuple[list[Memory], int]:
    """`list_memories` over several partitions: newest first, as one list."""
    if len(spaces) == 1:
        return await storage.list_memories(spaces[0], limit, offset)
    pages = await each(spaces, lambda s: storage.list_memories(s, offset + limit, 0))
    rows = sorted((m for page, _ in pages for m in page),
                  key=lambda m: (m.created_at, m.id), reverse=True)
    return rows[offset:offset + limit], sum(total for _, total in pages)


async def stats_of(storage: Storage, spaces: Sequence[str]) -> dict[str, Any]:
    """Counts summed over the partitions: pending (queued or running) jobs in one read per
    partition first, then active memories by type, then failed jobs."""
    pending = sum(await each(spaces, lambda s: storage.count_jobs(s, ("queued", "running"))))
    by_type: dict[str, int] = {}
    for counts in await each(spaces, storage.stats):
        for t, n in counts.items():
            by_type[t] = by_type.get(t, 0) + int(n)
    failed = sum(await each(spaces, lambda s: storage.count_jobs(s, "failed")))
    return {"pending": pending, "by_type": by_type, "failed": failed}


async def recent_failures(storage: Storage, spaces: Sequence[str], limit: int
                          ) -> list[dict[str, Any]]:
    found = [f for rows in await each(spaces, lambda s: storage.recent_failures(s, limit))
             for f in rows]
    found.sort(key=lambda f: str(f.get("finished_at") or ""), reverse=True)
    return found[:limit]


def visible(memory: Memory) -> dict[str, Any]:
    """A memory as tools show it, with its visibility (and the agent of a private one)."""
    out = memory.public()
    out["visibility"] = parts.visibility_of(memory.namespace)
    agent = parts.split(memory.namespace)[1]
    if agent is not None:
        out["private_to"] = agent
    return out


async def query_page(storage: Any, spaces: Sequence[str], where: Any, limit: int, offset: int
                     ) -> tuple[list[Memory], int]:
    """The admin `query_memories` over several partitions, newest first as one list."""
    if len(spaces) == 1:
        return await storage.query_memories(spaces[0], where, limit, offset)
    pages = await each(spaces, lambda s: storage.query_memories(s, where, offset + limit, 0))
    rows = sorted((m for page, _ in pages for m in page),
                  key=lambda m: (m.created_at, m.id), reverse=True)
    return rows[offset:offset + limit], sum(total for _, total in pages)


def add_erased(erased: Sequence[Erased]) -> Erased:
    """The erases of several partitions as one."""
    if len(erased) == 1:
        return erased[0]
    tables: dict[str, int] = {}
    for e in erased:
        for table, n in e.tables.items():
            tables[table] = tables.get(table, 0) + n
    return Erased(sum(e.memories for e in erased), sum(e.tokens_revoked for e in erased), tables)


def add_results(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Consolidation's answers for several partitions as one: counts added, lists joined."""
    if len(results) == 1:
        return results[0]
    out: dict[str, Any] = {}
    for result in results:
        for key, value in result.items():
            if key not in out:
                out[key] = list(value) if isinstance(value, list) else value
            elif isinstance(value, bool):
                out[key] = out[key] or value
            elif isinstance(value, (int, float)):
                out[key] += value
            elif isinstance(value, list):
                out[key].extend(value)
    return out


def search_data(request: SearchRequest, outcome: SearchOutcome) -> dict[str, Any]:
    """A search's answer as the tools give it (the `data` of the envelope)."""
    results = [{**visible(m), "score": round(s, 6)} for m, s in outcome.results]
    if request.as_of is not None:
        for row, (m, _) in zip(results, outcome.results):
            row["valid_from"] = m.valid_from.isoformat()
            row["valid_until"] = m.valid_until.isoformat() if m.valid_until else None
    data: dict[str, Any] = {"results": results, "total": outcome.matched,
                            "degraded": outcome.degraded}
    if request.max_tokens is not None:
        data["tokens"] = outcome.tokens
        data["truncated"] = outcome.truncated
    return data
