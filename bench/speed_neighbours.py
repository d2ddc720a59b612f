"""What search's neighbour step (search.apply_neighbours) costs at 100k memories, side by side.

The corpus, queries and pooled vectors are bench/speed.py's (100k synthetic memories, 200
queries, real MiniLM vectors of 4,096 corpus sentences handed out by crc32), imported with a
session id per 25 consecutive memories (a conversation's session), so every candidate has
neighbours to look up. In-process MemoryService.search (limit 10, product defaults), BM25 and
hybrid, the current code with and without the neighbour step, interleaved query by query so
the shared machine's drift hits both alike; plus the lookup alone
(`storage.session_neighbours` over each search's candidates).

    python bench/speed_neighbours.py [--size 100000] [--db-url postgresql://.../postgres]

With --db-url the same runs on PostgreSQL too (a database is created and dropped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import speed  # noqa: E402

SESSION_SIZE = 25


def write_sessions(path: Path, texts: list[str]) -> None:
    """speed.write_jsonl's lines (created_at over a year, in file order) with a session id
    per SESSION_SIZE consecutive memories."""
    start = datetime(2025, 11, 22, tzinfo=timezone.utc)
    span = 365 * 86400
    with path.open("w", encoding="utf-8") as fh:
        for i, t in enumerate(texts):
            when = start + timedelta(seconds=span * i // max(1, len(texts)))
            fh.write(json.dumps({"text": t, "created_at": when.isoformat(),
                                 "session_id": f"s{i // SESSION_SIZE}"}) + "\n")


async def inprocess(db: str, queries: list[str], rankers: dict[str, float]) -> dict:
    from recall_core.search import steps as search_mod
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    real = search_mod.neighbours_of

    async def none(*_args, **_kw):
        return {}

    rt = await build_runtime(load_config(None, db=db, rankers=rankers), start_worker=False)
    lat: dict[str, list[float]] = {"with": [], "without": []}
    lookup: list[float] = []
    try:
        await speed.warm_up(rt, queries)
        for _ in range(2):
            for q in queries:
                for variant in ("with", "without"):
                    search_mod.neighbours_of = real if variant == "with" else none
                    t0 = time.perf_counter()
                    res = await rt.service.search(speed.NS, q, limit=10)
                    lat[variant].append((time.perf_counter() - t0) * 1000)
                    assert not res["degraded"], res["degraded"]
        search_mod.neighbours_of = real
        for q in queries:  # the lookup alone, over the candidates a search fuses
            res = await rt.service.search(speed.NS, q, limit=10, explain=True)
            ids = list(res["explain"].fused)
            t0 = time.perf_counter()
            await rt.storage.session_neighbours(speed.NS, ids)
            lookup.append((time.perf_counter() - t0) * 1000)
        await rt.service.drain()
    finally:
        search_mod.neighbours_of = real
        await rt.close()
    out = {v: {"p50": p(s, 50), "p95": p(s, 95)} for v, s in lat.items()}
    out["lookup alone"] = {"p50": p(lookup, 50), "p95": p(lookup, 95)}
    return out


def p(samples: list[float], q: float) -> float:
    return round(speed.pct(samples, q / 100), 2)


def _run(db: str, queries: list[str], rankers: dict[str, float]) -> dict:
    return asyncio.run(inprocess(db, queries, rankers))


def measure(size: int, db_url: str | None, queries: list[str], runner: Any) -> dict:
    """`size` corpus memories in sessions (write_sessions), imported with pooled real vectors
    into SQLite (and a scratch Postgres database with `db_url`), then `runner(db, queries,
    rankers)` in a child process for BM25 and hybrid: {"<backend> <ranking>": its result}."""
    work = Path(tempfile.mkdtemp(prefix="speed-sessions-"))
    try:
        texts = speed.corpus(size)
        jsonl = work / "corpus.jsonl"
        write_sessions(jsonl, texts)
        pool_texts = texts[:4096]
        pool_file = str(work / "pool.npy")
        print("pool", speed.in_child(speed.c_pool, pool_texts, pool_file), file=sys.stderr)
        out: dict = {"size": size, "load": speed.loadavg(), "cpu_probe_ms": speed.cpu_probe_ms()}
        dbs = {"sqlite": str(work / "base.db")}
        pg_name = None
        if db_url:
            pg_name = asyncio.run(speed.pg_create(db_url))
            dbs["postgres"] = speed.pg_with_db(db_url, pg_name)
        try:
            for kind, db in dbs.items():
                print(kind, "import", speed.in_child(speed.c_import, db, str(jsonl), "pool",
                                                     (pool_texts, pool_file)), file=sys.stderr)
                for name, rankers in (("bm25", speed.BM25), ("hybrid", speed.HYBRID)):
                    out[f"{kind} {name}"] = speed.in_child(runner, db, queries, rankers)
                    print(kind, name, out[f"{kind} {name}"], file=sys.stderr)
        finally:
            if pg_name is not None:
                asyncio.run(speed.pg_drop(db_url, pg_name))
        out["load_end"] = speed.loadavg()
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--db-url", help="also on PostgreSQL: the server's maintenance database URL")
    args = ap.parse_args()
    queries = [q for _, q in speed.make_queries(200)]
    print(json.dumps(measure(args.size, args.db_url, queries, _run), indent=2))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    main()
