"""What an owner's call pays for agents' partitions: `Storage.list_partitions` (every owner read
calls it once) on a database with many namespaces, SQLite and (with RECALL_TEST_PG_URL)
Postgres. Usage: python bench/speed_partitions.py [namespaces]"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid

from recall_core.models import Memory, Operation


async def measure(storage, n: int) -> dict[str, float]:
    rows = [Memory(namespace=f"user{i:06d}", text=f"note {i}") for i in range(n)]
    rows += [Memory(namespace=f"user000500/agent{j}", text=f"private {j}") for j in range(3)]
    for start in range(0, len(rows), 2000):
        await storage.insert_memories(rows[start:start + 2000])
    for i in range(0, n, 10):  # done jobs of every tenth namespace
        await storage.enqueue(Operation(namespace=f"user{i:06d}", idempotency_key=uuid.uuid4().hex,
                                        status="done"))
    out = {}
    for label, ns in (("with 3 agents", "user000500"), ("without agents", "user000501")):
        times = []
        for _ in range(300):
            t = time.perf_counter()
            found = await storage.list_partitions(ns)
            times.append((time.perf_counter() - t) * 1000)
        assert len(found) == (3 if label == "with 3 agents" else 0), found
        out[label] = statistics.median(times)
    times = []
    for _ in range(300):  # for scale: the cheapest read a search makes
        t = time.perf_counter()
        await storage.get_memories("user000501", [rows[501].id])
        times.append((time.perf_counter() - t) * 1000)
    out["get_memories (1 id), for scale"] = statistics.median(times)
    return out


async def main(n: int) -> None:
    from recall_sqlite import make_storage

    path = os.path.join(tempfile.mkdtemp(), "b.db")
    s = make_storage(f"sqlite:///{path}")
    await s.open()
    try:
        print("sqlite", n, "namespaces:", await measure(s, n))
    finally:
        await s.close()
    url = os.environ.get("RECALL_TEST_PG_URL")
    if url:
        import asyncpg
        from recall_postgres import make_postgres

        schema = f"bench_{uuid.uuid4().hex[:8]}"
        con = await asyncpg.connect(url)
        await con.execute(f"CREATE SCHEMA {schema}")
        sep = "&" if "?" in url else "?"
        p = make_postgres(f"{url}{sep}search_path={schema}")
        await p.open()
        try:
            print("postgres", n, "namespaces:", await measure(p, n))
        finally:
            await p.close()
            await con.execute(f"DROP SCHEMA {schema} CASCADE")
            await con.close()


if __name__ == "__main__" and "--search" not in sys.argv:
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000))


async def search_cost(n: int = 6000) -> None:
    """An owner's search (BM25, SQLite) over n memories in one namespace, and over the same n
    spread over the namespace and two agents' partitions (three partitions read)."""
    from recall_core.access.principal import Principal
    from recall_core.config import RecallConfig
    from recall_core.server.runtime import build_runtime
    from recall_testkit.backends import bundled

    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    for split in (False, True):
        path = os.path.join(tempfile.mkdtemp(), "s.db")
        rt = await build_runtime(RecallConfig(db=path, rankers={"bm25": 1.0}, extractor="stub",
                                              worker={"concurrency": 0}, decay={"interval": 0}),
                                 bundled())
        try:
            spaces = ["team", "team/planner", "team/writer"] if split else ["team"]
            rows = [Memory(namespace=spaces[i % len(spaces)],
                           text=f"note {i}: {words[i % 8]} {words[(i * 3) % 8]} item {i % 97}")
                    for i in range(n)]
            await rt.storage.insert_memories(rows)
            times = []
            for i in range(60):
                t = time.perf_counter()
                await rt.service.search(Principal("team"), f"{words[i % 8]} item {i % 97}",
                                        limit=10, explain=True)
                times.append((time.perf_counter() - t) * 1000)
            print(f"owner search, {n} memories in {len(spaces)} partition(s): "
                  f"median {statistics.median(times[10:]):.2f} ms")
        finally:
            await rt.close()


if __name__ == "__main__" and "--search" in sys.argv:
    asyncio.run(search_cost())
