"""The principal behind a credential: a namespace (the owner, e.g. a user), optionally an agent
inside it, and the scopes it was granted.

Scopes (the MCP authorization spec's space-separated scope strings):
- `memory:read`: search, inspect, stats (and history, story, export of what it sees);
- `memory:write`: store, consolidate, pin, correct;
- `memory:forget`: delete a memory, erase (an agent: its private memories; the owner: the
  namespace).

A token made before scopes existed has all of them (`ALL_SCOPES`): existing tokens keep
working unchanged."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParam

READ = "memory:read"
WRITE = "memory:write"
FORGET = "memory:forget"
ALL_SCOPES: frozenset[str] = frozenset((READ, WRITE, FORGET))
#: In the order the README and `--help` list them.
SCOPE_ORDER: tuple[str, ...] = (READ, WRITE, FORGET)

_AGENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_AGENT_LEN = 64


def valid_agent_name(agent: Any) -> str | None:
    """`agent` checked: None/"" for the owner, else a plain name (letters, digits, '.', '_',
    '-'; at most 64; starting with a letter or digit)."""
    if agent is None or (isinstance(agent, str) and not agent.strip()):
        return None
    if not isinstance(agent, str) or not _AGENT.fullmatch(agent):
        raise InvalidParam(
            f"agent {agent!r} is not a plain name. Use letters, digits, '.', '_' or '-' "
            f"(at most {MAX_AGENT_LEN}, starting with a letter or digit), e.g. 'planner'.")
    return agent


def parse_scopes(scopes: Any) -> frozenset[str]:
    """Scopes from a space- or comma-separated string or a list; None or empty: all scopes.
    An unknown scope is an error naming the known ones."""
    if scopes is None:
        return ALL_SCOPES
    if isinstance(scopes, str):
        items = [s for s in re.split(r"[\s,]+", scopes) if s]
    elif isinstance(scopes, Iterable):
        items = [s for s in scopes if isinstance(s, str) and s.strip()]
        if len(items) != len(list(scopes)):
            raise InvalidParam("scopes must be strings, e.g. ['memory:read'].")
    else:
        raise InvalidParam(f"scopes must be a list or a space-separated string, got {scopes!r}.")
    if not items:
        return ALL_SCOPES
    unknown = sorted(set(items) - ALL_SCOPES)
    if unknown:
        raise InvalidParam(f"unknown scope(s) {', '.join(map(repr, unknown))}: the scopes are "
                           f"{', '.join(SCOPE_ORDER)}.")
    return frozenset(items)


def scope_text(scopes: Iterable[str]) -> str:
    """Scopes as the space-separated string OAuth uses, in SCOPE_ORDER."""
    have = set(scopes)
    return " ".join(s for s in SCOPE_ORDER if s in have)


@dataclass(frozen=True)
class Principal:
    """A verified caller. `agent` None is the namespace's owner."""

    namespace: str
    agent: str | None = None
    scopes: frozenset[str] = field(default=ALL_SCOPES)

    @property
    def is_owner(self) -> bool:
        return self.agent is None

    def has(self, scope: str) -> bool:
        return scope in self.scopes
