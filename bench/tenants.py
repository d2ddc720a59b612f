"""Full text at scale: many small tenants in one file, and one namespace of a million.

Two questions (issue 31), asked of a storage built straight through its API (as
bench/cold_start.py does: minutes, not hours; no embeddings, BM25 only):

- **tenants**: is a small tenant's full-text cost its own, whatever the file holds? The same
  per-tenant data (--per-tenant memories each, bench/speed.py's corpus) in a small file
  (--small-tenants tenants) and in a large one (--tenants tenants): `search_fulltext` of
  random tenants, p50/p95, side by side;
- **one**: BM25 search of one namespace of --size memories, in-process (`search_fulltext`,
  and `MemoryService.search` with the BM25 ranker only) and over MCP/HTTP against a real
  `recall serve` (search_memories, p50/p95); `--compare` adds the plain query against the
  level search (SQLite: same queries back to back, answers checked equal).

    python bench/tenants.py build --db /tmp/t.db --tenants 10000 --per-tenant 100
    python bench/tenants.py build --db /tmp/one.db --size 1000000
    python bench/tenants.py tenants --db /tmp/small.db --db /tmp/t.db [--json out.json]
    python bench/tenants.py one --db /tmp/one.db [--http] [--compare [--writes]] [--json out.json]

`--db` is a SQLite file or a postgresql:// URL (an existing, empty database for `build`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "testkit"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import (audit_durations, corpus, loadavg, machine, make_queries, pct,  # noqa: E402
                   proc_cpu_s)

ONE_NS = "one"
BM25 = {"bm25": 1.0}
BLOCK = 5000


def tenant(i: int) -> str:
    return f"tenant-{i:05d}"


async def runtime(db: str) -> Any:
    from recall_core.config import load_config
    from recall_core.server.runtime import build_runtime

    return await build_runtime(load_config(None, db=db, rankers=BM25), start_worker=False)


async def build(db: str, tenants: int, per_tenant: int, size: int) -> dict[str, Any]:
    """`tenants` x `per_tenant` memories (tenant i holds corpus rows i*per_tenant...), or
    `size` memories in one namespace; rows of different tenants interleave in insert order,
    as they would in a shared server."""
    from recall_core.models import Memory

    rt = await runtime(db)
    t0 = time.perf_counter()
    try:
        if size:
            texts = corpus(size)
            for start in range(0, size, BLOCK):
                await rt.storage.insert_memories([
                    Memory(namespace=ONE_NS, text=t, type="fact", importance=0.5)
                    for t in texts[start:start + BLOCK]])
        else:
            texts = corpus(tenants * per_tenant)
            # Round-robin: the k-th memory of every tenant, then the (k+1)-th...
            order = [(k, i) for k in range(per_tenant) for i in range(tenants)]
            for start in range(0, len(order), BLOCK):
                await rt.storage.insert_memories([
                    Memory(namespace=tenant(i), text=texts[i * per_tenant + k], type="fact",
                           importance=0.5)
                    for k, i in order[start:start + BLOCK]])
    finally:
        await rt.close()
    return {"built_s": round(time.perf_counter() - t0, 1)}


def summary(samples: list[float]) -> dict[str, float]:
    return {"p50": round(pct(samples, 0.5), 3), "p95": round(pct(samples, 0.95), 3),
            "mean": round(statistics.fmean(samples), 3), "n": len(samples)}


async def tenant_costs(db: str, tenants: int, samples: int, seed: int = 5) -> dict[str, Any]:
    """search_fulltext of `samples` (random tenant, query) pairs, ms."""
    from recall_core.kit.text import query_terms

    queries = [query_terms(q) for _, q in make_queries(200)]
    rng = random.Random(seed)
    pairs = [(tenant(rng.randrange(tenants)), rng.choice(queries)) for _ in range(samples)]
    rt = await runtime(db)
    try:
        st = rt.storage
        for ns, terms in pairs[:20]:
            await st.search_fulltext(ns, terms, 50)
        lat, hits = [], 0
        for ns, terms in pairs:
            t0 = time.perf_counter()
            found = await st.search_fulltext(ns, terms, 50)
            lat.append((time.perf_counter() - t0) * 1000)
            hits += len(found)
    finally:
        await rt.close()
    return {"fulltext_ms": summary(lat), "hits_per_query": round(hits / len(pairs), 1)}


async def pg_plain_vs_levels(storage: Any, queries: list[str], passes: int) -> dict[str, Any]:
    """Postgres: the plain query (every matching row scored), the level search without
    reading tied rows newest first, and with it (recall_postgres/ties.py), query by query
    back to back in rotating order, at limits 50 and 10; answers compared (ids, order,
    scores) with the plain query's."""
    from recall_core.kit.text import query_terms
    from recall_postgres import fulltext

    ft, out = storage.fulltext, {}
    modes = ("plain", "levels", "newest first")
    for limit in (50, 10):
        lat: dict[str, list[float]] = {m: [] for m in modes}
        differ = dict.fromkeys(modes[1:], 0)
        for p in range(passes):
            for i, q in enumerate(queries):
                answers = {}
                for m in modes[i % 3:] + modes[:i % 3]:
                    fulltext.NEWEST_FIRST = m == "newest first"
                    t0 = time.perf_counter()
                    found = await ft.search(storage.pool, ONE_NS, query_terms(q), limit,
                                            plain=m == "plain")
                    lat[m].append((time.perf_counter() - t0) * 1000)
                    answers[m] = [(h.id, h.score) for h in found]
                for m in modes[1:]:
                    differ[m] += answers[m] != answers["plain"]
        fulltext.NEWEST_FIRST = True
        out[f"limit {limit}"] = {**{f"{m}_ms": summary(v) for m, v in lat.items()},
                                 "answers_differ": differ}
    out["plans"] = dict(ft.plans)
    return out


async def plain_vs_levels(storage: Any, queries: list[str], passes: int,
                          writes: bool = False) -> dict[str, Any]:
    """SQLite only: `search_fulltext` with the level search off (the plain query, bm25()
    over every matching row) and on, query by query back to back, and whether the answers
    are equal (ids, order and scores), at limits 50 and 10; with `writes`, also each search
    right after storing one memory (this adds rows to the file: use a copy)."""
    from recall_core.kit.text import query_terms
    from recall_sqlite import fulltext

    ft = storage._fulltext
    out: dict[str, Any] = {}
    # At any size: below LEVELS_MIN_ROWS the plain query would answer both sides.
    threshold, fulltext.LEVELS_MIN_ROWS = fulltext.LEVELS_MIN_ROWS, 0
    try:
        return await _plain_vs_levels(storage, ft, queries, passes, writes, out)
    finally:
        fulltext.LEVELS_MIN_ROWS = threshold


async def _plain_vs_levels(storage: Any, ft: Any, queries: list[str], passes: int,
                           writes: bool, out: dict[str, Any]) -> dict[str, Any]:
    from recall_core.kit.text import query_terms

    for limit in (50, 10):
        lat: dict[bool, list[float]] = {False: [], True: []}
        differ = 0
        for p in range(passes):
            for q in queries:
                answers = {}
                for levels in ((False, True) if p % 2 == 0 else (True, False)):
                    ft.levels = levels
                    t0 = time.perf_counter()
                    answers[levels] = await storage.search_fulltext(ONE_NS, query_terms(q), limit)
                    lat[levels].append((time.perf_counter() - t0) * 1000)
                differ += [(h.id, h.score) for h in answers[False]] != [
                    (h.id, h.score) for h in answers[True]]
        ft.levels = True
        out[f"limit {limit}"] = {"plain_ms": summary(lat[False]), "levels_ms": summary(lat[True]),
                                 "answers_differ": differ}
    if writes:
        # Each search right after a write (one memory stored): every cached term count is
        # stale, so the level search walks its words' doclists again, as bm25() always does.
        from recall_core.models import Memory

        lat = {False: [], True: []}
        extra = corpus(len(queries) * 2 + 7)[-len(queries) * 2:]
        for i, q in enumerate(queries):
            for j, levels in enumerate((False, True) if i % 2 == 0 else (True, False)):
                await storage.insert_memories([Memory(namespace=ONE_NS, text=extra[2 * i + j],
                                                      type="fact", importance=0.5)])
                ft.levels = levels
                t0 = time.perf_counter()
                await storage.search_fulltext(ONE_NS, query_terms(q), 50)
                lat[levels].append((time.perf_counter() - t0) * 1000)
        ft.levels = True
        out["after a write, limit 50"] = {"plain_ms": summary(lat[False]),
                                          "levels_ms": summary(lat[True])}
    return out


async def one_costs(db: str, passes: int, http: bool, compare: bool = False,
                    writes: bool = False) -> dict[str, Any]:
    from recall_core.kit.text import query_terms

    queries = [q for _, q in make_queries(200)]
    out: dict[str, Any] = {}
    rt = await runtime(db)
    try:
        for q in queries[:10]:
            await rt.service.search(ONE_NS, q, limit=10)
        ft, svc = [], []
        for _ in range(passes):
            for q in queries:
                t0 = time.perf_counter()
                await rt.storage.search_fulltext(ONE_NS, query_terms(q), 50)
                ft.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                await rt.service.search(ONE_NS, q, limit=10)
                svc.append((time.perf_counter() - t0) * 1000)
        out["fulltext_ms"] = summary(ft)
        out["service_ms"] = summary(svc)
        ft_engine = getattr(rt.storage, "fulltext", None) or getattr(rt.storage, "_fulltext", None)
        plans = getattr(ft_engine, "plans", None)  # Postgres: storage.fulltext; SQLite: _fulltext
        if plans:
            out["plans"] = dict(plans)
        if compare and db.startswith("postgres"):
            out["compare"] = await pg_plain_vs_levels(rt.storage, queries, passes)
        elif compare:
            out["compare"] = await plain_vs_levels(rt.storage, queries, passes, writes)
    finally:
        await rt.close()
    if http:
        out["http_ms"] = await http_costs(db, queries, passes)
    return out


async def http_costs(db: str, queries: list[str], passes: int) -> dict[str, Any]:
    import httpx
    from recall_testkit.serverproc import Agent, ServerProcess

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cfg = work / "bm25.toml"
        cfg.write_text("[rankers]\nbm25 = 1.0\n")
        srv = ServerProcess(db, work, args=("--config", str(cfg))).start(timeout=300)
        try:
            while httpx.get(srv.base + "/health", timeout=5).json()["degraded"]:
                await asyncio.sleep(0.2)
            async with Agent(srv.url, srv.token(ONE_NS)) as agent:
                for q in queries[:10]:
                    await agent.ok("search_memories", query=q, limit=10)
                lat, cpu0, me0 = [], proc_cpu_s(srv.proc.pid), time.process_time()
                for _ in range(passes):
                    for q in queries:
                        t0 = time.perf_counter()
                        await agent.ok("search_memories", query=q, limit=10)
                        lat.append((time.perf_counter() - t0) * 1000)
                # CPU per call of the server process and of this client (both Python: on 2
                # cores they compete with each other and with Postgres).
                cpu = {"server": (proc_cpu_s(srv.proc.pid) - cpu0) * 1000 / len(lat),
                       "client": (time.process_time() - me0) * 1000 / len(lat)}
        finally:
            srv.stop()
        # Inside the server's audit middleware: without transport, MCP and token check.
        tool = audit_durations(srv.log_path).get("search_memories")
    return {**summary(lat), "cpu_ms_per_call": {k: round(v, 2) for k, v in cpu.items()},
            "server_tool_ms": tool}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("build", "tenants", "one"))
    ap.add_argument("--db", action="append", required=True)
    ap.add_argument("--tenants", type=int, default=0)
    ap.add_argument("--per-tenant", type=int, default=100)
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--http", action="store_true")
    ap.add_argument("--compare", action="store_true",
                    help="one: also the plain query vs the level search, in-process (Postgres: "
                         "also without and with the newest-first read of ties)")
    ap.add_argument("--writes", action="store_true",
                    help="with --compare: also each search right after a write (adds rows: "
                         "use a copy of the file)")
    ap.add_argument("--json")
    args = ap.parse_args()
    out: dict[str, Any] = {"what": args.what, "machine": machine(), "load_before": loadavg()}
    for db in args.db:
        if args.what == "build":
            res = await build(db, args.tenants, args.per_tenant, args.size)
        elif args.what == "tenants":
            res = await tenant_costs(db, await count_tenants(db), args.samples)
        else:
            res = await one_costs(db, args.passes, args.http, args.compare, args.writes)
        res["load"] = loadavg()
        out[db] = res
        print(db, json.dumps(res), flush=True)
    out["load_after"] = loadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


async def count_tenants(db: str) -> int:
    rt = await runtime(db)
    try:
        n = 0
        while await rt.storage.namespace_version(tenant(n)) and n < 10**6:
            n += 1
        return n
    finally:
        await rt.close()


if __name__ == "__main__":
    asyncio.run(main())
