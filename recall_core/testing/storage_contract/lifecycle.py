"""Opening, closing, reopening, two instances on one database, tokens, enqueue and idempotency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ...contracts import (AdminStorage, Capabilities, OAuthStorage, Storage, TokenGrant)
from ...contracts.capabilities import PROTOCOLS
from .base import A, B, ContractBase, memory, operation, same_memory


class LifecycleTests(ContractBase):
    async def test_implements_protocol(self, storage: Storage) -> None:
        assert isinstance(storage, Storage)
        assert isinstance(storage.description, str) and storage.description
        assert isinstance(storage.capabilities, Capabilities)
        assert isinstance(storage.status(), dict)
        for name, protocol in {**PROTOCOLS, "admin": AdminStorage, "oauth": OAuthStorage}.items():
            if getattr(storage.capabilities, name):  # declared: its methods are there
                assert isinstance(storage, protocol), f"declares {name} without {protocol.__name__}"

    async def test_data_persists_across_close_and_reopen(self, storage: Storage, reopen: Any) -> None:
        m = memory(A, "the user lives in Lisbon", embedding=self.vec(1, 0))
        await storage.insert_memories([m])
        op, _ = await storage.enqueue(operation(A, "k1", payload={"text": "hi"}))
        await storage.create_token(A, "hash-1")
        await storage.save_task(A, "t1", {"state": "working"})
        await storage.close()
        await storage.close()  # idempotent
        again = await reopen()
        same_memory((await again.get_memories(A, [m.id]))[0], m)
        assert (await again.get_operation(A, op.id)) == op
        assert await again.namespace_for_token("hash-1") == A
        assert await again.get_task(A, "t1") == {"state": "working"}
        if again.capabilities.vectors:
            assert await again.get_embeddings(A, [m.id]) == {m.id: pytest.approx(self.vec(1, 0))}

    async def test_two_instances_share_one_database(self, storage: Storage, reopen: Any) -> None:
        other = await reopen()
        m = memory(A, "written by the first instance")
        await storage.insert_memories([m])
        assert [x.id for x in await other.get_memories(A, [m.id])] == [m.id]
        await other.create_token(B, "hash-2")
        assert await storage.namespace_for_token("hash-2") == B
        assert await other.namespace_version(A) == await storage.namespace_version(A)

    async def test_token_create_lookup_revoke(self, storage: Storage) -> None:
        await storage.create_token(A, "h-a")
        await storage.create_token(B, "h-b")
        assert await storage.namespace_for_token("h-a") == A
        assert await storage.namespace_for_token("h-b") == B
        assert await storage.namespace_for_token("unknown") is None
        assert await storage.revoke_token("h-a") is True
        assert await storage.namespace_for_token("h-a") is None
        assert await storage.revoke_token("h-a") is False
        assert await storage.revoke_token("unknown") is False
        assert await storage.namespace_for_token("h-b") == B

    async def test_token_grant_keeps_agent_and_scopes(self, storage: Storage) -> None:
        await storage.create_token(A, "h-owner")
        await storage.create_token(A, "h-agent", agent="planner", scopes="memory:read")
        assert await storage.grant_for_token("h-owner") == TokenGrant(A, None, None)
        assert await storage.grant_for_token("h-agent") == TokenGrant(A, "planner", "memory:read")
        assert await storage.namespace_for_token("h-agent") == A
        assert await storage.grant_for_token("unknown") is None
        assert await storage.revoke_token("h-agent") is True
        assert await storage.grant_for_token("h-agent") is None

    async def test_enqueue_creates_once_then_returns_the_stored_operation(self, storage: Storage) -> None:
        first = operation(A, "key-1", payload={"text": "café ☕", "nested": {"n": [1, 2]}})
        stored, created = await storage.enqueue(first)
        assert created is True
        assert stored == first
        assert (stored.status, stored.attempts, stored.kind) == ("queued", 0, "extract")
        retry = operation(A, "key-1", payload={"text": "different"})
        again, created = await storage.enqueue(retry)
        assert created is False
        assert again == first  # the original op, not the retry's id or payload
        assert await storage.get_operation(A, first.id) == first
        assert await storage.get_operation(A, retry.id) is None
        assert await storage.count_jobs(A, "queued") == 1

    async def test_enqueue_same_key_in_two_namespaces_is_two_operations(self, storage: Storage) -> None:
        a, created_a = await storage.enqueue(operation(A, "shared-key"))
        b, created_b = await storage.enqueue(operation(B, "shared-key"))
        assert created_a and created_b and a.id != b.id
        assert await storage.get_operation(A, b.id) is None
        assert await storage.get_operation(B, a.id) is None
        assert (await storage.get_operation(B, b.id)).namespace == B  # type: ignore[union-attr]

    async def test_enqueue_is_atomic_under_50_concurrent_calls(self, storage: Storage) -> None:
        ops = [operation(A, "same-key", payload={"i": i}) for i in range(50)]
        results = await asyncio.gather(*(storage.enqueue(op) for op in ops))
        assert sum(created for _, created in results) == 1
        assert len({op.id for op, _ in results}) == 1
        winner = next(op for op, created in results if created)
        assert all(op == winner for op, _ in results)
        assert await storage.count_jobs(A, "queued") == 1
        assert await storage.count_jobs(None, "queued") == 1

    async def test_enqueue_is_atomic_across_instances(self, storage: Storage, reopen: Any) -> None:
        other = await reopen()
        calls = [(storage if i % 2 else other).enqueue(operation(A, "k")) for i in range(40)]
        results = await asyncio.gather(*calls)
        assert sum(created for _, created in results) == 1
        assert len({op.id for op, _ in results}) == 1
        assert await storage.count_jobs(A, "queued") == 1
