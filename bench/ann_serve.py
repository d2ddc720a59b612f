"""The approximate vector index through a real `recall serve`: one namespace of N memories
(default 1M) with realistic 384-d vectors, hybrid search over HTTP, server RSS, and the first
search after a restart.

The database is built once, straight through the storage (bench/cold_start.py does the
same), with the texts of bench/speed.py's corpus and the vectors of bench/ann_candidates.py
(real all-MiniLM-L6-v2 vectors of corpus sentences, mixed and noised; run that script first
for the size, it caches them in /tmp/ann_bench). Queries are bench/speed.py's 200 queries,
embedded by the server's own model (MiniLM).

Phases, each a fresh server on the same file:
  build  - first start: the first searches answer from full text while the index builds
           (time to the first semantic answer = the build), then it is saved;
  serve  - hybrid p50/p95 over 200 queries (x --passes), server peak and steady RSS;
  restart- a new server: first search latency and time to the first semantic answer
           (loading the saved index), peak RSS.
  --exact also runs `serve` with the approximate index off (before/after side by side).

    python bench/ann_serve.py --size 1000000 --db /tmp/ann1m.db [--exact] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "testkit"))
sys.path.insert(0, str(ROOT / "bench"))

from recall_testkit.serverproc import Agent, ServerProcess  # noqa: E402
from speed import corpus, loadavg, make_queries, vmhwm_mb  # noqa: E402

NS = "annbench"


async def build(db: str, n: int, vectors: str) -> None:
    from recall_core.models import Memory
    from recall_sqlite import SQLiteStorage

    x = np.load(vectors, mmap_mode="r")
    assert len(x) >= n, f"{vectors} holds {len(x)} vectors, fewer than {n}"
    s = SQLiteStorage(db)
    await s.open()
    texts = corpus(n)
    try:
        for start in range(0, n, 5000):
            block = np.asarray(x[start:start + 5000])
            await s.insert_memories([Memory(namespace=NS, text=t, type="fact", importance=0.5,
                                            embedding=v.tolist())
                                     for t, v in zip(texts[start:start + len(block)], block)])
            if start % 100_000 == 0:
                print(f"  {start} rows", flush=True)
    finally:
        await s.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def healthy(srv: ServerProcess, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = httpx.get(srv.base + "/health", timeout=5).json()
        if not any("warming up" in r for r in body["degraded"]):
            return
        time.sleep(0.1)
    raise RuntimeError("model never warmed up")


async def until_semantic(a: Agent, query: str, timeout: float) -> tuple[float, float]:
    """(first search ms, ms until a search answered without a 'loading' note)."""
    t0 = time.perf_counter()
    r = await a.ok("search_memories", query=query, limit=10)
    first = (time.perf_counter() - t0) * 1000
    while any("loading" in d for d in r["degraded"]):
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"still loading after {timeout} s: {r['degraded']}")
        await asyncio.sleep(0.05)
        r = await a.ok("search_memories", query=query, limit=10)
    return first, (time.perf_counter() - t0) * 1000


async def serve_phase(srv: ServerProcess, token: str, passes: int) -> dict:
    queries = [q for _, q in make_queries(200)]
    async with Agent(srv.url, token) as a:
        first, semantic = await until_semantic(a, queries[0], 3600)
        lat = []
        for _ in range(passes):
            for q in queries:
                t0 = time.perf_counter()
                r = await a.ok("search_memories", query=q, limit=10)
                lat.append((time.perf_counter() - t0) * 1000)
                assert not r["degraded"], r["degraded"]
    return {"first_ms": round(first, 1), "semantic_ms": round(semantic, 1),
            "p50_ms": round(statistics.median(lat), 1),
            "p95_ms": round(sorted(lat)[int(0.95 * len(lat))], 1),
            "peak_rss_mb": round(vmhwm_mb(srv.proc.pid) or 0), "steady_rss_mb": round(rss_mb(srv.proc.pid))}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--db", default="/tmp/ann1m.db")
    ap.add_argument("--vectors", default="/tmp/ann_bench/vectors_1000000_6000.npy")
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--exact", action="store_true", help="also serve with the index off")
    ap.add_argument("--json")
    args = ap.parse_args()
    db = args.db
    work = Path(db).parent
    out: dict = {"size": args.size, "load_before": loadavg()}
    if not Path(db).exists():
        t0 = time.perf_counter()
        await build(db, args.size, args.vectors)
        out["db_build_s"] = round(time.perf_counter() - t0)
        print("built", out["db_build_s"], "s", flush=True)
    env = {"RECALL_DISABLE_PLUGINS": "", "HF_HUB_OFFLINE": "1"}
    token = ServerProcess(db, work, env=env).token(NS)
    for phase in ("build", "restart"):
        srv = ServerProcess(db, work, env=env).start(timeout=600)
        try:
            healthy(srv)
            out[phase] = await serve_phase(srv, token, args.passes)
            out[phase]["load"] = loadavg()
            print(phase, out[phase], flush=True)
        finally:
            srv.stop()
    if args.exact:
        env_x = {**env, "RECALL_PLUGIN_SQLITE_VECTOR_ANN_MIN_ROWS": str(10**9),
                 "RECALL_PLUGIN_SQLITE_VECTOR_CACHE_MB": "8192"}
        srv = ServerProcess(db, work, env=env_x).start(timeout=600)
        try:
            healthy(srv)
            out["exact"] = await serve_phase(srv, token, 1)
            out["exact"]["load"] = loadavg()
            print("exact", out["exact"], flush=True)
        finally:
            srv.stop()
    out["load_after"] = loadavg()
    print(json.dumps(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
