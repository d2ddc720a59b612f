"""What search's time-window step (search.window_relevance) costs, side by side.

The corpus, queries and pooled vectors are bench/speed.py's (synthetic memories, 200 queries,
real MiniLM vectors of 4,096 corpus sentences handed out by crc32), stored evenly over one year
with a session id per 25 consecutive memories (bench/speed_neighbours.py's file). Every query
names a time: half a month ("... in March 2026"), half a day ("... on 14 March, 2026"), both
inside the year. In-process MemoryService.search (limit 10, product defaults), BM25 and hybrid,
the current code with and without the step, interleaved query by query so the shared
machine's drift hits both alike.

The step ranks a window in process only when it holds at most WINDOW_POOL_MAX memories, so
the size decides what is measured: at 100k memories a year (~8,300 a month, ~6,000 in a day's
three-week window) every window is too full and the cost is the capped count that finds so;
at 5k (~420 a month plus its trailing two weeks ~620, a day's window ~300) the day windows are
ranked and the month windows are not. Each search starts with its query not embedded yet
(the embedder's query cache is emptied before it).

    python bench/speed_window.py [--size 100000] [--db-url postgresql://.../postgres]

With --db-url the same runs on PostgreSQL too (a database is created and dropped).
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import speed  # noqa: E402
import speed_neighbours  # noqa: E402

# The corpus year (speed_neighbours.write_sessions): 2025-11-22 .. 2026-11-22.
MONTHS = [(2025, 12)] + [(2026, m) for m in range(1, 11)]


def timed_queries(queries: list[str], seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i, q in enumerate(queries):
        year, month = rng.choice(MONTHS)
        name = calendar.month_name[month]
        out.append(f"{q} in {name} {year}" if i % 2 == 0
                   else f"{q} on {rng.randint(1, 28)} {name}, {year}")
    return out


async def inprocess(db: str, queries: list[str], rankers: dict[str, float]) -> dict:
    from recall_core.search import window as search_mod
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    real = search_mod.relevance

    async def none(*_args, **_kw):
        return {}, {}

    rt = await build_runtime(load_config(None, db=db, rankers=rankers), start_worker=False)
    cold = getattr(rt.embedder, "forget_queries", lambda: None)
    lat: dict[str, list[float]] = {"with": [], "without": []}
    ranked = 0
    try:
        await speed.warm_up(rt, queries)
        for _ in range(2):
            for q in queries:
                for variant in ("with", "without"):
                    search_mod.relevance = real if variant == "with" else none
                    cold()  # each search embeds its query, as a new query would
                    t0 = time.perf_counter()
                    res = await rt.service.search(speed.NS, q, limit=10)
                    lat[variant].append((time.perf_counter() - t0) * 1000)
                    assert not res["degraded"], res["degraded"]
        search_mod.relevance = real
        for q in queries:  # how many searches ranked their window (not too full)
            res = await rt.service.search(speed.NS, q, limit=10, explain=True)
            ranked += bool(res["explain"].window)
        await rt.service.drain()
    finally:
        search_mod.relevance = real
        await rt.close()
    p = speed_neighbours.p
    out: dict = {v: {"p50": p(s, 50), "p95": p(s, 95)} for v, s in lat.items()}
    out["windows ranked"] = f"{ranked}/{len(queries)}"
    return out


def _run(db: str, queries: list[str], rankers: dict[str, float]) -> dict:
    return asyncio.run(inprocess(db, queries, rankers))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--db-url", help="also on PostgreSQL: the server's maintenance database URL")
    args = ap.parse_args()
    queries = timed_queries([q for _, q in speed.make_queries(200)])
    print(json.dumps(speed_neighbours.measure(args.size, args.db_url, queries, _run), indent=2))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    main()
