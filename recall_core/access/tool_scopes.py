"""Which scope each operation needs: the one map MCP (tools/list and tools/call), A2A (skills)
and the inspector (pages) all read, so a credential's powers are the same on every transport.

Operations are named after the MCP tool that performs them; the few that exist only in the
inspector or A2A (pin, correct, retry a job) have their own names here. A tool a plugin adds is
not in the map: its scope follows from its annotations (`scope_for_annotations`), read the way
the MCP spec defines their defaults, so a tool that says nothing is treated as destructive."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import Forbidden
from .principal import FORGET, READ, WRITE, Principal, scope_text

#: operation -> the scope it needs.
OPERATION_SCOPES: Mapping[str, str] = {
    # MCP tools (recall_core/server/mcp/tools.py)
    "search_memories": READ,
    "inspect_memories": READ,
    "get_memory_stats": READ,
    "store_memory": WRITE,
    "consolidate_memories": WRITE,
    "delete_memory": FORGET,
    "delete_namespace_data": FORGET,
    # inspector pages and A2A skills that are not MCP tools
    "pin_memory": WRITE,
    "correct_memory": WRITE,
    "retry_job": WRITE,
}

#: A2A skill id -> the operation it performs (a2a/executor.py's SKILL_IDS).
A2A_SKILLS: Mapping[str, str] = {
    "store_memories": "store_memory",
    "search_memories": "search_memories",
}


def scope_for_annotations(annotations: Any) -> str:
    """The scope of a tool that is not in the map, from its MCP annotations: readOnlyHint
    true -> memory:read; destructiveHint false -> memory:write; else (destructive, or not
    said: the spec's default for a tool that is not read-only) -> memory:forget."""
    def hint(camel: str, snake: str) -> Any:
        if isinstance(annotations, Mapping):  # as a plugin registers them
            return annotations.get(camel, annotations.get(snake))
        return getattr(annotations, snake, None)  # the MCP SDK's ToolAnnotations

    if hint("readOnlyHint", "read_only_hint") is True:
        return READ
    if hint("destructiveHint", "destructive_hint") is False:
        return WRITE
    return FORGET


def required_scope(operation: str, annotations: Any = None) -> str:
    """The scope `operation` needs (a plugin tool's: from its annotations)."""
    return OPERATION_SCOPES.get(operation) or scope_for_annotations(annotations)


def forbidden_message(what: str, scope: str, held: Iterable[str]) -> str:
    have = scope_text(held) or "no scopes"
    return (f"{what} needs the {scope} scope; this credential has only: {have}. Nothing was "
            f"done. Use a token that has {scope}: the namespace's owner or an operator can "
            f"create one with `recall create-token NAMESPACE --scopes {scope}` (or the admin "
            f"API or the inspector's token form).")


def require_scope(principal: Principal, operation: str, what: str | None = None,
                  annotations: Any = None) -> None:
    """Raise Forbidden unless `principal` holds the scope `operation` needs. `what` names
    the operation in the message as the caller knows it (e.g. "the store_memories skill")."""
    scope = required_scope(operation, annotations)
    if not principal.has(scope):
        raise Forbidden(forbidden_message(what or operation, scope, principal.scopes))
