"""A runtime with test extractors registered, and a store waited on until its job is done:
for tests of what the worker hands an extractor and what it writes from the answer."""

from __future__ import annotations

import asyncio

from recall_core import Extractor, hookimpl
from recall_core.config import RecallConfig
from recall_core.server.runtime import build_runtime

from .backends import PG_URL, bundled


class Extractors:
    """A plugin registering the given extractor instances under their names."""

    def __init__(self, *extractors: Extractor):
        self.extractors = extractors

    @hookimpl
    def register_extractors(self, register):
        for ex in self.extractors:
            register(ex.name, lambda settings, ex=ex: ex)


async def runtime(backend: str, tmp_path, extractor: str, *extra: Extractor):
    """A runtime on `backend` ("sqlite": a file under tmp_path; else RECALL_TEST_PG_URL) with
    one worker polling fast and no decay, extracting with `extractor`."""
    db = str(tmp_path / "r.db") if backend == "sqlite" else PG_URL
    pm = bundled(postgres=backend != "sqlite")
    if extra:
        pm.register(Extractors(*extra), name="test-extractors")
    cfg = RecallConfig(db=db, worker={"concurrency": 1, "poll_interval": 0.02, "yield_pause": 0},
                       decay={"interval": 0}, extractor=extractor)
    return await build_runtime(cfg, pm)


async def stored(rt, ns: str, text: str, day: int) -> None:
    """Store `text` said on 2026-03-`day` and wait until its job is done (asserting it)."""
    ack = await rt.service.store(ns, text, created_at=f"2026-03-{day:02d}T10:00:00+00:00")
    for _ in range(400):
        op = await rt.storage.get_operation(ns, ack["job_id"])
        if op.status in ("done", "failed"):
            break
        await asyncio.sleep(0.025)
    assert op.status == "done", op.error
