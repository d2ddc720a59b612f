"""Bearer tokens. Raw tokens are shown once at creation and never stored: storage keeps their
SHA-256. Namespace tokens open one namespace on /mcp and /a2a; admin tokens are kept in their
own table, so they never work on /mcp or /a2a, and namespace tokens never work on /admin.
(No MCP imports here: the CLI's token commands stay fast.)"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from ..access.partitions import valid_namespace
from ..access.principal import ALL_SCOPES, parse_scopes, scope_text, valid_agent_name
from ..contracts import Storage

TOKEN_PREFIX = "rcl_"
ADMIN_TOKEN_PREFIX = "rcla_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


async def create_token(storage: Storage, namespace: str, agent: str | None = None,
                       scopes: Any = None) -> str:
    """A new token for `namespace` (the owner's, or `agent`'s inside it) with `scopes`
    (None: all; see `access.principal`). Stored with NULL scopes when it has all of them,
    like every token made before scopes existed."""
    # Never a partition ("ns/agent"): a token opens a namespace, and an agent's private
    # memories only through a token naming that agent.
    namespace = valid_namespace(namespace.strip() if isinstance(namespace, str) else namespace)
    agent = valid_agent_name(agent)
    granted = parse_scopes(scopes)
    token = new_token()
    await storage.create_token(namespace, hash_token(token), agent=agent,
                               scopes=None if granted == ALL_SCOPES else scope_text(granted))
    return token


def new_admin_token() -> str:
    return ADMIN_TOKEN_PREFIX + secrets.token_urlsafe(32)


async def create_admin_token(storage: Any, name: str = "admin") -> str:
    name = name.strip() or "admin"
    token = new_admin_token()
    await storage.create_admin_token(hash_token(token), name)
    return token


async def admin_name(storage: Any, token: str) -> str | None:
    """The name of the admin token `token`, None if it is not a live admin token."""
    if not token or not storage.capabilities.admin:
        return None
    return await storage.admin_for_token(hash_token(token))
