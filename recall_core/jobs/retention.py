"""Retention: what Recall keeps of a store's text after the store is done.

A store's text stays in its operation row while the job may still need it (queued, running,
retrying). Once the job has finished (done or failed), the text is kept for
`retention.operation_text_days` (default 7: long enough to look into a failure, retry or
re-extract), then scrubbed like a forgotten memory's source (`forget.scrub_payload`): the
operation keeps its id, idempotency key, status, result ids and a SHA-256 of the text, so a
retry with the same key is still recognised. The memories themselves are kept until deleted.

A2A tasks (their messages and artifacts hold the texts too) are deleted
`retention.task_days` (default 30) after their last update.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..memory.forget import scrub_payload
from ..contracts import Storage
from ..memory.writes import transaction

PAGE = 200


async def scrub_old_payloads(storage: Storage, days: float, now: datetime) -> int:
    """Scrub the text of operations finished more than `days` ago. Returns how many."""
    done = 0
    while True:
        ops = await storage.payloads_to_scrub(now - timedelta(days=days), PAGE)
        if not ops:
            return done
        by_ns: dict[str, list] = {}
        for op in ops:
            by_ns.setdefault(op.namespace, []).append(op)
        for namespace, batch in by_ns.items():
            async def body(tx: Any, batch: list = batch) -> None:
                for op in batch:
                    await tx.set_payload(op.id, scrub_payload(op.payload))

            await transaction(storage, namespace, [], body)
        done += len(ops)
        if len(ops) < PAGE:
            return done


async def expire_tasks(storage: Storage, days: float, now: datetime) -> int:
    """Delete A2A tasks last updated more than `days` ago. Returns how many."""
    return await storage.expire_tasks(now - timedelta(days=days))
