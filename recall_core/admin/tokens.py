"""Admin tokens: like namespace tokens (shown once, only the SHA-256 stored) but kept in their
own table, so they never work on /mcp or /a2a, and namespace tokens never work on /admin."""

from __future__ import annotations

import secrets
from typing import Any

from ..tokens import hash_token

ADMIN_TOKEN_PREFIX = "rcla_"


def new_admin_token() -> str:
    return ADMIN_TOKEN_PREFIX + secrets.token_urlsafe(32)


async def create_admin_token(storage: Any, name: str = "admin") -> str:
    name = name.strip() or "admin"
    token = new_admin_token()
    await storage.create_admin_token(hash_token(token), name)
    return token


async def admin_name(storage: Any, token: str) -> str | None:
    """The name of the admin token `token`, None if it is not a live admin token."""
    if not token or not hasattr(storage, "admin_for_token"):
        return None
    return await storage.admin_for_token(hash_token(token))
