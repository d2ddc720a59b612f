"""Keyword search at scale on the speed benchmark's corpus. Not collected by pytest.

    python plugins/postgres/tests/bench_fulltext.py load  ADMIN_URL DBNAME [N]   # create + load
    python plugins/postgres/tests/bench_fulltext.py search DB_URL [--explain]
    python plugins/postgres/tests/bench_fulltext.py drop  ADMIN_URL DBNAME

`load` creates DBNAME and fills one namespace ("speed") with bench/speed.py's corpus the way
its c_import does (parse_lines + import_verbatim, created_at spread over a year), with
deterministic random 384-d vectors (the search cost of the real[] fallback does not depend on
the values; the rows get their real width), then ANALYZEs. `search` times
storage.search_fulltext (limit 100, as the bm25 ranker asks) and MemoryService.search
(limit 10, bm25 only, the product defaults) over bench/speed.py's 200 queries, after 5
warm-ups, and prints p50/p95 per query kind; `--explain` prints EXPLAIN ANALYZE of
get_memories / get_embeddings for one query's candidates.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import speed  # noqa: E402
from recall_testkit.postgres import with_database  # noqa: E402
from recall_core import Embedder

NS = speed.NS


class RandomEmbedder(Embedder):
    name = "random"
    ready = True
    dim = 384

    def __init__(self) -> None:
        rng = np.random.default_rng(0)
        v = rng.normal(size=(4096, self.dim)).astype(np.float32)
        self.pool = v / np.linalg.norm(v, axis=1, keepdims=True)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        import zlib
        return [self.pool[zlib.crc32(t.encode()) % len(self.pool)].tolist() for t in texts]


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def fmt(xs: list[float]) -> str:
    return f"p50 {pct(xs, .5):6.1f}  p95 {pct(xs, .95):6.1f}  mean {statistics.fmean(xs):6.1f}"


async def load(admin: str, name: str, n: int) -> None:
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config
    from recall_core.memory.transfer import import_verbatim, parse_lines

    con = await asyncpg.connect(admin)
    await con.execute(f'CREATE DATABASE "{name}"')
    await con.close()
    url = with_database(admin, name)
    texts = speed.corpus(n)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.jsonl"
        speed.write_jsonl(path, texts)
        with path.open(encoding="utf-8") as fh:
            rows = parse_lines(fh)
    rt = await build_runtime(load_config(None, db=url, rankers=speed.BM25), start_worker=False)
    try:
        t0 = time.perf_counter()
        await import_verbatim(rt.storage, NS, rows, RandomEmbedder())
        print(f"imported {n} in {time.perf_counter() - t0:.1f} s")
    finally:
        await rt.close()
    con = await asyncpg.connect(url)
    await con.execute("ANALYZE")
    await con.close()


async def drop(admin: str, name: str) -> None:
    con = await asyncpg.connect(admin)
    await con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await con.close()


async def search(url: str, explain: bool, rounds: int = 2) -> None:
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config
    from recall_core.kit.text import query_terms

    queries = speed.make_queries(200)
    rt = await build_runtime(load_config(None, db=url, rankers=speed.BM25), start_worker=False)
    st = rt.storage
    out = {}
    try:
        for _, q in queries[:5]:
            await st.search_fulltext(NS, query_terms(q), 100)
            await rt.service.search(NS, q, limit=10)
        for label, fn in (("search_fulltext", lambda q: st.search_fulltext(NS, query_terms(q), 100)),
                          ("service.search", lambda q: rt.service.search(NS, q, limit=10))):
            best: dict[str, list[float]] | None = None
            for _ in range(rounds):
                lat: dict[str, list[float]] = {"all": [], "common": [], "rare": []}
                for kind, q in queries:
                    t0 = time.perf_counter()
                    await fn(q)
                    ms = (time.perf_counter() - t0) * 1000
                    lat["all"].append(ms)
                    lat[kind].append(ms)
                if best is None or pct(lat["all"], .5) < pct(best["all"], .5):
                    best = lat
            assert best is not None
            for kind, xs in best.items():
                print(f"{label:16s} {kind:6s} {fmt(xs)}")
            out[label] = {k: [pct(v, .5), pct(v, .95)] for k, v in best.items()}
        plans = getattr(getattr(st, "fulltext", None), "plans", None)
        if plans is not None:
            print("plans:", dict(plans))
        await rt.service.drain()
        if explain:
            q = queries[0][1]
            hits = await st.search_fulltext(NS, query_terms(q), 100)
            ids = [h.id for h in hits]
            async with st.pool.acquire() as con:
                for sql in (
                    "SELECT * FROM memories WHERE namespace = $1 AND id = ANY($2::text[]) "
                    "AND valid_until IS NULL",
                    "SELECT id, embedding FROM memories WHERE namespace = $1 AND "
                    "id = ANY($2::text[]) AND embedding IS NOT NULL"):
                    plan = await con.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, NS, ids[:30])
                    print("\n".join(r[0] for r in plan))
    finally:
        await rt.close()
    print(json.dumps(out))


def main() -> None:
    cmd = sys.argv[1]
    if cmd == "load":
        asyncio.run(load(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 100000))
    elif cmd == "search":
        asyncio.run(search(sys.argv[2], "--explain" in sys.argv))
    elif cmd == "drop":
        asyncio.run(drop(sys.argv[2], sys.argv[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
