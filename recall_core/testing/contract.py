"""`StorageContract`: the conformance suite every storage backend subclasses.

    import pytest
    from recall_core.testing import StorageContract

    class TestMyStorage(StorageContract):
        def make_storage(self, location):
            return MyStorage(location)          # not opened yet; the suite calls open()

        @pytest.fixture
        def storage_location(self, tmp_path):   # optional: default is a fresh tmp_path
            ...                                 # e.g. create a fresh database, yield its DSN

Each test gets a freshly opened storage on an empty database (`storage`), and can open more
instances on the same database with `reopen` (persistence, two processes sharing one file or
server). Everything goes through the public `Storage` methods only. Tests for an optional
capability are skipped with a reason when the backend does not declare it in
`storage.capabilities`; a declared one must have its protocol's methods.

The suite pins behaviour core relies on, including what the protocol leaves implicit:
`close()` may be called twice; `iter_memories` is an async generator (`async for m in
storage.iter_memories(ns)`); `fail_job` is ignored for a stale claim, like `complete_job`;
`delete_namespace` counts every memory row it erased (superseded ones too); reusing a memory
id raises; A2A task ids are per namespace.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import pytest_asyncio

from ..errors import StorageConflict
from ..models import Memory, Operation, ScoredId, ToolCallRecord, new_id, utcnow
from ..contracts import (AdminStorage, Capabilities, DecayRow, Storage, TaskKeys, TaskPage,
                         TaskQuery, TaskRow)
from ..contracts.capabilities import PROTOCOLS
from .helpers import supersede, complete_job, current_of, delete

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


class StorageContract:
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

    # == lifecycle =========================================================================
    async def test_implements_protocol(self, storage: Storage) -> None:
        assert isinstance(storage, Storage)
        assert isinstance(storage.description, str) and storage.description
        assert isinstance(storage.capabilities, Capabilities)
        assert isinstance(storage.status(), dict)
        for name, protocol in {**PROTOCOLS, "admin": AdminStorage}.items():
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

    # == tokens ============================================================================
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

    # == enqueue / idempotency =============================================================
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

    # == queue =============================================================================
    async def test_claim_job_takes_oldest_first_and_leases_it(self, storage: Storage) -> None:
        assert await storage.claim_job(60) is None
        ops = [operation(A, "late", minutes=2), operation(B, "early", minutes=0),
               operation(A, "middle", minutes=1)]
        for op in ops:
            await storage.enqueue(op)
        before = utcnow()
        claimed = [await storage.claim_job(60) for _ in range(3)]
        assert [c.idempotency_key for c in claimed] == ["early", "middle", "late"]  # type: ignore[union-attr]
        for c in claimed:
            assert c is not None and c.status == "running" and c.attempts == 1
            assert c.lease_until is not None and c.lease_until > before + timedelta(seconds=30)
            assert_utc(c.lease_until, c.created_at)
        assert await storage.claim_job(60) is None  # unexpired leases are not re-claimable
        assert await storage.count_jobs(None, "running") == 3

    async def test_expired_lease_is_claimed_again(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        again = await self.claim_expired(storage, op.id, attempts=1)
        assert again.status == "running"
        assert await storage.claim_job(60) is None

    async def test_concurrent_claims_take_each_job_once(self, storage: Storage, reopen: Any) -> None:
        other = await reopen()
        ids = {(await storage.enqueue(operation(A, minutes=i)))[0].id for i in range(10)}
        got = await asyncio.gather(*((storage if i % 2 else other).claim_job(60) for i in range(20)))
        claimed = [op.id for op in got if op is not None]
        assert sorted(claimed) == sorted(ids)

    async def test_complete_job_writes_everything_and_marks_done(self, storage: Storage) -> None:
        old = memory(A, "user's editor is vim", entity="user", attribute="editor", value="vim")
        kept = memory(A, "user likes tea", importance=0.25, minutes=1)
        await storage.insert_memories([old, kept])
        op, _ = await storage.enqueue(operation(A))
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.id == op.id
        new = memory(A, "user's editor is helix", entity="user", attribute="editor", value="helix",
                     source_job_id=op.id, minutes=2)
        at = T0 + timedelta(hours=1)
        assert await complete_job(storage, op, 1, [new], supersede=[(old.id, at)],
                                          refresh=[(kept.id, 0.75)]) is True
        done = await storage.get_operation(A, op.id)
        assert done is not None and done.status == "done" and done.error is None
        assert done.finished_at is not None
        assert_utc(done.finished_at)
        assert [m.id for m in await current_of(storage, A, "user", "editor")] == [new.id]
        history = await storage.history(A, "user", "editor")
        assert [m.id for m in history] == [old.id, new.id]
        assert history[0].valid_until == at and history[1].valid_until is None
        refreshed = (await storage.get_memories(A, [kept.id]))[0]
        assert refreshed.importance == 0.75 and refreshed.last_accessed_at is not None
        # refresh never lowers importance
        op2, _ = await storage.enqueue(operation(A, minutes=5))
        await storage.claim_job(60)
        assert await complete_job(storage, op2, 1, [], refresh=[(kept.id, 0.25)]) is True
        assert (await storage.get_memories(A, [kept.id]))[0].importance == 0.75
        assert await storage.count_jobs(A, "done") == 2

    async def test_complete_job_with_stale_claim_writes_nothing(self, storage: Storage) -> None:
        old = memory(A, "user's editor is vim")
        await storage.insert_memories([old])
        op, _ = await storage.enqueue(operation(A))
        await self.claim_expired(storage, op.id, attempts=1)
        late = memory(A, "written by the stale claim", minutes=1)
        assert await complete_job(storage, op, 1, [late], supersede=[(old.id, T0)]) is False
        assert await storage.get_memories(A, [late.id]) == []
        assert [m.id for m in await storage.get_memories(A, [old.id])] == [old.id]
        still = await storage.get_operation(A, op.id)
        assert still is not None and still.status == "running" and still.attempts == 2
        fresh = memory(A, "written by the live claim", minutes=1)
        assert await complete_job(storage, op, 2, [fresh]) is True
        # already done: a repeat of the same claim writes nothing either
        assert await complete_job(storage, op, 2, [memory(A, "twice", minutes=2)]) is False
        assert [m.text for m in await self.all_memories(storage, A)] == [
            "user's editor is vim", "written by the live claim"]

    async def test_complete_job_needs_a_running_job(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        assert await complete_job(storage, op, 0, [memory(A, "x")]) is False
        assert await complete_job(storage, (A, "no-such-job"), 1, [memory(A, "x")]) is False
        assert await self.all_memories(storage, A) == []
        assert (await storage.get_operation(A, op.id)).status == "queued"  # type: ignore[union-attr]

    async def test_complete_job_is_all_or_nothing(self, storage: Storage) -> None:
        existing = memory(A, "already stored")
        old = memory(A, "to be superseded", minutes=1)
        await storage.insert_memories([existing, old])
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        fine = memory(A, "would be new", minutes=2)
        clash = memory(A, "reuses an existing id", id=existing.id, minutes=3)
        try:
            ok = await complete_job(storage, op, 1, [fine, clash], supersede=[(old.id, T0)])
        except Exception:  # noqa: BLE001 - raising is one acceptable way to refuse
            ok = False
        assert ok is False
        assert await storage.get_memories(A, [fine.id]) == []
        assert [m.id for m in await storage.get_memories(A, [old.id])] == [old.id]
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "running" and job.attempts == 1
        assert await complete_job(storage, op, 1, [fine], supersede=[(old.id, T0)]) is True

    async def test_complete_job_cannot_touch_another_namespace(self, storage: Storage) -> None:
        theirs = memory(B, "belongs to B", importance=0.25)
        await storage.insert_memories([theirs])
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        assert await complete_job(storage, op, 1, [], supersede=[(theirs.id, T0)],
                                          refresh=[(theirs.id, 1.0)]) is True
        same_memory((await storage.get_memories(B, [theirs.id]))[0], theirs)

    async def test_fail_job_with_retry_requeues(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        await storage.fail_job(op.id, 1, "model overloaded", retry=True)
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "queued" and job.error == "model overloaded"
        again = await storage.claim_job(60)
        assert again is not None and again.id == op.id and again.attempts == 2

    async def test_fail_job_retry_at_holds_the_job_back(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        later, _ = await storage.enqueue(operation(A, key="later", minutes=1))
        await storage.claim_job(60)
        held = datetime.now(timezone.utc) + timedelta(seconds=1.5)
        assert await storage.fail_job(op.id, 1, "rate limited", retry=True, retry_at=held) is True
        assert await storage.count_jobs(A, "queued") == 2  # still pending, exactly
        nxt = await storage.claim_job(60)
        assert nxt is not None and nxt.id == later.id  # the held job is skipped, not lost
        assert await storage.claim_job(60) is None
        await asyncio.sleep(1.7)
        again = await storage.claim_job(60)
        assert again is not None and again.id == op.id and again.attempts == 2

    async def test_fail_job_without_retry_is_final(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        await storage.fail_job(op.id, 1, "bad API key", retry=False)
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "failed" and job.error == "bad API key"
        assert await storage.claim_job(60) is None
        assert await storage.count_jobs(A, "failed") == 1

    async def test_fail_job_with_stale_claim_is_ignored(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await self.claim_expired(storage, op.id, attempts=1)
        assert await storage.fail_job(op.id, 1, "late failure", retry=False) is False
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "running" and job.attempts == 2
        assert job.error is None

    async def test_requeue_running(self, storage: Storage) -> None:
        for i in range(3):
            await storage.enqueue(operation(A, minutes=i))
        first = await storage.claim_job(60)
        await storage.claim_job(60)
        assert await storage.requeue_running() == 2
        assert await storage.count_jobs(A, "queued") == 3
        assert await storage.count_jobs(A, "running") == 0
        assert first is not None
        # the claim from before the restart can no longer complete
        assert await complete_job(storage, first, 1, [memory(A, "x")]) is False
        again = await storage.claim_job(60)
        assert again is not None and again.id == first.id and again.attempts == 2
        assert await storage.requeue_running() == 1

    async def test_count_jobs_by_namespace_and_status(self, storage: Storage) -> None:
        await storage.enqueue(operation(A, minutes=0))
        await storage.enqueue(operation(A, minutes=1))
        await storage.enqueue(operation(B, minutes=2))
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.namespace == A
        assert await storage.count_jobs(A, "queued") == 1
        assert await storage.count_jobs(A, "running") == 1
        assert await storage.count_jobs(B, "queued") == 1
        assert await storage.count_jobs(None, "queued") == 2
        assert await storage.count_jobs(None, "done") == 0
        # several statuses in one read
        assert await storage.count_jobs(A, ("queued", "running")) == 2
        assert await storage.count_jobs(None, ["queued", "running"]) == 3
        assert await storage.count_jobs(A, ("done", "failed")) == 0

    # == memories ==========================================================================
    async def test_insert_and_get_round_trip_every_field(self, storage: Storage) -> None:
        plus2 = timezone(timedelta(hours=2))
        m = Memory(namespace=A, text="Ünïcödé text 🚀 with 'quotes' and \"doubles\"", topic="prefs",
                   type="preference", entity="user", attribute="editor", value="helix",
                   importance=0.75, valid_from=datetime(2026, 3, 1, 12, 0, 0, 1, tzinfo=plus2),
                   created_at=datetime(2026, 3, 1, 10, 0, 0, 999999, tzinfo=timezone.utc),
                   last_accessed_at=datetime(2026, 3, 2, tzinfo=timezone.utc), access_count=3,
                   session_id="s1", agent_id="agent-7", source_job_id="job-1")
        await storage.insert_memories([m])
        (got,) = await storage.get_memories(A, [m.id])
        same_memory(got, m)
        assert_utc(got.valid_from, got.created_at, got.last_accessed_at)
        assert got.valid_from.utcoffset() == timedelta(0)

    async def test_get_memories_is_namespace_scoped(self, storage: Storage) -> None:
        a, b = memory(A, "in A"), memory(B, "in B")
        await storage.insert_memories([a, b])
        assert [m.id for m in await storage.get_memories(A, [a.id, b.id, "missing"])] == [a.id]
        assert await storage.get_memories(B, [a.id]) == []
        assert await storage.get_memories(A, []) == []

    async def test_insert_memories_is_all_or_nothing(self, storage: Storage) -> None:
        first, second = memory(A, "one"), memory(A, "two")
        await storage.insert_memories([memory(A, "existing", id="fixed-id")])
        with pytest.raises(Exception):  # noqa: B017 - any error type, as long as nothing lands
            await storage.insert_memories([first, second, memory(A, "dup", id="fixed-id")])
        assert await storage.get_memories(A, [first.id, second.id]) == []
        assert [m.text for m in await self.all_memories(storage, A)] == ["existing"]

    async def test_many_memories_bulk_paging_and_iteration(self, storage: Storage) -> None:
        rows = [memory(A, f"memory number {i}", minutes=i) for i in range(1200)]
        await storage.insert_memories(rows)
        assert len(await storage.get_memories(A, [m.id for m in rows])) == 1200
        seen = [m.id for m in await self.all_memories(storage, A)]
        assert seen == [m.id for m in rows]
        page, total = await storage.list_memories(A, 50, 1100)
        assert total == 1200 and [m.id for m in page] == [m.id for m in rows[99::-1][:50]]

    async def test_list_memories_newest_first_with_total_and_paging(self, storage: Storage) -> None:
        rows = [memory(A, f"a{i}", minutes=i) for i in range(5)]
        gone = memory(A, "superseded", minutes=10)
        await storage.insert_memories([*rows, gone, memory(B, "b0", minutes=20)])
        await supersede(storage, A, [gone.id], T0, [])
        ids = [m.id for m in rows]
        page, total = await storage.list_memories(A, 2, 0)
        assert [m.id for m in page] == [ids[4], ids[3]] and total == 5
        page, _ = await storage.list_memories(A, 2, 2)
        assert [m.id for m in page] == [ids[2], ids[1]]
        page, _ = await storage.list_memories(A, 2, 4)
        assert [m.id for m in page] == [ids[0]]
        page, total = await storage.list_memories(A, 2, 10)
        assert page == [] and total == 5
        page, total = await storage.list_memories(B, 10, 0)
        assert [m.text for m in page] == ["b0"] and total == 1

    async def test_iter_memories_oldest_first_active_or_all(self, storage: Storage) -> None:
        m0, m1, m2 = (memory(A, f"m{i}", minutes=i) for i in range(3))
        await storage.insert_memories([m2, m0, m1, memory(B, "other")])
        await supersede(storage, A, [m1.id], T0 + timedelta(hours=1), [])
        assert [m.id for m in await self.all_memories(storage, A)] == [m0.id, m2.id]
        everything = await self.all_memories(storage, A, active_only=False)
        assert [m.id for m in everything] == [m0.id, m1.id, m2.id]
        assert everything[1].valid_until == T0 + timedelta(hours=1)

    async def test_delete_memory(self, storage: Storage) -> None:
        a, old = memory(A, "keep me"), memory(A, "old")
        await storage.insert_memories([a, old])
        await supersede(storage, A, [old.id], T0, [])
        assert await delete(storage, B, a.id) is False
        assert len(await storage.get_memories(A, [a.id])) == 1
        assert await delete(storage, A, a.id) is True
        assert await storage.get_memories(A, [a.id]) == []
        assert await delete(storage, A, a.id) is False
        assert await delete(storage, A, old.id) is False  # superseded: not deletable
        assert await delete(storage, A, "missing") is False

    async def test_supersede_memories(self, storage: Storage) -> None:
        m1 = memory(A, "likes green tea", entity="user", attribute="drink", value="green tea")
        m2 = memory(A, "likes black tea", entity="user", attribute="drink", value="black tea",
                    minutes=1)
        m2.entity = m2.attribute = m2.value = None  # one current row per fact key
        theirs = memory(B, "belongs to B")
        await storage.insert_memories([m1, m2, theirs])
        merged = memory(A, "likes tea", entity="user", attribute="drink", value="tea", minutes=2)
        at = T0 + timedelta(days=1)
        await supersede(storage, A, [m1.id, m2.id, theirs.id], at, [merged])
        assert await storage.get_memories(A, [m1.id, m2.id]) == []
        page, total = await storage.list_memories(A, 10, 0)
        assert [m.id for m in page] == [merged.id] and total == 1
        assert [m.id for m in await current_of(storage, A, "user", "drink")] == [merged.id]
        assert sum((await storage.stats(A)).values()) == 1
        history = await storage.history(A, "user", "drink")
        assert [(m.id, m.valid_until) for m in history] == [(m1.id, at), (merged.id, None)]
        assert history[0].superseded_by == merged.id
        assert_utc(*(m.valid_until for m in history))
        assert [m.id for m in await storage.get_memories(B, [theirs.id])] == [theirs.id]

    async def test_memories_at_reads_the_rows_valid_at_a_time(self, storage: Storage) -> None:
        # search_memories(as_of=...) ranks these rows (issue 14): history while it was current.
        self.need(storage, "history")
        vim = memory(A, "uses vim", entity="user", attribute="editor", value="vim",
                     embedding=self.vec(1), context="which editor?")
        note = memory(A, "deploys on Tuesdays", minutes=30)
        theirs = memory(B, "theirs")
        await storage.insert_memories([vim, note, theirs])
        code = memory(A, "uses VS Code", entity="user", attribute="editor", value="VS Code",
                      minutes=60)
        await supersede(storage, A, [vim.id], code.valid_from, [code])
        said_and_replaced = memory(A, "said and replaced at once", minutes=10,
                                   valid_until=T0 + timedelta(minutes=10))
        await storage.insert_memories([said_and_replaced])

        async def at(minutes: float) -> list[str]:
            return [m.id for m in await storage.memories_at(A, T0 + timedelta(minutes=minutes))]

        assert await at(-1) == []  # before anything was said
        assert await at(0) == [vim.id]  # valid_from is inclusive
        assert await at(45) == [vim.id, note.id]  # oldest valid_from first
        assert await at(60) == [note.id, code.id]  # valid_until is exclusive
        assert await at(10**6) == [note.id, code.id]  # still current
        assert await storage.memories_at("nobody", T0) == []
        (old,) = [m for m in await storage.memories_at(A, T0) if m.id == vim.id]
        assert old.valid_until == code.valid_from and old.superseded_by == code.id
        assert old.context == "which editor?" and old.value == "vim"
        if storage.capabilities.vectors:  # a history row's vector stays readable for ranking
            assert await storage.get_embeddings(A, [vim.id]) == {vim.id: pytest.approx(self.vec(1))}

    async def test_memories_created_lists_a_time_range_or_says_it_is_too_full(
            self, storage: Storage) -> None:
        # Search's time-window step (issue 14) ranks these rows when a query names a time.
        self.need(storage, "time_ranges")
        rows = [memory(A, f"line {i}", minutes=10 * i, session_id="s1",
                       context=f"before line {i}") for i in range(6)]
        await storage.insert_memories(rows[3:])  # inserted out of time order
        await storage.insert_memories(rows[:3])
        tied = memory(A, "said with line 2", minutes=20)
        theirs = memory(B, "theirs", minutes=20)
        await storage.insert_memories([tied, theirs])
        new = memory(A, "line 4 again", minutes=45, entity="user", attribute="x", value="2")
        old = memory(A, "line 4 before", minutes=41, entity="user", attribute="x", value="1")
        await storage.insert_memories([old])
        await supersede(storage, A, [old.id], new.valid_from, [new])

        def span(a: float, b: float) -> tuple[datetime, datetime]:
            return T0 + timedelta(minutes=a), T0 + timedelta(minutes=b)

        async def ids(*spans: tuple[datetime, datetime], limit: int = 100) -> list[str] | None:
            got = await storage.memories_created(A, list(spans), limit)
            return None if got is None else [m.id for m in got]

        # Start inclusive, end exclusive; oldest first, insertion order among equal times;
        # superseded rows and other namespaces left out.
        assert await ids(span(10, 30)) == [rows[1].id, rows[2].id, tied.id]
        assert await ids(span(0, 10), span(40, 60)) == [rows[0].id, rows[4].id, new.id,
                                                        rows[5].id]
        # Overlapping ranges: each memory once, in time order.
        assert await ids(span(20, 45), span(0, 25)) == [
            rows[0].id, rows[1].id, rows[2].id, tied.id, rows[3].id, rows[4].id]
        assert await ids(span(5, 9)) == [] and await ids() == []
        # More than `limit`: None, however the ranges split them.
        assert await ids(span(0, 60), limit=8) == [m.id for m in (
            rows[0], rows[1], rows[2], tied, rows[3], rows[4], new, rows[5])]
        assert await ids(span(0, 60), limit=7) is None
        assert await ids(span(0, 25), span(25, 60), limit=7) is None
        got = await storage.memories_created(A, [span(0, 5)], 10)
        assert got is not None and got[0].context == "before line 0"
        assert got[0].created_at == rows[0].created_at
        assert await storage.memories_created("nobody", [span(0, 60)], 10) == []
        # A forgotten memory is in no range.
        assert await delete(storage, A, rows[1].id)
        assert await ids(span(10, 30)) == [rows[2].id, tied.id]

    async def test_session_neighbours_are_the_active_memories_around_each(self, storage: Storage
                                                                         ) -> None:
        # Search's neighbour step (issue 14): order by created_at, then insertion order, as
        # latest_in_session; only active memories of the same namespace and session count.
        self.need(storage, "session_neighbours")
        late = memory(A, "said last, stored first", session_id="s1", minutes=5)
        await storage.insert_memories([late])
        # Three at one instant: insertion order decides among them.
        first, second, third = (memory(A, f"turn {i}", session_id="s1") for i in range(3))
        await storage.insert_memories([first, second])
        await storage.insert_memories([third])
        other = memory(A, "another session", session_id="s2", minutes=1)
        loose = memory(A, "no session", minutes=1)
        theirs = memory(B, "their s1", session_id="s1", minutes=1)
        old = memory(A, "replaced", session_id="s1", minutes=2, entity="user", attribute="x",
                     value="1")
        await storage.insert_memories([other, loose, theirs, old])
        new = memory(A, "replacement", session_id="s1", minutes=6, entity="user", attribute="x",
                     value="2")
        await supersede(storage, A, [old.id], new.valid_from, [new])

        got = await storage.session_neighbours(
            A, [first.id, second.id, third.id, late.id, new.id, other.id, loose.id, theirs.id,
                old.id, "unknown", second.id])
        assert got == {
            first.id: (None, second.id),
            second.id: (first.id, third.id),
            third.id: (second.id, late.id),  # the superseded row between them is skipped
            late.id: (third.id, new.id),
            new.id: (late.id, None),
            other.id: (None, None),          # alone in its session
        }
        assert await storage.session_neighbours(A, []) == {}
        assert await storage.session_neighbours(B, [first.id]) == {}
        # A forgotten memory is nobody's neighbour.
        assert await delete(storage, A, second.id)
        got = await storage.session_neighbours(A, [first.id, third.id])
        assert got == {first.id: (None, third.id), third.id: (first.id, late.id)}

    async def test_session_neighbours_follow_the_core_rule(self, storage: Storage) -> None:
        # The order is core's (search.pool_neighbours over the active rows, oldest first as
        # iter_memories reads them): random sessions, tied and untied times, batches,
        # deletions and supersessions, several seeds.
        self.need(storage, "session_neighbours")
        import random

        from ..search.pipeline import pool_neighbours

        for seed in range(3):
            rng = random.Random(seed)
            ns = f"{A}-{seed}"
            rows = [memory(ns, f"line {i}", minutes=rng.choice([0, 1, 1, 2, 5]),
                           session_id=rng.choice(["s1", "s2", "s3", None]))
                    for i in range(40)]
            for start in range(0, len(rows), 7):
                await storage.insert_memories(rows[start:start + 7])
            for gone in rng.sample(rows, 6):
                await delete(storage, ns, gone.id)
            replaced = [m for m in rng.sample(rows, 6) if await storage.get_memories(ns, [m.id])]
            if replaced:
                await supersede(storage, ns, [m.id for m in replaced], T0 + timedelta(minutes=9))
            active = [m async for m in storage.iter_memories(ns)]
            ids = [m.id for m in rows]
            assert await storage.session_neighbours(ns, ids) == \
                pool_neighbours(active, ids), f"seed {seed}"

    async def test_find_active_by_triple(self, storage: Storage) -> None:
        hit = memory(A, "user's city is Porto", entity="user", attribute="city", value="Porto")
        gone = memory(A, "user's city was Lisbon", entity="user", attribute="city", value="Lisbon",
                      valid_until=T0)
        await storage.insert_memories([
            hit, gone,
            memory(A, "user's job", entity="user", attribute="job", value="chef"),
            memory(A, "cat's city", entity="cat", attribute="city", value="Porto"),
            memory(B, "user's city in B", entity="user", attribute="city", value="Oslo"),
        ])
        assert [m.id for m in await current_of(storage, A, "user", "city")] == [hit.id]
        assert await current_of(storage, A, "user", "nothing") == []

    async def test_one_current_row_per_fact_key_is_enforced(self, storage: Storage) -> None:
        # The database itself refuses a second current value (issue 13): a bug in a caller
        # must fail loudly, roll back, and leave the first row alone.
        first = memory(A, "uses vim", entity="user", attribute="editor", value="vim")
        await storage.insert_memories([first])
        second = memory(A, "uses emacs", entity="user", attribute="editor", value="emacs")
        other = memory(A, "unrelated", minutes=1)
        with pytest.raises(StorageConflict) as err:
            async with storage.write(A, [("user", "editor")]) as tx:
                await tx.insert([other])
                await tx.insert([second])
        assert err.value.kind == "second_current"
        assert [m.id for m in await current_of(storage, A, "user", "editor")] == [first.id]
        assert await storage.get_memories(A, [other.id]) == []  # rolled back whole
        with pytest.raises(StorageConflict):
            await storage.insert_memories([second])
        # Other namespaces and other keys are independent; history rows are not current.
        await storage.insert_memories([
            memory(B, "uses emacs", entity="user", attribute="editor", value="emacs"),
            memory(A, "used ed", entity="user", attribute="editor", value="ed", valid_until=T0)])

    async def test_duplicate_id_is_a_storage_conflict(self, storage: Storage) -> None:
        m = memory(A, "x")
        await storage.insert_memories([m])
        with pytest.raises(StorageConflict) as err:
            await storage.insert_memories([memory(B, "y", id=m.id)])
        assert err.value.kind == "duplicate_id"

    async def test_write_primitives(self, storage: Storage) -> None:
        old = memory(A, "lives in Lisbon", entity="user", attribute="city", value="Lisbon",
                     importance=0.4)
        theirs = memory(B, "lives in Oslo", entity="user", attribute="city", value="Oslo")
        await storage.insert_memories([old, theirs])
        new = memory(A, "lives in Porto", entity="user", attribute="city", value="Porto",
                     minutes=5)
        at = T0 + timedelta(minutes=5)
        v0 = await storage.namespace_version(A)
        async with storage.write(A, [("user", "city")]) as tx:
            assert [m.id for m in await tx.timeline([("user", "city")])] == [old.id]
            assert [m.id for m in await tx.current([old.id, theirs.id])] == [old.id]
            await tx.end([(old.id, at, new.id), (theirs.id, at, None)])  # B untouched
            await tx.insert([new])
            await tx.refresh([(new.id, 0.9), (old.id, 0.9)], at)  # old: no longer current
        assert await storage.namespace_version(A) != v0
        hist = await storage.history(A, "user", "city")
        assert [(m.id, m.valid_until, m.superseded_by) for m in hist] == [
            (old.id, at, new.id), (new.id, None, None)]
        assert hist[0].importance == 0.4 and hist[1].importance == 0.9
        assert (await storage.get_memories(B, [theirs.id]))[0].valid_until is None
        async with storage.write(A) as tx:
            assert [m.id for m in await tx.predecessors([new.id])] == [old.id]
            assert await tx.delete([old.id, theirs.id]) == 1  # never another namespace's row
        assert [m.id for m in await storage.history(A, "user", "city")] == [new.id]

    async def test_write_rolls_back_on_error(self, storage: Storage) -> None:
        m = memory(A, "keep me")
        await storage.insert_memories([m])
        with pytest.raises(RuntimeError):
            async with storage.write(A) as tx:
                await tx.delete([m.id])
                await tx.insert([memory(A, "never")])
                raise RuntimeError("boom")
        page, total = await storage.list_memories(A, 10, 0)
        assert [x.id for x in page] == [m.id] and total == 1

    async def test_finish_job_records_the_result_once(self, storage: Storage) -> None:
        await storage.enqueue(operation(A, "k"))
        job = await storage.claim_job(60)
        async with storage.write(A) as tx:
            assert await tx.finish_job(job.id, job.attempts, {"memory_ids": ["m1"]})
        done = await storage.get_operation(A, job.id)
        assert done.status == "done" and done.payload["result"] == {"memory_ids": ["m1"]}
        async with storage.write(A) as tx:
            assert not await tx.finish_job(job.id, job.attempts)  # not running any more
            assert await tx.finish_job(job.id, None)  # a record: it only has to exist
        async with storage.write(B) as tx:  # another namespace cannot finish it
            assert not await tx.finish_job(job.id, None)

    async def test_scrub_primitives(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A, "k2", payload={"text": "secret", "topic": ""}))
        m = memory(A, "after", session_id="s1", context="secret said before",
                   embedding=[1.0, 0.0] if storage.capabilities.vectors else None)
        n = memory(A, "other", session_id="s2", context="secret elsewhere")
        await storage.insert_memories([m, n])
        await storage.save_task(A, op.id, {"history": "secret"})
        async with storage.write(A) as tx:
            assert [o.id for o in await tx.operations([op.id])] == [op.id]
            await tx.set_payload(op.id, {"scrubbed": True})
            await tx.scrub_context(["s1"], ["secret"])
            await tx.delete_tasks([op.id])
        assert (await storage.get_operation(A, op.id)).payload == {"scrubbed": True}
        assert await storage.get_task(A, op.id) is None
        assert [h.id for h in await storage.search_fulltext(A, ["secret"], 5)] == [n.id]
        # its vector mixed in the forgotten neighbour's: gone, to be re-embedded from its text
        assert await storage.get_embeddings(A, [m.id]) == {}

    async def test_pinned_memories_are_not_decay_candidates(self, storage: Storage) -> None:
        a, b = memory(A, "pin me"), memory(A, "decay me")
        await storage.insert_memories([a, b])
        async with storage.write(A) as tx:
            assert await tx.set_pinned([a.id], True) == 1
        assert {r.id for r in await storage.decay_candidates(None, 100)} >= {b.id}
        assert a.id not in {r.id for r in await storage.decay_candidates(None, 100)}
        (got,) = await storage.get_memories(A, [a.id])
        assert got.pinned is True and got.public()["pinned"] is True
        async with storage.write(B) as tx:  # another namespace cannot unpin it
            assert await tx.set_pinned([a.id], False) == 0

    async def test_payloads_to_scrub_lists_finished_unscrubbed_operations(self, storage: Storage) -> None:
        await storage.enqueue(operation(A, "p1", payload={"text": "old"}))
        job = await storage.claim_job(60)
        async with storage.write(A) as tx:
            assert await tx.finish_job(job.id, job.attempts)
        later = utcnow() + timedelta(days=1)
        assert [o.id for o in await storage.payloads_to_scrub(later, 10)] == [job.id]
        assert await storage.payloads_to_scrub(utcnow() - timedelta(days=1), 10) == []
        async with storage.write(A) as tx:
            await tx.set_payload(job.id, {"scrubbed": True})
        assert await storage.payloads_to_scrub(later, 10) == []

    async def test_expire_tasks_deletes_tasks_not_updated_since(self, storage: Storage) -> None:
        await storage.save_task(A, "old", {"n": 1})
        await storage.save_task(B, "old-b", {"n": 2})
        assert await storage.expire_tasks(utcnow() - timedelta(days=1)) == 0
        assert await storage.expire_tasks(utcnow() + timedelta(seconds=1)) == 2
        assert await storage.get_task(A, "old") is None
        assert await storage.list_tasks(B) == TaskPage([], 0)

    async def test_history_is_oldest_first_and_scoped(self, storage: Storage) -> None:
        v = [memory(A, f"version {i}", entity="e", attribute="a", value=str(i), minutes=i,
                    valid_until=T0 + timedelta(minutes=i + 1) if i < 2 else None)
             for i in range(3)]
        await storage.insert_memories([v[2], v[0], v[1], memory(B, "b", entity="e", attribute="a")])
        assert [m.id for m in await storage.history(A, "e", "a")] == [m.id for m in v]
        assert len(await storage.history(B, "e", "a")) == 1

    async def test_record_access(self, storage: Storage) -> None:
        a, b = memory(A, "a"), memory(B, "b")
        await storage.insert_memories([a, b])
        t1, t2 = T0 + timedelta(hours=1), T0 + timedelta(hours=2)
        await storage.record_access(A, [a.id], t1)
        await storage.record_access(A, [a.id], t2)
        await storage.record_access(B, [a.id], t2 + timedelta(hours=1))  # wrong namespace
        await storage.record_access(A, [b.id], t2)  # wrong namespace
        got = (await storage.get_memories(A, [a.id]))[0]
        assert got.access_count == 2 and got.last_accessed_at == t2
        assert_utc(got.last_accessed_at)
        same_memory((await storage.get_memories(B, [b.id]))[0], b)

    async def test_stats_counts_active_by_type(self, storage: Storage) -> None:
        gone = memory(A, "old fact", type="fact")
        await storage.insert_memories([
            memory(A, "p1", type="preference"), memory(A, "p2", type="preference"),
            memory(A, "f1", type="fact"), memory(A, "d1", type="decision"), gone,
            memory(B, "b1", type="procedure"),
        ])
        await supersede(storage, A, [gone.id], T0, [])
        nonzero = {k: v for k, v in (await storage.stats(A)).items() if v}
        assert nonzero == {"preference": 2, "fact": 1, "decision": 1}
        assert {k: v for k, v in (await storage.stats("empty")).items() if v} == {}

    async def test_update_importance(self, storage: Storage) -> None:
        a, b = memory(A, "a", importance=0.5), memory(B, "b", importance=0.5)
        await storage.insert_memories([a, b])
        await storage.update_importance([(A, a.id, 0.25), (A, b.id, 1.0), (B, a.id, 1.0)])
        assert (await storage.get_memories(A, [a.id]))[0].importance == 0.25
        assert (await storage.get_memories(B, [b.id]))[0].importance == 0.5

    # == decay ==============================================================================
    @staticmethod
    async def decay_rows(storage: Storage, page: int = 1000) -> dict[str, DecayRow]:
        """Every row decay_candidates returns, walking pages of `page` like run_decay."""
        out: dict[str, DecayRow] = {}
        after: str | None = None
        while True:
            rows = await storage.decay_candidates(after, page)
            for r in rows:
                assert r.id not in out, f"decay_candidates returned {r.id} twice"
                out[r.id] = r
            if len(rows) < page:
                return out
            after = rows[-1].id

    async def test_decay_candidates_page_every_active_memory_of_every_namespace(
            self, storage: Storage) -> None:
        rows = [memory(ns, f"{ns} memory {i}", importance=i / 10, minutes=i)
                for ns in (A, B) for i in range(7)]
        gone = memory(A, "superseded", importance=0.9)
        await storage.insert_memories([*rows, gone])
        await supersede(storage, A, [gone.id], T0, [])
        t1 = T0 + timedelta(days=3)
        await storage.record_access(B, [rows[-1].id], t1)
        assert await storage.decay_candidates(None, 0) == []
        for page in (1, 3, 100):
            got = await self.decay_rows(storage, page)
            assert sorted(got) == sorted(m.id for m in rows)
            ids = [r.id for r in await storage.decay_candidates(None, 100)]
            assert ids == sorted(ids), "decay_candidates must be ordered by id"
        after = sorted(m.id for m in rows)[5]
        assert [r.id for r in await storage.decay_candidates(after, 100)] == \
            sorted(m.id for m in rows)[6:]
        for m in rows:
            r = got[m.id]
            assert (r.namespace, r.base_importance, r.importance) == (m.namespace, m.importance,
                                                                      m.importance)
            assert r.created_at == m.created_at
            assert_utc(r.created_at, r.last_accessed_at)
        assert got[rows[-1].id].last_accessed_at == t1 and got[rows[-1].id].access_count == 1
        assert got[rows[0].id].last_accessed_at is None and got[rows[0].id].access_count == 0

    async def test_apply_decay_keeps_the_base_importance(self, storage: Storage) -> None:
        a, b = memory(A, "a", importance=0.8), memory(B, "b", importance=0.8)
        await storage.insert_memories([a, b])
        before = await storage.namespace_version(A)
        await storage.apply_decay([(A, a.id, 0.4), (A, b.id, 0.1), (B, a.id, 0.1)])
        assert (await storage.get_memories(A, [a.id]))[0].importance == 0.4
        assert (await storage.get_memories(B, [b.id]))[0].importance == 0.8  # wrong namespace
        assert await storage.namespace_version(A) != before
        await storage.apply_decay([(A, a.id, 0.2)])  # the base stays what was written
        row = (await self.decay_rows(storage))[a.id]
        assert (row.base_importance, row.importance) == (0.8, 0.2)
        await storage.apply_decay([(A, a.id, 0.8)])
        row = (await self.decay_rows(storage))[a.id]
        assert (row.base_importance, row.importance) == (0.8, 0.8)
        # a superseded row is never touched
        await supersede(storage, A, [a.id], T0, [])
        await storage.apply_decay([(A, a.id, 0.1)])
        assert [m.importance for m in await self.all_memories(storage, A, active_only=False)] == [0.8]
        await storage.apply_decay([])

    async def test_restating_or_setting_importance_resets_the_base(self, storage: Storage) -> None:
        m = memory(A, "user likes tea", importance=0.6)
        await storage.insert_memories([m])
        await storage.apply_decay([(A, m.id, 0.3)])
        # a re-statement undoes decay: max(base 0.6, 0.5), and the clock restarts
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        assert await complete_job(storage, op, 1, [], refresh=[(m.id, 0.5)]) is True
        row = (await self.decay_rows(storage))[m.id]
        assert (row.base_importance, row.importance) == (0.6, 0.6)
        assert row.last_accessed_at is not None
        await storage.apply_decay([(A, m.id, 0.3)])
        op, _ = await storage.enqueue(operation(A, minutes=1))
        await storage.claim_job(60)
        assert await complete_job(storage, op, 1, [], refresh=[(m.id, 0.9)]) is True
        row = (await self.decay_rows(storage))[m.id]
        assert (row.base_importance, row.importance) == (0.9, 0.9)
        # update_importance sets a new undecayed value
        await storage.apply_decay([(A, m.id, 0.3)])
        await storage.update_importance([(A, m.id, 0.7)])
        row = (await self.decay_rows(storage))[m.id]
        assert (row.base_importance, row.importance) == (0.7, 0.7)

    async def test_namespace_version_changes_on_every_change(self, storage: Storage) -> None:
        seen = [await storage.namespace_version(A)]

        async def changed() -> None:
            version = await storage.namespace_version(A)
            assert version not in seen, f"namespace_version did not change ({seen} -> {version})"
            seen.append(version)

        m1, m2 = memory(A, "one"), memory(A, "two")
        await storage.insert_memories([m1, m2])
        await changed()
        await delete(storage, A, m1.id)
        await changed()
        await supersede(storage, A, [m2.id], T0, [memory(A, "three")])
        await changed()
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        m4 = memory(A, "four")
        await complete_job(storage, op, 1, [m4])
        await changed()
        await storage.update_importance([(A, m4.id, 0.25)])
        await changed()
        await storage.apply_decay([(A, m4.id, 0.125)])
        await changed()
        if storage.capabilities.vectors:
            await storage.set_embeddings(A, [(m4.id, self.vec(1))])
            await changed()
        await storage.delete_namespace(A)
        # Erased: no row names the namespace any more, so it is at 0 again, the version of a
        # namespace never written (an index cached at 0 is empty, which is right again).
        erased = await storage.namespace_version(A)
        assert erased == 0 or erased not in seen
        seen[:] = [v for v in seen if v != erased]  # the next write must still change it
        await storage.insert_memories([memory(A, "after the purge")])
        await changed()

    async def test_delete_namespace_erases_only_that_namespace(self, storage: Storage) -> None:
        for ns in (A, B):
            kept = [memory(ns, f"{ns} dark memory {i}", embedding=self.vec(1, i)) for i in range(3)]
            old = memory(ns, f"{ns} dark superseded", entity="e", attribute="a")
            await storage.insert_memories([*kept, old])
            await supersede(storage, ns, [old.id], T0, [])
            await storage.enqueue(operation(ns, "k"))
            await storage.create_token(ns, f"{ns}-t1")
            await storage.create_token(ns, f"{ns}-t2")
            await storage.create_token(ns, f"{ns}-t3")
            await storage.revoke_token(f"{ns}-t3")
            await storage.save_task(ns, "task", {"ns": ns})
            await storage.record_tool_call(ToolCallRecord(
                tool="store_memory", namespace=ns, inputs_hash="h", status="ok", duration_ms=1.0))
        # every memory row goes, superseded included; only live tokens count as revoked
        assert await storage.delete_namespace(A) == (4, 2)
        assert await self.all_memories(storage, A, active_only=False) == []
        assert await storage.history(A, "e", "a") == []
        assert await storage.list_memories(A, 10, 0) == ([], 0)
        assert await storage.namespace_for_token(f"{A}-t1") is None
        assert await storage.namespace_for_token(f"{A}-t2") is None
        assert await storage.count_jobs(A, "queued") == 0
        assert await storage.get_task(A, "task") is None
        assert await storage.list_tasks(A) == TaskPage([], 0)
        assert {k: v for k, v in (await storage.stats(A)).items() if v} == {}
        if storage.capabilities.fulltext:
            assert await storage.search_fulltext(A, ["dark"], 10) == []
        if storage.capabilities.vectors:
            assert await storage.search_vectors(A, self.vec(1), 10) == []
        # B untouched
        assert len(await self.all_memories(storage, B, active_only=False)) == 4
        assert await storage.namespace_for_token(f"{B}-t1") == B
        assert await storage.count_jobs(B, "queued") == 1
        assert await storage.get_task(B, "task") == {"ns": B}
        if storage.capabilities.fulltext:
            assert len(await storage.search_fulltext(B, ["dark"], 10)) == 3
        # a new operation with the old key is accepted again
        assert (await storage.enqueue(operation(A, "k")))[1] is True

    # == audit and A2A =====================================================================
    async def test_record_tool_call(self, storage: Storage) -> None:
        await storage.record_tool_call(ToolCallRecord(
            tool="search_memories", namespace=A, inputs_hash="abc", status="ok", duration_ms=2.5))
        await storage.record_tool_call(ToolCallRecord(
            tool="store_memory", namespace=None, inputs_hash="def", status="error",
            code="INVALID_PARAM", duration_ms=0.1,
            at=datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=-5)))))

    async def test_tasks_save_get_list_delete_isolated(self, storage: Storage) -> None:
        data_a = {"id": "t1", "state": "working", "history": [{"text": "héllo 👋"}], "n": None}
        await storage.save_task(A, "t1", data_a)
        await storage.save_task(B, "t1", {"id": "t1", "owner": "B"})  # same id, other tenant
        await storage.save_task(A, "t2", {"id": "t2"})
        assert await storage.get_task(A, "t1") == data_a
        assert await storage.get_task(B, "t1") == {"id": "t1", "owner": "B"}
        assert await storage.get_task(B, "t2") is None
        assert sorted(r.data["id"] for r in (await storage.list_tasks(A)).rows) == ["t1", "t2"]
        assert [r.data for r in (await storage.list_tasks(B)).rows] == [{"id": "t1", "owner": "B"}]
        await storage.save_task(A, "t1", {"id": "t1", "state": "completed"})
        assert await storage.get_task(A, "t1") == {"id": "t1", "state": "completed"}
        await storage.delete_task(B, "t2")  # not B's: nothing happens
        assert await storage.get_task(A, "t2") == {"id": "t2"}
        await storage.delete_task(A, "t1")
        assert await storage.get_task(A, "t1") is None
        assert await storage.get_task(B, "t1") == {"id": "t1", "owner": "B"}
        await storage.delete_task(A, "never-existed")

    async def test_task_pages_are_ordered_filtered_and_positioned_in_storage(
            self, storage: Storage) -> None:
        # ListTasks' rule (a2a-sdk's order): status time descending, tasks without one last,
        # then id descending by code point; a page starts strictly after the (time, id) of the
        # previous page's last row. Ids where a locale collation and code points disagree.
        ids = ["ab", "a-b", "a b", "B", "a", "é", "Z", "a_b", "b", "A-", "t10", "t9"]
        times = [5, 5, 5, None, 7, None, 5, -3, 2**62, None, 0, 7]
        ctx = ["c1", "c2"]
        for i, (task_id, ns) in enumerate(zip(ids, times)):
            await storage.save_task(A, task_id, {"id": task_id}, TaskKeys(
                context_id=ctx[i % 2], state="TASK_STATE_COMPLETED" if i % 3 else "TASK_STATE_WORKING",
                status_ns=ns))
        await storage.save_task(B, "b-only", {"id": "b-only"}, TaskKeys("c1", "TASK_STATE_WORKING", 9))

        def rule(keep: Callable[[int], bool] = lambda i: True) -> list[str]:
            rows = [(ns is not None, ns or 0, task_id)
                    for i, (task_id, ns) in enumerate(zip(ids, times)) if keep(i)]
            return [r[2] for r in sorted(rows, reverse=True)]

        async def walk(query: TaskQuery) -> tuple[list[str], set[int]]:
            seen, totals, after = [], set(), None
            while True:
                page = await storage.list_tasks(A, query._replace(after=after))
                assert len(page.rows) <= query.limit
                seen += [r.task_id for r in page.rows]
                assert [r.data["id"] for r in page.rows] == [r.task_id for r in page.rows]
                totals.add(page.total)
                if len(page.rows) < query.limit:
                    return seen, totals
                after = (page.rows[-1].status_ns, page.rows[-1].task_id)

        full = await storage.list_tasks(A, TaskQuery(limit=100))
        assert [r.task_id for r in full.rows] == rule() and full.total == len(ids)
        assert [r.status_ns for r in full.rows] == [times[ids.index(r.task_id)] for r in full.rows]
        for size in (1, 2, 5):
            assert await walk(TaskQuery(limit=size)) == (rule(), {len(ids)})
        assert await walk(TaskQuery(context_id="c2", limit=2)) == (
            rule(lambda i: i % 2 == 1), {len(rule(lambda i: i % 2 == 1))})
        assert await walk(TaskQuery(state="TASK_STATE_WORKING", limit=3)) == (
            rule(lambda i: i % 3 == 0), {len(rule(lambda i: i % 3 == 0))})
        recent = lambda i: times[i] is not None and times[i] >= 5  # noqa: E731
        assert await walk(TaskQuery(status_ns_from=5, limit=2)) == (rule(recent), {len(rule(recent))})
        assert await storage.list_tasks(A, TaskQuery(context_id="nope")) == TaskPage([], 0)
        # a position that names no stored task (it was deleted) still places the page
        page = await storage.list_tasks(A, TaskQuery(after=(5, "a c"), limit=100))
        assert [r.task_id for r in page.rows] == rule()[rule().index("a b"):] and page.total == len(ids)
        page = await storage.list_tasks(A, TaskQuery(after=(None, "C"), limit=100))
        assert [r.task_id for r in page.rows] == ["B", "A-"]
        # saving again replaces the keys
        await storage.save_task(A, "t9", {"id": "t9", "v": 2}, TaskKeys("c9", "TASK_STATE_FAILED", 1))
        (row,) = (await storage.list_tasks(A, TaskQuery(context_id="c9"))).rows
        assert row == TaskRow("t9", 1, {"id": "t9", "v": 2})
        assert (await storage.list_tasks(A, TaskQuery(state="TASK_STATE_FAILED"))).total == 1

    # == full text =========================================================================
    async def test_search_fulltext_finds_and_ranks(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        best = memory(A, "The user prefers dark mode in the code editor")
        partial = memory(A, "Dark chocolate is the user's favourite dessert")
        other = memory(A, "Python is the main programming language at work")
        filler = [memory(A, f"Unrelated note number {i} about gardening") for i in range(20)]
        await storage.insert_memories([best, partial, other, *filler])
        hits = await storage.search_fulltext(A, ["dark", "mode", "editor"], 10)
        assert all(isinstance(h, ScoredId) for h in hits)
        assert [h.id for h in hits][:2] == [best.id, partial.id]
        assert other.id not in {h.id for h in hits}
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert [h.id for h in await storage.search_fulltext(A, ["python"], 10)] == [other.id]
        assert await storage.search_fulltext(A, ["nonexistentword"], 10) == []
        assert await storage.search_fulltext(A, [], 10) == []
        assert len(await storage.search_fulltext(A, ["gardening"], 5)) == 5

    async def test_search_fulltext_matches_context_at_a_lower_weight(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        said = memory(A, "Melanie: I ran a charity race for mental health")
        answer = memory(A, "Caroline: It was last Saturday, it went great",
                        context="Melanie: when did you run the charity race?")
        filler = [memory(A, f"Filler line {i} about the weather") for i in range(10)]
        await storage.insert_memories([said, answer, *filler])
        hits = [h.id for h in await storage.search_fulltext(A, ["charity", "race"], 10)]
        assert hits[:2] == [said.id, answer.id]  # the own text outranks the context
        assert [h.id for h in await storage.search_fulltext(A, ["saturday"], 10)] == [answer.id]

    async def test_search_fulltext_unicode(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        cafe = memory(A, "Meeting at the café in München, 東京 next")
        await storage.insert_memories([cafe, memory(A, "nothing to see")])
        assert [h.id for h in await storage.search_fulltext(A, ["café"], 10)] == [cafe.id]
        assert [h.id for h in await storage.search_fulltext(A, ["münchen"], 10)] == [cafe.id]

    async def test_search_fulltext_only_active_rows_of_the_namespace(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        mine = memory(A, "quarterly budget review meeting")
        old = memory(A, "quarterly budget review meeting (old)")
        gone = memory(A, "quarterly budget deleted")
        theirs = memory(B, "quarterly budget review meeting")
        await storage.insert_memories([mine, old, gone, theirs])
        await supersede(storage, A, [old.id], T0, [])
        await delete(storage, A, gone.id)
        assert [h.id for h in await storage.search_fulltext(A, ["quarterly", "budget"], 10)] == [mine.id]
        assert [h.id for h in await storage.search_fulltext(B, ["quarterly"], 10)] == [theirs.id]
        assert await storage.search_fulltext("nobody", ["quarterly"], 10) == []

    async def test_search_fulltext_hostile_terms_never_raise(self, storage: Storage) -> None:
        self.need(storage, "fulltext")
        target = memory(A, "dark mode everywhere")
        await storage.insert_memories([target, memory(A, "light theme")])
        for term in HOSTILE_TERMS:
            hits = await storage.search_fulltext(A, [term], 10)
            assert isinstance(hits, list), term
            hits = await storage.search_fulltext(A, [term, "dark"], 10)
            assert target.id in {h.id for h in hits}, term
        assert isinstance(await storage.search_fulltext(A, HOSTILE_TERMS, 10), list)

    # == vectors ===========================================================================
    async def test_set_and_get_embeddings(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        a, b = memory(A, "a"), memory(A, "b")
        theirs = memory(B, "theirs")
        await storage.insert_memories([a, b, theirs])
        await storage.set_embeddings(A, [(a.id, self.vec(0.5, -0.25, 1))])
        assert await storage.get_embeddings(A, [a.id, b.id]) == {a.id: pytest.approx(self.vec(0.5, -0.25, 1))}
        assert await storage.get_embeddings(B, [a.id]) == {}
        await storage.set_embeddings(B, [(a.id, self.vec(9))])  # not B's memory: ignored
        assert await storage.get_embeddings(A, [a.id]) == {a.id: pytest.approx(self.vec(0.5, -0.25, 1))}
        await storage.set_embeddings(A, [(a.id, self.vec(0, 1))])  # overwrite
        assert await storage.get_embeddings(A, [a.id]) == {a.id: pytest.approx(self.vec(0, 1))}

    async def test_insert_memories_with_embedding_stores_it(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        m = memory(A, "with a vector", embedding=self.vec(0.25, 0.5))
        await storage.insert_memories([m])
        assert await storage.get_embeddings(A, [m.id]) == {m.id: pytest.approx(self.vec(0.25, 0.5))}
        hits = await storage.search_vectors(A, self.vec(0.25, 0.5), 5)
        assert [h.id for h in hits] == [m.id] and hits[0].score == pytest.approx(1.0, abs=1e-5)

    async def test_search_vectors_cosine_order(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        same = memory(A, "same direction, longer", embedding=self.vec(3, 0))
        near = memory(A, "near", embedding=self.vec(0.8, 0.6))
        orth = memory(A, "orthogonal", embedding=self.vec(0, 1))
        opposite = memory(A, "opposite", embedding=self.vec(-1, 0))
        bare = memory(A, "no vector")
        await storage.insert_memories([orth, opposite, near, same, bare])
        hits = await storage.search_vectors(A, self.vec(1, 0), 10)
        assert [h.id for h in hits] == [same.id, near.id, orth.id, opposite.id]
        assert [h.score for h in hits] == pytest.approx([1.0, 0.8, 0.0, -1.0], abs=1e-5)
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 2)] == [same.id, near.id]

    async def test_search_vectors_scoped_active_and_fresh(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        mine = memory(A, "mine", embedding=self.vec(0.6, 0.8))
        old = memory(A, "superseded", embedding=self.vec(1, 0))
        gone = memory(A, "deleted", embedding=self.vec(1, 0.01))
        theirs = memory(B, "theirs", embedding=self.vec(1, 0))
        await storage.insert_memories([mine, old, gone, theirs])
        await supersede(storage, A, [old.id], T0, [])
        await delete(storage, A, gone.id)
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10)] == [mine.id]
        # a write after a search is seen by the next search (no stale in-process index)
        newer = memory(A, "newer", embedding=self.vec(1, 0.1))
        await storage.insert_memories([newer])
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10)] == [newer.id, mine.id]
        await storage.set_embeddings(A, [(mine.id, self.vec(1, 0))])
        assert [h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10)] == [mine.id, newer.id]
        assert [h.id for h in await storage.search_vectors(B, self.vec(1, 0), 10)] == [theirs.id]
        assert await storage.search_vectors("nobody", self.vec(1, 0), 10) == []

    async def test_vectors_record_their_model_and_never_mix(self, storage: Storage) -> None:
        # issue 14: search compares only one model's vectors; `recall reindex` finds the rest.
        self.need(storage, "vectors")
        self.need(storage, "embedding_models")
        a = memory(A, "made by a", embedding=self.vec(1, 0), embedding_model="model-a")
        b = memory(A, "made by b", embedding=self.vec(1, 0.1), embedding_model="model-b",
                   minutes=1)
        legacy = memory(A, "stored before model ids", embedding=self.vec(1, 0.2), minutes=2)
        bare = memory(A, "no vector", minutes=3)
        old_b = memory(A, "history made by b", embedding=self.vec(1, 0.3),
                       embedding_model="model-b", minutes=4)
        theirs = memory(B, "theirs", embedding=self.vec(1, 0), embedding_model="model-b")
        await storage.insert_memories([a, b, legacy, bare, old_b, theirs])
        await supersede(storage, A, [old_b.id], T0 + timedelta(minutes=5), [])

        async def found(model: str | None) -> set[str]:
            return {h.id for h in await storage.search_vectors(A, self.vec(1, 0), 10, model=model)}

        assert await found("model-a") == {a.id, legacy.id}
        assert await found("model-b") == {b.id, legacy.id}
        assert await found(None) == {a.id, b.id, legacy.id}
        assert set(await storage.get_embeddings(A, [a.id, b.id, legacy.id, old_b.id],
                                                model="model-a")) == {a.id, legacy.id}
        assert set(await storage.get_embeddings(A, [a.id, b.id, old_b.id])) == {a.id, b.id, old_b.id}
        assert await storage.embedding_models(A) == {"model-a": 1, "model-b": 2, None: 1}
        assert await storage.embedding_models(None) == {"model-a": 1, "model-b": 3, None: 1}
        assert await storage.other_model_vectors(A, "model-a") == 1  # b; not legacy nor history
        assert await storage.other_model_vectors(A, "model-b") == 1
        assert await storage.other_model_vectors("nobody", "model-a") == 0

        redo = await storage.embeddings_to_redo(A, "model-a", 0, 10)
        assert [r.id for r in redo] == [b.id, legacy.id, old_b.id]  # insertion order
        assert (redo[0].namespace, redo[0].text, redo[0].session_id) == (A, "made by b", None)
        first = await storage.embeddings_to_redo(A, "model-a", 0, 1)
        assert [r.id for r in first] == [b.id]
        assert [r.id for r in await storage.embeddings_to_redo(A, "model-a", first[0].seq, 10)] \
            == [legacy.id, old_b.id]
        assert {r.id for r in await storage.embeddings_to_redo(None, "model-a", 0, 10)} \
            == {b.id, legacy.id, old_b.id, theirs.id}

        # Re-embedded with model-a: it leaves the redo list and joins model-a's searches
        # (an index built before the change follows it).
        await storage.set_embeddings(A, [(b.id, self.vec(0, 1))], model="model-a")
        assert [r.id for r in await storage.embeddings_to_redo(A, "model-a", 0, 10)] \
            == [legacy.id, old_b.id]
        assert await found("model-a") == {a.id, b.id, legacy.id}
        assert await found("model-b") == {legacy.id}
        assert await storage.other_model_vectors(A, "model-a") == 0
        assert await storage.embedding_models(A) == {"model-a": 2, "model-b": 1, None: 1}

    async def test_memory_sources_count_current_memories_by_recorded_provenance(
            self, storage: Storage) -> None:
        self.need(storage, "memory_sources")
        llm = {"extractor": "openai", "model": "smollm2", "prompt_version": "3"}
        jobs = {}
        for key, result in (("llm", llm), ("stub", {"extractor": "stub"}), ("old", None)):
            payload = {"text": key, **({"result": result} if result else {})}
            jobs[key], _ = await storage.enqueue(operation(A, key, payload=payload))
        theirs, _ = await storage.enqueue(operation(B, "b", payload={"result": llm}))
        rows = [memory(A, f"llm {i}", source_job_id=jobs["llm"].id) for i in range(3)]
        rows += [memory(A, "stub", source_job_id=jobs["stub"].id),
                 memory(A, "old", source_job_id=jobs["old"].id),
                 memory(A, "imported"), memory(A, "imported too"),
                 memory(A, "llm but superseded", source_job_id=jobs["llm"].id, valid_until=T0),
                 memory(B, "theirs", source_job_id=theirs.id)]
        await storage.insert_memories(rows)
        want = [{"extractor": "openai", "model": "smollm2", "prompt_version": "3", "memories": 3},
                {"extractor": None, "model": None, "prompt_version": None, "memories": 2},
                {"extractor": "", "model": None, "prompt_version": None, "memories": 1},
                {"extractor": "stub", "model": None, "prompt_version": None, "memories": 1}]
        assert await storage.memory_sources(A) == want
        assert await storage.memory_sources(None) == [{**want[0], "memories": 4}, *want[1:]]
        assert await storage.memory_sources("nobody") == []

    async def test_ids_missing_embeddings(self, storage: Storage) -> None:
        self.need(storage, "vectors")
        a1, a2 = memory(A, "a1 text"), memory(A, "a2 text")
        b1 = memory(B, "b1 text")
        done = memory(A, "has one", embedding=self.vec(1))
        old = memory(A, "superseded without one")
        await storage.insert_memories([a1, a2, b1, done, old])
        await supersede(storage, A, [old.id], T0, [])
        missing = await storage.ids_missing_embeddings(100)
        assert sorted(missing) == sorted([(A, a1.id, "a1 text"), (A, a2.id, "a2 text"),
                                          (B, b1.id, "b1 text")])
        assert len(await storage.ids_missing_embeddings(2)) == 2
        await storage.set_embeddings(A, [(a1.id, self.vec(1)), (a2.id, self.vec(0, 1))])
        assert await storage.ids_missing_embeddings(100) == [(B, b1.id, "b1 text")]

    # == time ==============================================================================
    async def test_datetimes_round_trip_as_aware_utc(self, storage: Storage) -> None:
        ist = timezone(timedelta(hours=5, minutes=30))
        created = datetime(2026, 6, 1, 18, 45, 30, 250000, tzinfo=ist)
        stored, _ = await storage.enqueue(operation(A, created_at=created))
        assert stored.created_at == created
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.created_at == created
        await storage.fail_job(claimed.id, 1, "x", retry=False)
        failed = await storage.get_operation(A, claimed.id)
        assert failed is not None and failed.finished_at is not None
        assert_utc(stored.created_at, claimed.created_at, claimed.lease_until, failed.created_at,
                   failed.finished_at)
        m = memory(A, "t", created_at=created, valid_from=created)
        await storage.insert_memories([m])
        await supersede(storage, A, [m.id], created + timedelta(days=1), [])
        (row,) = await self.all_memories(storage, A, active_only=False)
        assert row.created_at == created and row.valid_until == created + timedelta(days=1)
        assert_utc(row.created_at, row.valid_from, row.valid_until)
