"""What issue 14's search changes cost at 100k memories, side by side in one run.

The corpus, queries and pooled vectors are bench/speed.py's (100k synthetic memories, 200
queries, real vectors of 4,096 corpus sentences handed out by crc32). Two comparisons,
each interleaved query by query so the shared machine's drift hits both sides alike:

* **in-process** (MemoryService.search, limit 10, product defaults), the current code with
  and without the evidence score (relevance.py), the time windows (timeframe.py) and the
  session locality step (search.apply_sessions);
* **MCP over HTTP**: a `recall serve` of the code before issue 14 (a git worktree of
  BASE_COMMIT, its sentence-transformers MiniLM on onnx) next to one of the current code
  (torch-free int8 MiniLM), same database file copied, hybrid rankers.

    python bench/speed_scores.py [--size 100000] [--base bf6680a]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import speed  # noqa: E402

BASE_COMMIT = "bf6680a"


def p(samples: list[float], q: float) -> float:
    return round(speed.pct(samples, q / 100), 2)


async def inprocess(db: str, queries: list[str], rankers: dict[str, float]) -> dict:
    from recall_core.search import relevance, steps
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    # (module, name): the evidence and the two relevance steps, swapped for "rank only"
    places = {"evidence": relevance, "apply_timeframe": steps, "apply_sessions": steps}
    real = {n: getattr(m, n) for n, m in places.items()}
    rank_only = {"evidence": lambda q, ms, src: {m.id: 1.0 for m in ms},
                 "apply_timeframe": lambda q, ms, rel: rel,
                 "apply_sessions": lambda ms, rel: rel}
    rt = await build_runtime(load_config(None, db=db, rankers=rankers), start_worker=False)
    lat: dict[str, list[float]] = {"current": [], "rank-only": []}
    try:
        await speed.warm_up(rt, queries)
        for _ in range(2):
            for q in queries:
                for variant in ("current", "rank-only"):
                    for name, fn in (rank_only if variant == "rank-only" else real).items():
                        setattr(places[name], name, fn)
                    t0 = time.perf_counter()
                    await rt.service.search(speed.NS, q, limit=10)
                    lat[variant].append((time.perf_counter() - t0) * 1000)
                    for name, fn in real.items():
                        setattr(places[name], name, fn)
    finally:
        await rt.close()
    return {v: {"p50": p(x, 50), "p95": p(x, 95)} for v, x in lat.items()}


async def http(dbs: dict[str, str], envs: dict[str, dict], queries: list[str], work: Path) -> dict:
    from recall_testkit.serverproc import Agent, ServerProcess

    import httpx

    cfg = work / "recall.toml"
    cfg.write_text("[rankers]\nbm25 = 1.0\ndense = 0.7\n")
    servers = {}
    try:
        for name, db in dbs.items():
            srv = ServerProcess(db, work, env={"RECALL_DISABLE_PLUGINS": "", **envs[name]},
                                args=("--config", str(cfg)))
            servers[name] = srv.start(timeout=180)
            for _ in range(600):
                if not httpx.get(srv.base + "/health").json()["degraded"]:
                    break
                await asyncio.sleep(0.5)
        agents = {n: Agent(s.url, s.token(speed.NS)) for n, s in servers.items()}
        lat: dict[str, list[float]] = {n: [] for n in servers}
        for a in agents.values():
            await a.__aenter__()
        try:
            for q in queries[:5]:
                for a in agents.values():
                    await a.ok("search_memories", query=q, limit=10)
            for _ in range(2):
                for q in queries:
                    for n, a in agents.items():
                        t0 = time.perf_counter()
                        await a.ok("search_memories", query=q, limit=10)
                        lat[n].append((time.perf_counter() - t0) * 1000)
        finally:
            for a in agents.values():
                await a.__aexit__(None, None, None)
    finally:
        for s in servers.values():
            s.stop()
    return {n: {"p50": p(x, 50), "p95": p(x, 95)} for n, x in lat.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--base", default=BASE_COMMIT)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="speed-scores-"))
    base_tree = work / "base"
    try:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base_tree), args.base],
                       check=True, capture_output=True)
        texts = speed.corpus(args.size)
        jsonl = work / "corpus.jsonl"
        speed.write_jsonl(jsonl, texts)
        pool_texts = texts[: 4096]
        pool_file = str(work / "pool.npy")
        print("pool", speed.in_child(speed.c_pool, pool_texts, pool_file), file=sys.stderr)
        db = str(work / "base.db")
        print("import", speed.in_child(speed.c_import, db, str(jsonl), "pool", (pool_texts, pool_file)),
              file=sys.stderr)
        queries = [q for _, q in speed.make_queries(200)]
        out = {"load": speed.loadavg(), "cpu_probe_ms": speed.cpu_probe_ms()}
        for name, rankers in (("bm25", speed.BM25), ("hybrid", speed.HYBRID)):
            copy = str(work / f"{name}.db")
            shutil.copy(db, copy)
            out[f"in-process {name}"] = speed.in_child(_run_inprocess, copy, queries, rankers)
            print(name, out[f"in-process {name}"], file=sys.stderr)
        dbs = {}
        for name in ("before", "current"):
            dbs[name] = str(work / f"http-{name}.db")
            shutil.copy(db, dbs[name])
        bt = str(base_tree)
        envs = {"before": {"PYTHONPATH": ":".join([bt, f"{bt}/plugins/sqlite", f"{bt}/plugins/postgres",
                                                   f"{bt}/plugins/embeddings", f"{bt}/plugins/extractors"])},
                "current": {}}
        out["http hybrid"] = asyncio.run(http(dbs, envs, queries, work))
        out["load_end"] = speed.loadavg()
        print(out)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)],
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def _run_inprocess(db: str, queries: list[str], rankers: dict[str, float]) -> dict:
    return asyncio.run(inprocess(db, queries, rankers))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    main()
