"""Rough timings of recall-sqlite on synthetic data (not a test; run it by hand).

    python plugins/sqlite/tests/bench_storage.py [rows] [namespaces]

Reports enqueue (store ack), search_fulltext and search_vectors latencies. The figures in
plugins/sqlite/README.md come from this script.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from recall_core.models import Memory, Operation
from recall_sqlite import make_storage

WORDS = ("user prefers dark mode editor python rust coffee tea meeting budget review project "
         "deadline travel lisbon porto berlin garden music jazz piano running cycling book "
         "novel recipe pasta curry deploy server database postgres sqlite index vector search "
         "memory agent model token invoice customer support ticket release bug feature design "
         "holiday family birthday dentist doctor gym swim climb hike camera photo").split()
WORDS += [f"term{i}" for i in range(3000)]  # a long tail, as in real text


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS[:60]) if rng.random() < 0.5 else rng.choice(WORDS)
                    for _ in range(rng.randint(8, 25)))


def ms(samples: list[float]) -> str:
    s = sorted(samples)
    return (f"median {statistics.median(s) * 1000:.2f} ms, p95 {s[int(len(s) * 0.95)] * 1000:.2f} ms"
            f" ({len(s)} runs)")


async def main(rows: int, namespaces: int, dim: int = 384) -> None:
    rng = random.Random(7)
    nprng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        s = make_storage(f"sqlite:///{Path(tmp) / 'bench.db'}")
        await s.open()
        t = time.perf_counter()
        batch = 5000
        for start in range(0, rows, batch):
            vecs = nprng.standard_normal((min(batch, rows - start), dim)).astype(np.float32)
            await s.insert_memories([
                Memory(namespace=f"ns{(start + i) % namespaces}", text=text(rng),
                       embedding=vecs[i].tolist())
                for i in range(len(vecs))])
        print(f"insert {rows} rows ({namespaces} namespaces, dim {dim}): "
              f"{time.perf_counter() - t:.1f} s")
        big = "ns0"
        per_ns = rows // namespaces

        enq = []
        for i in range(300):
            t = time.perf_counter()
            await s.enqueue(Operation(namespace=big, idempotency_key=f"k{i}", payload={"text": "x" * 500}))
            enq.append(time.perf_counter() - t)
        print(f"enqueue (store ack): {ms(enq)}")

        for terms in (["dark", "mode"], ["term17"], ["user", "prefers", "coffee", "meeting"]):
            lat = []
            for _ in range(50):
                t = time.perf_counter()
                hits = await s.search_fulltext(big, terms, 100)
                lat.append(time.perf_counter() - t)
            print(f"search_fulltext {terms} over {per_ns} rows in ns (of {rows}): {ms(lat)}, "
                  f"{len(hits)} hits")

        q = nprng.standard_normal(dim).astype(np.float32).tolist()
        t = time.perf_counter()
        await s.search_vectors(big, q, 100)
        print(f"search_vectors first call (loads the {per_ns} x {dim} matrix): "
              f"{(time.perf_counter() - t) * 1000:.1f} ms")
        lat = []
        for _ in range(50):
            t = time.perf_counter()
            await s.search_vectors(big, q, 100)
            lat.append(time.perf_counter() - t)
        print(f"search_vectors cached: {ms(lat)}")
        lat = []
        for _ in range(20):
            await s.insert_memories([Memory(namespace=big, text=text(rng),
                                            embedding=nprng.standard_normal(dim).tolist())])
            t = time.perf_counter()
            await s.search_vectors(big, q, 100)
            lat.append(time.perf_counter() - t)
        print(f"search_vectors right after a write (incremental update): {ms(lat)}")
        lat = []
        for i in range(30):
            t = time.perf_counter()
            await s.list_memories(big, 20, i * 20)
            lat.append(time.perf_counter() - t)
        print(f"list_memories (page + total): {ms(lat)}")
        await s.close()


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    asyncio.run(main(*(args or [100_000, 1])))
