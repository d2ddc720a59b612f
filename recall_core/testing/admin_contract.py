"""`AdminStorageContract`: conformance tests of the admin capability
(`recall_core.contracts.admin.AdminStorage`), for backends that offer it.

    class TestMyAdmin(AdminStorageContract):
        def make_storage(self, location):
            return MyStorage(location)

Same fixtures as `StorageContract` (`storage_location`, a fresh opened `storage` per test);
everything goes through public methods.
"""

from __future__ import annotations

import inspect
from datetime import timedelta
from typing import Any

import pytest
import pytest_asyncio

from ..contracts import AdminAction, AdminStorage, MemoryFilter, token_id
from ..models import Operation, utcnow
from ..contracts import Storage
from ..admin.tokens import hash_token, new_token

from .storage_contract.base import T0, memory, operation
from .helpers import supersede


class AdminStorageContract:
    pytestmark = [pytest.mark.asyncio, pytest.mark.recall_contract]

    def make_storage(self, location: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement make_storage(location).")

    @pytest.fixture
    def storage_location(self, tmp_path: Any) -> Any:
        return tmp_path

    @pytest_asyncio.fixture
    async def storage(self, storage_location: Any) -> Any:
        made = self.make_storage(storage_location)
        if inspect.isawaitable(made):
            made = await made
        await made.open()
        yield made
        await made.close()

    async def test_is_an_admin_storage(self, storage: Storage) -> None:
        assert isinstance(storage, AdminStorage)

    async def test_admin_tokens_are_not_namespace_tokens(self, storage: Any) -> None:
        admin, user = new_token(), new_token()
        await storage.create_admin_token(hash_token(admin), "ops")
        await storage.create_token("alice", hash_token(user))
        assert await storage.admin_for_token(hash_token(admin)) == "ops"
        assert await storage.namespace_for_token(hash_token(admin)) is None
        assert await storage.admin_for_token(hash_token(user)) is None
        assert await storage.revoke_admin_token(hash_token(admin)) is True
        assert await storage.admin_for_token(hash_token(admin)) is None
        assert await storage.revoke_admin_token(hash_token(admin)) is False

    async def test_list_namespaces_counts_and_activity(self, storage: Any) -> None:
        old = memory("alice", "old value", minutes=0, entity="u", attribute="city", value="a")
        new = memory("alice", "new value", minutes=5, entity="u", attribute="city", value="b")
        await storage.insert_memories([old])
        await supersede(storage, "alice", [old.id], T0 + timedelta(minutes=5), [new])
        await storage.enqueue(operation("bob", minutes=1))
        await storage.create_token("carol", hash_token(new_token()))
        gone = new_token()
        await storage.create_token("dave", hash_token(gone))
        await storage.revoke_token(hash_token(gone))  # only a revoked token: not listed
        rows, total = await storage.list_namespaces(10, 0)
        assert total == 3 and [r.namespace for r in rows] == ["alice", "bob", "carol"]
        alice, bob, carol = rows
        assert (alice.active_memories, alice.superseded_memories) == (1, 1)
        assert alice.last_activity == T0 + timedelta(minutes=5)
        assert bob.queued_jobs == 1 and bob.last_activity == T0 + timedelta(minutes=1)
        assert carol.active_tokens == 1 and carol.last_activity is not None
        page, total = await storage.list_namespaces(1, 1)
        assert [r.namespace for r in page] == ["bob"] and total == 3

    async def test_tokens_listed_and_revoked_by_id_within_namespace(self, storage: Any) -> None:
        raw = new_token()
        await storage.create_token("alice", hash_token(raw))
        await storage.create_token("bob", hash_token(new_token()))
        (info,) = await storage.list_tokens("alice")
        assert info.token_id == token_id(hash_token(raw)) and info.revoked_at is None
        assert raw not in info.model_dump_json()
        assert await storage.revoke_token_id("bob", info.token_id) is False  # not bob's
        assert await storage.revoke_token_id("alice", info.token_id[:8]) is False  # too short
        assert await storage.revoke_token_id("alice", info.token_id) is True
        assert await storage.namespace_for_token(hash_token(raw)) is None
        (info,) = await storage.list_tokens("alice")
        assert info.revoked_at is not None

    async def test_tokens_listed_with_agent_and_scopes(self, storage: Any) -> None:
        """A token's agent and scopes come back as stored; one made without scopes (every
        token made before scopes existed) lists all three."""
        owner, reader = hash_token(new_token()), hash_token(new_token())
        await storage.create_token("alice", owner)
        await storage.create_token("alice", reader, agent="dashboard",
                                   scopes="memory:read memory:forget")
        listed = {t.token_id: t for t in await storage.list_tokens("alice")}
        assert listed[token_id(owner)].agent is None
        assert listed[token_id(owner)].scopes == ["memory:read", "memory:write", "memory:forget"]
        assert listed[token_id(reader)].agent == "dashboard"
        assert listed[token_id(reader)].scopes == ["memory:read", "memory:forget"]
        assert listed[token_id(reader)].model_dump(mode="json")["scopes"] == [
            "memory:read", "memory:forget"]

    async def test_query_memories_filters(self, storage: Any) -> None:
        a = memory("alice", "Prefers Dark mode", minutes=1, type="preference", topic="ui",
                   session_id="s1", agent_id="cli", source_job_id="j1")
        b = memory("alice", "Uses Postgres 16", minutes=2, topic="db", session_id="s2",
                   source_job_id="j1")
        c = memory("alice", "Used Postgres 15", minutes=0, topic="db")
        other = memory("bob", "Prefers dark mode too", minutes=3, type="preference")
        await storage.insert_memories([a, b, c, other])
        await supersede(storage, "alice", [c.id], T0 + timedelta(minutes=2), [])

        async def ids(**where: Any) -> list[str]:
            rows, total = await storage.query_memories("alice", MemoryFilter(**where), 50, 0)
            assert total == len(rows)
            return [m.id for m in rows]

        assert await ids() == [b.id, a.id]  # active, newest first
        assert await ids(state="all") == [b.id, a.id, c.id]
        assert await ids(state="superseded") == [c.id]
        assert await ids(type="preference") == [a.id]
        assert await ids(topic="db", state="all") == [b.id, c.id]
        assert await ids(session_id="s1") == [a.id]
        assert await ids(agent_id="cli") == [a.id]
        assert await ids(text="dark MODE") == [a.id]
        assert await ids(text="postgres", state="all") == [b.id, c.id]
        assert await ids(source_job_id="j1") == [b.id, a.id]
        assert await ids(memory_id=c.id, state="all") == [c.id]
        assert await ids(memory_id=other.id, state="all") == []  # another namespace
        assert await ids(text="%") == [] and await ids(text="_") == []
        page, total = await storage.query_memories("alice", MemoryFilter(state="all"), 1, 1)
        assert [m.id for m in page] == [a.id] and total == 3

    async def test_list_and_retry_jobs(self, storage: Any) -> None:
        for i, ns in enumerate(["alice", "alice", "bob"]):
            await storage.enqueue(operation(ns, f"k{i}", minutes=i))
        jobs = []
        for _ in range(3):
            jobs.append(await storage.claim_job(60))
        for job in jobs:
            await storage.fail_job(job.id, job.attempts, f"boom {job.namespace}", retry=False)
        rows, total = await storage.list_jobs("alice", ["failed"], 10, 0)
        assert total == 2 and all(j.namespace == "alice" and j.status == "failed" for j in rows)
        assert rows[0].created_at > rows[1].created_at
        rows, total = await storage.list_jobs(None, ["failed", "queued"], 10, 0)
        assert total == 3
        bob_job = next(j for j in jobs if j.namespace == "bob")
        assert await storage.retry_job("alice", bob_job.id) is False  # not alice's
        assert await storage.retry_job(None, bob_job.id) is True
        assert await storage.retry_job(None, bob_job.id) is False  # no longer failed
        again = await storage.get_operation("bob", bob_job.id)
        assert isinstance(again, Operation)
        assert again.status == "queued" and again.attempts == 0 and again.error == "boom bob"
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.id == bob_job.id and claimed.attempts == 1

    async def test_audit_rows_survive_namespace_erasure(self, storage: Any) -> None:
        await storage.insert_memories([memory("alice", "x")])
        await storage.record_admin_action(AdminAction(
            actor="admin:ops", action="erase_namespace", namespace="alice",
            detail={"memories_deleted": 1, "at": utcnow()}))
        await storage.record_admin_action(AdminAction(
            actor="admin:ops", action="revoke_token", namespace="bob", result="error",
            error="no such token"))
        await storage.delete_namespace("alice")
        rows, total = await storage.list_admin_actions(10, 0)
        assert total == 2
        assert [r.action for r in rows] == ["revoke_token", "erase_namespace"]
        assert rows[0].result == "error" and rows[0].error == "no such token"
        assert rows[1].detail["memories_deleted"] == 1 and rows[1].namespace == "alice"
        assert rows[1].at.utcoffset() == timedelta(0)

    async def test_anonymise_admin_actions(self, storage: Any) -> None:
        for actor, ns in (("admin:ops", "alice"), ("namespace:alice", "alice"),
                          ("admin:ops", "bob")):
            await storage.record_admin_action(AdminAction(
                actor=actor, action="x", namespace=ns, result="error",
                error=f"No token in namespace {ns!r}"))
        assert await storage.anonymise_admin_actions("alice", "erased:1234") == 3
        rows, _ = await storage.list_admin_actions(10, 0)
        assert [(r.actor, r.namespace) for r in rows] == [
            ("admin:ops", "bob"), ("namespace:erased:1234", "erased:1234"),
            ("admin:ops", "erased:1234")]
        assert [r.error for r in rows] == ["No token in namespace 'bob'"] + \
            ["No token in namespace 'erased:1234'"] * 2
        assert await storage.anonymise_admin_actions("alice", "erased:1234") == 0
