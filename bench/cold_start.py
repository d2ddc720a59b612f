"""Cold start: the first hybrid search after `recall serve` starts, on a namespace of N
memories with vectors, over real HTTP with the real embedding model. Side by side in one run:

- `inline`: the namespace's vectors load inside the first search (what every search did
  before; `vector_inline_rows` set above N);
- `background` (the default): the first search answers from full text at once and says so;
  the vectors load in the background and semantic search joins when they are in.

Reported per mode (median of --runs server starts): the first search's latency, when the
first search without the "loading" note answered (from the first search), and the server's
peak RSS. The database is built once, straight through the storage (random unit vectors,
the corpus of bench/speed.py), so the figure is the load, not the embedding.

    python bench/cold_start.py --size 100000 --runs 3 [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "testkit"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_testkit.serverproc import Agent, ServerProcess  # noqa: E402
from speed import corpus, loadavg, machine, vmhwm_mb  # noqa: E402

NS = "cold"


async def build(db: str, n: int, dim: int = 384) -> None:
    from recall_core.models import Memory
    from recall_sqlite import SQLiteStorage

    s = SQLiteStorage(db)
    await s.open()
    rng = np.random.default_rng(7)
    texts = corpus(n)
    try:
        for start in range(0, n, 5000):
            block = rng.normal(size=(min(5000, n - start), dim)).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            await s.insert_memories([Memory(namespace=NS, text=t, type="fact", importance=0.5,
                                            embedding=v.tolist())
                                     for t, v in zip(texts[start:start + len(block)], block)])
    finally:
        await s.close()


def healthy(srv: ServerProcess, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = httpx.get(srv.base + "/health", timeout=5).json()
        if not any("warming up" in r for r in body["degraded"]):
            return
        time.sleep(0.1)
    raise RuntimeError("model never warmed up")


async def one_start(db: str, work: Path, token: str, inline: bool) -> dict:
    env = {"RECALL_DISABLE_PLUGINS": ""}
    if inline:
        env["RECALL_PLUGIN_SQLITE_VECTOR_INLINE_ROWS"] = str(10**9)
    srv = ServerProcess(db, work, env=env).start()
    try:
        healthy(srv)
        async with Agent(srv.url, token) as a:
            t0 = time.perf_counter()
            first = await a.ok("search_memories", query="quarterly budget review", limit=10)
            first_ms = (time.perf_counter() - t0) * 1000
            semantic_ms = first_ms
            while any("loading" in d for d in first["degraded"]):
                await asyncio.sleep(0.05)
                first = await a.ok("search_memories", query="quarterly budget review", limit=10)
                semantic_ms = (time.perf_counter() - t0) * 1000
        return {"first_ms": first_ms, "semantic_ms": semantic_ms,
                "peak_rss_mb": vmhwm_mb(srv.proc.pid)}
    finally:
        srv.stop()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = str(work / "cold.db")
        t0 = time.perf_counter()
        await build(db, args.size)
        print(f"built {args.size} memories in {time.perf_counter() - t0:.0f} s", flush=True)
        env = {**os.environ, "RECALL_DISABLE_PLUGINS": ""}
        token = ServerProcess(db, work, env=env).token(NS)
        out: dict = {"size": args.size, "runs": args.runs, "machine": machine(),
                     "load_before": loadavg()}
        for run in range(args.runs):  # modes interleaved: drift hits both alike
            for mode in ("inline", "background"):
                r = await one_start(db, work, token, mode == "inline")
                out.setdefault(mode, []).append(r)
                print(mode, run, r, flush=True)
        out["load_after"] = loadavg()
    for mode in ("inline", "background"):
        rows = out[mode]
        out[f"{mode}_median"] = {k: round(statistics.median(r[k] for r in rows), 1)
                                 for k in ("first_ms", "semantic_ms", "peak_rss_mb")}
        print(mode, out[f"{mode}_median"])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
