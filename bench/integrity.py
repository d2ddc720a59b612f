"""Cost of the integrity write path at scale (issue 13), SQLite, one namespace.

    python bench/integrity.py [--rows 100000] [--jobs 200] [--forgets 50]

Loads `rows` memories (a tenth of them facts over 1,000 keys, with history), then measures
per job the time of `process` (extract with the stub extractor, plan under the key lock,
commit), and per call the time of forgetting one fact (its whole timeline, payload scrub,
context scrub). Runs against whatever recall_core is importable, so the same script measures
an older checkout for a before/after (it falls back to that checkout's `extraction.process`
and `delete_memory`).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from recall_core.models import Memory, Operation, utcnow
from recall_extractors.stub import StubExtractor
from recall_sqlite import make_storage

try:
    from recall_core.memory.writes import process
    NEW = True
except ImportError:  # an older checkout
    from recall_core.extraction import process  # type: ignore[no-redef]
    NEW = False

NS = "bench"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def main(rows: int, jobs: int, forgets: int) -> None:
    path = Path(tempfile.mkdtemp()) / "bench.db"
    s = make_storage(f"sqlite:///{path}")
    await s.open()
    rng = random.Random(7)
    t0 = utcnow() - timedelta(days=30)
    batch: list[Memory] = []
    current: dict[str, Memory] = {}
    for i in range(rows):
        at = t0 + timedelta(seconds=i)
        if i % 10 == 0:
            key = f"attr{rng.randrange(1000)}"
            m = Memory(namespace=NS, text=f"user {key} is value{i}", entity="user",
                       attribute=key, value=f"value{i}", created_at=at, valid_from=at)
            old = current.get(key)
            if old is not None:  # the previous value becomes history
                old.valid_until = at
                if NEW:
                    old.superseded_by = m.id
            current[key] = m
        else:
            m = Memory(namespace=NS, text=f"note {i} about topic {rng.randrange(5000)} and more",
                       created_at=at, valid_from=at)
        batch.append(m)
    await s.insert_memories(batch)
    extractor = StubExtractor()
    times = []
    for j in range(jobs):
        text = f"I use editor{j % 7}." if j % 2 else f"My favourite drink is tea number {j}."
        await s.enqueue(Operation(namespace=NS, idempotency_key=f"k{j}", payload={"text": text}))
        op = await s.claim_job(60)
        start = time.perf_counter()
        assert await process(s, extractor, None, op, utcnow())
        times.append((time.perf_counter() - start) * 1000)
    print(f"{'new' if NEW else 'old'} write path, {rows} rows: job p50 {pct(times, .5):.2f} ms, "
          f"p95 {pct(times, .95):.2f} ms")
    targets = rng.sample(list(current.values()), forgets)
    times = []
    for m in targets:
        start = time.perf_counter()
        if NEW:
            from recall_core.memory.forget import forget
            await forget(s, NS, m.id)
        else:
            await s.delete_memory(NS, m.id)
        times.append((time.perf_counter() - start) * 1000)
    print(f"{'forget (whole fact, scrubs)' if NEW else 'delete_memory (one row)'}: "
          f"p50 {pct(times, .5):.1f} ms, p95 {pct(times, .95):.1f} ms, "
          f"mean {statistics.mean(times):.1f} ms")
    await s.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--forgets", type=int, default=50)
    a = ap.parse_args()
    asyncio.run(main(a.rows, a.jobs, a.forgets))
