"""Rough latency figures for the README: python tests/bench_pg.py URL [array|pgvector] [N].

Creates a scratch database on the server at URL, loads N memories with 384-d vectors spread
over 10 namespaces, and times the hot paths. Not collected by pytest."""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid

import asyncpg
import numpy as np

from recall_core.models import Memory, Operation
from recall_postgres import PostgresSettings, PostgresStorage

from recall_testkit.postgres import with_database

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega").split()


def timed(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    return f"p50 {statistics.median(ms):.1f} ms, p95 {ms[int(len(ms) * 0.95) - 1]:.1f} ms"


async def main(url: str, mode: str, n: int) -> None:
    name = f"recall_bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    s = PostgresStorage(with_database(url, name), PostgresSettings(vector=mode))
    try:
        await s.open()
        print(s.description)
        rng = np.random.default_rng(0)
        t = time.perf_counter()
        for start in range(0, n, 2000):
            batch = []
            for i in range(start, min(n, start + 2000)):
                text = " ".join(rng.choice(WORDS, 12)) + f" item{i}"
                vec = rng.normal(size=384).astype(np.float32)
                batch.append(Memory(namespace=f"ns{i % 10}", text=text,
                                    embedding=(vec / np.linalg.norm(vec)).tolist()))
            await s.insert_memories(batch)
        print(f"insert {n} memories with vectors: {time.perf_counter() - t:.1f} s")
        await s.pool.execute("ANALYZE memories")
        q = [rng.normal(size=384).tolist() for _ in range(30)]
        t = time.perf_counter()
        await s.search_vectors("ns0", q[0], 100)
        print(f"first vector search (array: builds the matrix): {(time.perf_counter() - t) * 1000:.0f} ms")
        lat = []
        for v in q:
            t = time.perf_counter()
            await s.search_vectors("ns0", v, 100)
            lat.append(time.perf_counter() - t)
        print(f"search_vectors top-100 in a {n // 10}-row namespace: {timed(lat)}")
        lat = []
        for i in range(30):
            terms = list(rng.choice(WORDS, 3))
            t = time.perf_counter()
            await s.search_fulltext("ns0", terms, 100)
            lat.append(time.perf_counter() - t)
        print(f"search_fulltext 3 terms top-100: {timed(lat)}")
        lat = []
        for i in range(100):
            t = time.perf_counter()
            await s.enqueue(Operation(namespace="ns0", idempotency_key=str(i)))
            lat.append(time.perf_counter() - t)
        print(f"enqueue: {timed(lat)}")
        lat = []
        for i in range(100):
            t = time.perf_counter()
            await s.claim_job(60)
            lat.append(time.perf_counter() - t)
        print(f"claim_job: {timed(lat)}")
    finally:
        await s.close()
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "auto",
                     int(sys.argv[3]) if len(sys.argv) > 3 else 50_000))
