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
from ..models import Operation, Returned, ToolCallRecord, utcnow
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

    # -- the retrieval audit ----------------------------------------------------------------
    async def test_retrieval_audit_records_what_a_search_returned(self, storage: Any) -> None:
        a, b = memory("alice", "likes tea"), memory("alice", "lives in Lisbon")
        mine = memory("bob", "bob's own")
        await storage.insert_memories([a, b, mine])
        first = ToolCallRecord(tool="search_memories", namespace="alice", inputs_hash="h1",
                               status="ok", duration_ms=3.0, at=utcnow() - timedelta(seconds=5),
                               returned=[Returned(id=b.id, score=0.9), Returned(id=a.id, score=0.4)])
        second = ToolCallRecord(tool="search_memories", namespace="alice", inputs_hash="h2",
                                status="ok", duration_ms=2.0, returned=[Returned(id=a.id, score=0.7)])
        other = ToolCallRecord(tool="search_memories", namespace="bob", inputs_hash="h3",
                               status="ok", duration_ms=1.0, returned=[Returned(id=mine.id, score=1)])
        plain = ToolCallRecord(tool="get_memory_stats", namespace="alice", inputs_hash="h4",
                               status="ok", duration_ms=1.0)
        await storage.record_tool_calls([first, second, other, plain])
        hits = await storage.calls_returning("alice", a.id, 10)
        assert [(h.call_id, h.rank, h.score) for h in hits] == [
            (second.call_id, 1, pytest.approx(0.7)), (first.call_id, 2, pytest.approx(0.4))]
        assert await storage.calls_returning("bob", a.id, 10) == []  # another namespace's calls
        assert len(await storage.calls_returning("alice", a.id, 1)) == 1
        got = await storage.call_results("alice", first.call_id)
        assert got is not None and got.tool == "search_memories" and got.inputs_hash == "h1"
        assert [(i, pytest.approx(s)) for i, s in got.returned] == [(b.id, 0.9), (a.id, 0.4)]
        assert (await storage.call_results("alice", plain.call_id)).returned == []
        assert await storage.call_results("bob", first.call_id) is None

    async def test_retrieval_audit_goes_with_forget_and_erase(self, storage: Any) -> None:
        a, b = memory("alice", "likes tea"), memory("alice", "lives in Lisbon")
        mine = memory("bob", "bob's own")
        await storage.insert_memories([a, b, mine])
        call = ToolCallRecord(tool="search_memories", namespace="alice", inputs_hash="h",
                              status="ok", duration_ms=1.0,
                              returned=[Returned(id=a.id, score=0.5), Returned(id=b.id, score=0.4)])
        theirs = ToolCallRecord(tool="search_memories", namespace="bob", inputs_hash="h",
                                status="ok", duration_ms=1.0, returned=[Returned(id=mine.id, score=1)])
        await storage.record_tool_calls([call, theirs])
        async with storage.write("alice") as tx:
            assert await tx.delete([a.id]) == 1
        assert await storage.calls_returning("alice", a.id, 10) == []  # forgotten: gone
        assert [i for i, _ in (await storage.call_results("alice", call.call_id)).returned] == [b.id]
        await storage.delete_namespace("alice")
        assert await storage.calls_returning("alice", b.id, 10) == []
        assert await storage.call_results("alice", call.call_id) is None
        assert [h.call_id for h in await storage.calls_returning("bob", mine.id, 10)] == [theirs.call_id]
