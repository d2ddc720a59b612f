"""Who sees which memories: the partitions of a namespace.

The rule (README, "Agents and visibility"): a memory stored through an agent's credential is
PRIVATE to that agent unless it is stored as shared; the owner's memories are always shared.
An agent sees the shared memories and its own private ones, never another agent's private
ones; the owner sees everything in the namespace.

It is kept by storing each agent's private memories in a storage namespace of their own, the
partition `"{namespace}/{agent}"`, and the shared ones in the namespace itself. Every rule
storage and core keep per namespace (one current value per fact, consolidation, the fair
queue, the rankers' caches, decay) then holds per visibility by construction: an agent's
private "I work at Globex" is a fact of its partition and never supersedes the owner's
shared "I work at Acme". Namespaces never contain "/" (`valid_namespace`, checked wherever a
token or a namespace is made, and by storage itself), so no credential can name a partition.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidParam
from .principal import Principal

SEP = "/"
#: An agent's name (`principal.valid_agent_name`), as a JSON-schema pattern.
AGENT_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
SHARED = "shared"
PRIVATE = "private"
VISIBILITIES = (PRIVATE, SHARED)

MAX_NAMESPACE_LEN = 200
# No slash (the partition separator, and a path segment of the admin API) or control
# characters; no whitespace at either end. Spelled without \s so that Python and the OpenAPI
# document's (ECMA) regex dialect agree on every character.
_EDGE_BAD = r"/\x00-\x20\x7f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_MID_BAD = r"/\x00-\x1f\x7f"
NAMESPACE_PATTERN = f"^[^{_EDGE_BAD}](?:[^{_MID_BAD}]*[^{_EDGE_BAD}])?$"
_NAMESPACE = re.compile(NAMESPACE_PATTERN)


def valid_namespace(namespace: Any) -> str:
    """`namespace` if it can name a namespace (never a partition), else InvalidParam."""
    if not isinstance(namespace, str) or not namespace.strip():
        raise InvalidParam("namespace is empty. Pass the namespace's name, e.g. 'alice'.")
    if not _NAMESPACE.fullmatch(namespace):
        raise InvalidParam(f"namespace {namespace!r} has leading/trailing spaces, a slash or "
                           f"control characters. Use a plain name such as 'alice' or "
                           f"'team-ops' ('/' separates an agent's private memories).")
    if len(namespace) > MAX_NAMESPACE_LEN:
        raise InvalidParam(f"namespace is {len(namespace)} characters long; at most "
                           f"{MAX_NAMESPACE_LEN} are allowed.")
    return namespace


class CallerNamespace(str):
    """The caller's namespace as the plain string plugin tools have always been given
    (`register.answer`, `register.caller_namespace`), carrying the principal: a service call
    made with it acts for that caller (an agent sees only what it may), never as the owner."""

    principal: Principal

    def __new__(cls, principal: Principal) -> "CallerNamespace":
        out = super().__new__(cls, principal.namespace)
        out.principal = principal
        return out


def partition(namespace: str, agent: str | None) -> str:
    """The storage namespace of `agent`'s private memories (the namespace itself for None)."""
    return namespace if agent is None else f"{namespace}{SEP}{agent}"


def split(space: str) -> tuple[str, str | None]:
    """(namespace, agent) of a storage namespace: agent None for the shared one."""
    namespace, sep, agent = space.partition(SEP)
    return (namespace, agent) if sep else (namespace, None)


def visibility_of(space: str) -> str:
    return PRIVATE if SEP in space else SHARED


def home(principal: Principal) -> str:
    """Where the principal's own things live: its private partition (an agent) or the
    namespace (the owner). A2A tasks are kept there, so no agent reads another's."""
    return partition(principal.namespace, principal.agent)


def parse_visibility(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if value not in VISIBILITIES:
        raise InvalidParam(f"visibility must be 'private' or 'shared', got {value!r}. Omit it "
                           f"for the default (private for an agent's credential, shared for "
                           f"the owner's).")
    return str(value)


def write_partition(principal: Principal, visibility: Any = None) -> str:
    """Where a store by `principal` goes: an agent's private partition unless it asks for
    shared; the owner's always the namespace (the owner has no private memories)."""
    wanted = parse_visibility(visibility)
    if principal.is_owner:
        if wanted == PRIVATE:
            raise InvalidParam("visibility 'private' is for agents' credentials: the owner's "
                               "memories are shared with every agent of the namespace. Omit "
                               "visibility, or store through an agent's token.")
        return principal.namespace
    return principal.namespace if wanted == SHARED else home(principal)


def agent_partitions(principal: Principal) -> tuple[str, ...]:
    """What an agent reads: the shared memories, then its own."""
    return (principal.namespace, home(principal))


def changeable(principal: Principal, space: str) -> bool:
    """Whether `principal` may change (delete, pin, correct, consolidate, erase) the memories
    of the storage namespace `space`: the owner every partition of its namespace, an agent
    only its private partition. Shared memories are changed by the owner, or replaced by a
    newer shared store."""
    if principal.is_owner:
        return split(space)[0] == principal.namespace
    return space == home(principal)
