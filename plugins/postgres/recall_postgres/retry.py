"""Transactions that retry when PostgreSQL aborts them for a deadlock or a serialization
failure, and what a refused write means (`conflict`). Lock ordering (storage.py) makes these rare, not impossible (e.g. an erasure deleting
rows in heap order while a job supersedes two of them in id order); the loser's transaction
was rolled back entirely, so running it again is safe."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg

from recall_core import StorageConflict

T = TypeVar("T")

RETRYABLE = (asyncpg.exceptions.DeadlockDetectedError, asyncpg.exceptions.SerializationError)


async def in_transaction(pool: asyncpg.Pool, body: Callable[[asyncpg.Connection], Awaitable[T]],
                         attempts: int = 4) -> T:
    for attempt in range(attempts):
        try:
            async with pool.acquire() as con, con.transaction():
                return await body(con)
        except RETRYABLE:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.01 * 2 ** attempt * (1 + random.random()))
    raise AssertionError("unreachable")


def conflict(exc: asyncpg.UniqueViolationError, namespace: str) -> StorageConflict:
    if exc.constraint_name == "memories_one_current":
        return StorageConflict(
            f"Refused a second current value for one (entity, attribute) in namespace "
            f"{namespace!r}: the database keeps at most one current row per fact. Nothing was "
            f"written.", "second_current")
    if exc.constraint_name == "memories_pkey":
        return StorageConflict(
            f"A memory id being written exists already ({exc.detail}). Nothing was written.",
            "duplicate_id")
    return StorageConflict(f"The database refused the write: {exc}. Nothing was written.",
                           "integrity")
