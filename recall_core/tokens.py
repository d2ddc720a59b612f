"""Bearer tokens: raw tokens are shown once at creation and never stored; storage keeps
their SHA-256. (No MCP imports here: the CLI's token commands stay fast.)"""

from __future__ import annotations

import hashlib
import secrets

from .protocols import Storage

TOKEN_PREFIX = "rcl_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


async def create_token(storage: Storage, namespace: str) -> str:
    namespace = namespace.strip()
    if not namespace:
        raise ValueError("namespace must not be empty")
    token = new_token()
    await storage.create_token(namespace, hash_token(token))
    return token
