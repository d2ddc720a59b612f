"""What every part of the storage contract shares: the namespaces and times the tests use,
row builders, and the fixtures that open a backend (`ContractBase`)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import pytest_asyncio

from ...models import Memory, Operation, new_id
from ...contracts import (Storage)


A = "ns-a"
B = "ns-b"
T0 = datetime(2026, 1, 5, 9, 30, 0, 123456, tzinfo=timezone.utc)

HOSTILE_TERMS = [
    '"', '""', "'", "dark\"mode", 'a"b"c', "AND", "OR", "NOT", "NEAR", "NEAR(", "near/3",
    "and or not", "*", "dark*", "^", "^dark", ":", "text:", "text:dark", "col:", "(", ")", "()",
    "(dark", "dark)", "{", "}", "[", "]", "-", "-dark", "+", "+dark", "~", "@", "#", "%", "&",
    "|", "\\", "/", ";", "--", "/*", "*/", "';--", "'; DROP TABLE memories; --", "%s", "?",
    "$1", "!", "!dark", "<->", "<", ">", "=", ",", ".", "..", "…", "é", "naïve", "straße",
    "日本語", "東京", "عربي", "עברית", "😀", "👍🏽", "👨‍👩‍👧", "\u200b", "\ufeff", "\t", " ",
    "a" * 300, "0", "-1", "1e9", "null", "NULL",
]


def memory(namespace: str, text: str, *, minutes: float = 0, **fields: Any) -> Memory:
    """A memory created `minutes` after T0 (explicit times keep orderings deterministic)."""
    at = T0 + timedelta(minutes=minutes)
    fields.setdefault("created_at", at)
    fields.setdefault("valid_from", at)
    return Memory(namespace=namespace, text=text, **fields)


def operation(namespace: str, key: str | None = None, *, minutes: float = 0, **fields: Any) -> Operation:
    fields.setdefault("created_at", T0 + timedelta(minutes=minutes))
    return Operation(namespace=namespace, idempotency_key=key or new_id(), **fields)


def same_memory(got: Memory, want: Memory) -> None:
    """Equal in every field but the vector (datetimes compared as instants)."""
    assert got.model_dump(exclude={"embedding"}) == want.model_dump(exclude={"embedding"})


def assert_utc(*values: datetime | None) -> None:
    for value in values:
        if value is not None:
            assert value.tzinfo is not None and value.utcoffset() == timedelta(0), value


class ContractBase:
    """Base class of a backend's conformance tests. Override `make_storage`; optionally the
    `storage_location` fixture and `embedding_dim`."""

    # Explicit, so the suite also runs in projects using pytest-asyncio's strict mode.
    pytestmark = [pytest.mark.asyncio, pytest.mark.recall_contract]

    #: Width of the test vectors, for backends whose vector column has a fixed dimension.
    embedding_dim: int = 8

    #: Lease used where a test needs a claim to expire; keep it small, the test sleeps 3x it.
    short_lease: float = 0.05

    # -- how a backend plugs in -----------------------------------------------------------
    def make_storage(self, location: Any) -> Storage | Awaitable[Storage]:
        """A new, unopened storage for the database identified by `location` (what the
        `storage_location` fixture gave). Called again with the same location by `reopen`."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement make_storage(location) -> Storage.")

    @pytest.fixture
    def storage_location(self, tmp_path: Any) -> Any:
        """Identifies one fresh, empty database per test. Default: a temporary directory."""
        return tmp_path

    async def _build(self, location: Any) -> Storage:
        made = self.make_storage(location)
        if inspect.isawaitable(made):
            made = await made
        return made  # type: ignore[return-value]

    @pytest_asyncio.fixture
    async def reopen(self, storage_location: Any) -> Any:
        """`await reopen()` opens another instance on the same database (closed at teardown)."""
        opened: list[Storage] = []

        async def _open() -> Storage:
            s = await self._build(storage_location)
            await s.open()
            opened.append(s)
            return s

        yield _open
        for s in reversed(opened):
            await s.close()

    @pytest_asyncio.fixture
    async def storage(self, reopen: Callable[[], Awaitable[Storage]]) -> Storage:
        return await reopen()

    def vec(self, *components: float) -> list[float]:
        """A test vector: `components` padded with zeros to `embedding_dim`."""
        return list(components) + [0.0] * (self.embedding_dim - len(components))

    @staticmethod
    def need(storage: Storage, capability: str) -> None:
        if not getattr(storage.capabilities, capability):
            pytest.skip(f"{type(storage).__name__} does not declare the {capability} capability")

    @staticmethod
    async def all_memories(storage: Storage, namespace: str, active_only: bool = True) -> list[Memory]:
        return [m async for m in storage.iter_memories(namespace, active_only=active_only)]

    async def claim_expired(self, storage: Storage, op_id: str, attempts: int) -> Operation:
        """Claim `op_id` with a short lease, let it expire, claim again: the stale claim has
        `attempts`, the live one `attempts + 1`."""
        first = await storage.claim_job(self.short_lease)
        assert first is not None and first.id == op_id and first.attempts == attempts
        await asyncio.sleep(self.short_lease * 3)
        second = await storage.claim_job(60)
        assert second is not None and second.id == op_id and second.attempts == attempts + 1
        return second
