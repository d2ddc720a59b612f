"""Failures that are not the job's own, and the storage-fault hooks core relies on:
`release_job` gives a claim back uncounted; `classify_failure` leaves ordinary errors alone;
`check_writable` commits on a healthy database. (A full disk and a read-only database are
tested through the real server, tests/test_storage_faults.py.)"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

from ...contracts import Storage
from ...errors import StorageConflict
from .base import A, ContractBase, operation


class FaultTests(ContractBase):
    async def test_release_job_gives_the_attempt_back(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        claimed = await storage.claim_job(60)
        assert claimed is not None and claimed.attempts == 1
        assert await storage.release_job(op.id, 1) is True
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "queued" and job.attempts == 0
        again = await storage.claim_job(60)
        assert again is not None and again.id == op.id and again.attempts == 1

    async def test_release_job_retry_at_holds_the_job_back(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await storage.claim_job(60)
        held = datetime.now(timezone.utc) + timedelta(seconds=1.2)
        assert await storage.release_job(op.id, 1, held) is True
        assert await storage.claim_job(60) is None
        assert await storage.count_jobs(A, ("queued", "running")) == 1
        await asyncio.sleep(1.4)
        again = await storage.claim_job(60)
        assert again is not None and again.id == op.id and again.attempts == 1

    async def test_release_job_with_stale_claim_is_ignored(self, storage: Storage) -> None:
        op, _ = await storage.enqueue(operation(A))
        await self.claim_expired(storage, op.id, attempts=1)
        assert await storage.release_job(op.id, 1) is False
        job = await storage.get_operation(A, op.id)
        assert job is not None and job.status == "running" and job.attempts == 2

    async def test_classify_failure_leaves_other_errors_alone(self, storage: Storage) -> None:
        for exc in (ValueError("x"), RuntimeError("database"), TimeoutError(),
                    StorageConflict("dup", "duplicate_id")):
            assert storage.classify_failure(exc) is None

    async def test_check_writable_commits_on_a_healthy_database(self, storage: Storage) -> None:
        await storage.check_writable()
        await storage.check_writable()
