"""Agents' private partitions ("{namespace}/{agent}", `recall_core.access.partitions`): listing
them by a range scan, keeping them apart like any namespace, and no token for one."""

from __future__ import annotations

import pytest

from ...contracts import Storage
from .base import A, B, ContractBase, memory, operation


class PartitionTests(ContractBase):
    async def test_list_partitions_finds_exactly_the_namespaces_agents(self, storage: Storage) -> None:
        # Neighbours in code point order that are not partitions of A: A itself, A + "0"
        # (the range's end), A + "-x/..." (a longer name sharing the prefix), B's partition.
        for ns in (A, f"{A}/planner", f"{A}/writer", f"{A}0", f"{A}-x/planner", f"{B}/planner",
                   f"{A}/é-agent"):
            await storage.insert_memories([memory(ns, f"a memory of {ns}")])
        # A partition whose first store is still queued is listed too.
        await storage.enqueue(operation(f"{A}/queued", "k1", payload={"text": "hi"}))
        assert await storage.list_partitions(A) == sorted(
            [f"{A}/planner", f"{A}/writer", f"{A}/é-agent", f"{A}/queued"])
        assert await storage.list_partitions(B) == [f"{B}/planner"]
        assert await storage.list_partitions("nobody") == []
        assert await storage.list_partitions(f"{A}-x") == [f"{A}-x/planner"]

    async def test_an_erased_partition_is_no_longer_listed(self, storage: Storage) -> None:
        await storage.insert_memories([memory(f"{A}/planner", "private"),
                                       memory(f"{A}/writer", "private too"),
                                       memory(A, "shared")])
        await storage.delete_namespace(f"{A}/planner")
        assert await storage.list_partitions(A) == [f"{A}/writer"]
        assert len(await self.all_memories(storage, A)) == 1
        assert len(await self.all_memories(storage, f"{A}/writer")) == 1

    async def test_partitions_hold_their_own_current_fact(self, storage: Storage) -> None:
        shared = memory(A, "I work at Acme", entity="user", attribute="employer", value="Acme")
        private = memory(f"{A}/planner", "I work at Globex", entity="user",
                         attribute="employer", value="Globex", minutes=1)
        await storage.insert_memories([shared, private])
        assert [m.value for m in await storage.history(A, "user", "employer")] == ["Acme"]
        assert [m.value for m in await storage.history(f"{A}/planner", "user", "employer")] \
            == ["Globex"]
        assert [m.id for m in await storage.get_memories(A, [shared.id, private.id])] \
            == [shared.id]

    async def test_no_token_opens_a_partition(self, storage: Storage) -> None:
        with pytest.raises(ValueError):
            await storage.create_token(f"{A}/planner", "h-partition")
        assert await storage.namespace_for_token("h-partition") is None
