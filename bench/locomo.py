"""Retrieval quality on LoCoMo (dev half): recall@5, recall@10 and MRR of evidence turns.

Each conversation goes into its own namespace, one memory per dialog turn ("Speaker: text",
created_at = the session's date), through the product's own verbatim import. Questions of
category 5 (adversarial) and questions without evidence are skipped. Searches use
recency_weight=0 and go through MemoryService (in-process) and, with --http, through a real
`recall serve` over MCP.

    python bench/locomo.py                 # bm25, dense, hybrid in-process
    python bench/locomo.py --http          # + hybrid over MCP/HTTP
    python bench/locomo.py --db-url postgresql://postgres@127.0.0.1:5432/locomo   # on Postgres

With --db-url the conversations are loaded into that Postgres database, which the script
creates (and drops at the end, unless --keep: then the next run with --keep reuses it, as
--cache does for SQLite), and each config searches its own copy, `CREATE DATABASE
<db>_<config> TEMPLATE <db>`, dropped at the end. Databases it did not create are never
touched: the run stops instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def session_date(raw: str) -> datetime:
    return datetime.strptime(raw, "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turns(sample: dict) -> list[dict]:
    conv = sample["conversation"]
    out = []
    n = 1
    while f"session_{n}" in conv:
        when = session_date(conv[f"session_{n}_date_time"])
        for t in conv[f"session_{n}"]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares {t['blip_caption']}]"
            out.append({"dia_id": t["dia_id"], "text": text, "created_at": when,
                        "session_id": f"{sample['sample_id']}-s{n}"})
        n += 1
    return out


def questions(sample: dict) -> list[dict]:
    return [q for q in sample["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]


def metrics(ranked: list[str], evidence: list[str]) -> tuple[float, float, float]:
    ev = set(evidence)
    r5 = len(ev & set(ranked[:5])) / len(ev)
    r10 = len(ev & set(ranked[:10])) / len(ev)
    rr = next((1.0 / i for i, d in enumerate(ranked, 1) if d in ev), 0.0)
    return r5, r10, rr


def summarise(rows: list[tuple[int, float, float, float]]) -> dict:
    def agg(sel):
        return {"n": len(sel), "recall@5": round(statistics.mean(r[1] for r in sel), 3),
                "recall@10": round(statistics.mean(r[2] for r in sel), 3),
                "mrr": round(statistics.mean(r[3] for r in sel), 3)}
    out = {"overall": agg(rows)}
    for cat, name in CATEGORIES.items():
        sel = [r for r in rows if r[0] == cat]
        if sel:
            out[name] = agg(sel)
    return out


async def load(db: str, data: list[dict], embed: bool) -> dict[str, dict[str, str]]:
    """Import every conversation; returns namespace -> memory id -> dia_id."""
    from recall_core.app import build_runtime
    from recall_core.config import load_config
    from recall_core.transfer import ImportLine, import_verbatim

    config = load_config(None, db=db, rankers={"bm25": 1.0, "dense": 1.0} if embed else {"bm25": 1.0})
    rt = await build_runtime(config, start_worker=False)
    try:
        if embed:
            await asyncio.to_thread(rt.embedder.wait_ready, 300)
        idmap: dict[str, dict[str, str]] = {}
        for sample in data:
            ns = sample["sample_id"]
            rows = [(i, ImportLine(id=f"{ns}|{t['dia_id']}", text=t["text"], created_at=t["created_at"],
                                   session_id=t["session_id"]))
                    for i, t in enumerate(turns(sample), 1)]
            await import_verbatim(rt.storage, ns, rows, rt.embedder if embed else None, keep_ids=True)
            idmap[ns] = {f"{ns}|{t['dia_id']}": t["dia_id"] for t in turns(sample)}
        return idmap
    finally:
        await rt.close()


async def run_inprocess(db: str, data: list[dict], rankers: dict[str, float], mmr: float,
                        limit: int = 10) -> tuple[dict, list[float]]:
    from recall_core.app import build_runtime
    from recall_core.config import load_config

    config = load_config(None, db=db, rankers=rankers)
    rt = await build_runtime(config, start_worker=False)
    rows, lat = [], []
    try:
        if rt.embedder is not None:
            await asyncio.to_thread(rt.embedder.wait_ready, 300)
        for sample in data:
            ns = sample["sample_id"]
            for q in questions(sample):
                t0 = time.perf_counter()
                res = await rt.service.search(ns, q["question"], limit=limit, recency_weight=0.0,
                                              mmr_lambda=mmr)
                lat.append((time.perf_counter() - t0) * 1000)
                ranked = [r["id"].split("|", 1)[1] for r in res["results"]]
                rows.append((q["category"], *metrics(ranked, q["evidence"])))
        await rt.service.drain()
    finally:
        await rt.close()
    return summarise(rows), lat


async def run_http(db: str, data: list[dict], rankers: dict[str, float], mmr: float) -> tuple[dict, list[float]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from serverproc import Agent, ServerProcess

    work = Path(tempfile.mkdtemp(prefix="locomo-http-"))
    cfg = work / "recall.toml"
    cfg.write_text("[rankers]\n" + "".join(f"{k} = {v}\n" for k, v in rankers.items()))
    srv = ServerProcess(db, work, env={"RECALL_DISABLE_PLUGINS": ""}, args=("--config", str(cfg)))
    srv.start()
    rows, lat = [], []
    try:
        import httpx

        for _ in range(600):  # wait for the dense model: a cold model never blocks a search
            if not httpx.get(srv.base + "/health").json()["degraded"]:
                break
            await asyncio.sleep(0.5)
        for sample in data:
            ns = sample["sample_id"]
            async with Agent(srv.url, srv.token(ns)) as agent:
                for q in questions(sample):
                    t0 = time.perf_counter()
                    res = await agent.ok("search_memories", query=q["question"], limit=10,
                                         recency_weight=0.0, mmr_lambda=mmr)
                    lat.append((time.perf_counter() - t0) * 1000)
                    ranked = [r["id"].split("|", 1)[1] for r in res["results"]]
                    rows.append((q["category"], *metrics(ranked, q["evidence"])))
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    return summarise(rows), lat


class SqliteCopies:
    """The loaded database as a file; each config searches a copy of it."""

    label = "sqlite"

    def __init__(self, cache: str | None):
        self.tmp = Path(tempfile.mkdtemp(prefix="locomo-"))
        self.base_db = str(self.tmp / "base.db")
        self.cache = Path(cache) if cache else None

    async def load(self, data: list[dict]) -> None:
        if self.cache and self.cache.exists():
            shutil.copy(self.cache, self.base_db)
            return
        await load(self.base_db, data, embed=True)
        if self.cache:
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(self.base_db, self.cache)

    async def copy(self, name: str) -> str:
        db = str(self.tmp / f"{name}.db")
        shutil.copy(self.base_db, db)
        return db

    async def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


class PostgresCopies:
    """The loaded database on a Postgres server; each config searches a copy made with
    CREATE DATABASE ... TEMPLATE (a database has no file to copy).

    Only databases this script created (marked with a comment) are ever dropped: an existing
    database without the mark stops the run instead."""

    MARK = "scratch database of recall bench/locomo.py"

    def __init__(self, url: str, keep: bool):
        import urllib.parse

        self.url = url
        self.keep = keep
        self.parts = urllib.parse.urlsplit(url)
        self.name = urllib.parse.unquote(self.parts.path.lstrip("/"))
        if not self.name:
            raise SystemExit("--db-url needs a database name: postgresql://host:port/<db>")
        self.copies: list[str] = []
        self.label = "postgres"

    def url_for(self, database: str) -> str:
        import urllib.parse

        return urllib.parse.urlunsplit(self.parts._replace(path="/" + urllib.parse.quote(database)))

    async def _admin(self, *statements: str) -> None:
        import asyncpg

        con = await asyncpg.connect(self.url_for("postgres"))
        try:
            for sql in statements:
                await con.execute(sql)
        finally:
            await con.close()

    async def _state(self, db: str) -> str:
        """'absent', 'ours' (created by this script) or 'foreign'."""
        import asyncpg

        con = await asyncpg.connect(self.url_for("postgres"))
        try:
            row = await con.fetchrow(
                "SELECT shobj_description(oid, 'pg_database') AS mark FROM pg_database "
                "WHERE datname = $1", db)
        finally:
            await con.close()
        if row is None:
            return "absent"
        return "ours" if row["mark"] == self.MARK else "foreign"

    async def _create(self, db: str, template: str | None = None) -> None:
        state = await self._state(db)
        if state == "foreign":
            raise SystemExit(f"database {db!r} exists and was not created by this script; "
                             f"name a database that does not exist yet (it will be created)")
        await self._admin(
            *([f'DROP DATABASE "{db}" WITH (FORCE)'] if state == "ours" else []),
            f'CREATE DATABASE "{db}"' + (f' TEMPLATE "{template}"' if template else ""),
            f"COMMENT ON DATABASE \"{db}\" IS '{self.MARK}'")

    async def load(self, data: list[dict]) -> None:
        import asyncpg

        reuse = self.keep and await self._state(self.name) == "ours"
        if not reuse:
            await self._create(self.name)
        # Verbatim import with kept ids resumes (rows already there are skipped), so reusing
        # a loaded database costs a few seconds. Reload (drop --keep once) after changing how
        # memories are imported or indexed.
        await load(self.url, data, embed=True)
        con = await asyncpg.connect(self.url)
        try:
            # Planner statistics, as autovacuum would gather them on a live server (it may be
            # off or not have run yet); TEMPLATE copies carry them along.
            await con.execute("ANALYZE")
            version = await con.fetchval(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            server = await con.fetchval("SHOW server_version")
            vec_type = await con.fetchval(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'")
        finally:
            await con.close()
        self.label = (f"postgres {server.split()[0]}, "
                      + (f"pgvector {version}" if vec_type == "vector" else "real[] fallback")
                      + (", reused" if reuse else ""))

    async def copy(self, name: str) -> str:
        db = f"{self.name}_{name}"
        await self._create(db, template=self.name)
        self.copies.append(db)
        return self.url_for(db)

    async def close(self) -> None:
        drop = list(dict.fromkeys(self.copies)) + ([] if self.keep else [self.name])
        await self._admin(*(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)' for db in drop))


CONFIGS = {
    "bm25": {"bm25": 1.0},
    "dense": {"dense": 1.0},
    "hybrid": None,  # the product default: every installed ranker at its default weight
}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", action="store_true", help="also measure hybrid over MCP/HTTP")
    ap.add_argument("--mmr", type=float, default=1.0, help="mmr_lambda for the searches")
    ap.add_argument("--only", nargs="*", help="configs to run (bm25 dense hybrid)")
    ap.add_argument("--json", help="write results to this file")
    ap.add_argument("--weights", help="hybrid ranker weights, e.g. bm25=1,dense=0.7")
    ap.add_argument("--cache", help="reuse (or create) the loaded SQLite database at this path")
    ap.add_argument("--db-url", help="run on Postgres instead of SQLite: postgresql://.../<db>, "
                                     "a database this script creates (see above)")
    ap.add_argument("--keep", action="store_true",
                    help="with --db-url: keep the loaded database and reuse it next time")
    args = ap.parse_args()
    data = json.loads(DATA.read_text())
    backend = (PostgresCopies(args.db_url, args.keep) if args.db_url
               else SqliteCopies(args.cache))
    t0 = time.perf_counter()
    await backend.load(data)
    print(f"loaded {sum(len(turns(s)) for s in data)} turns in {time.perf_counter() - t0:.1f}s "
          f"({backend.label}); {sum(len(questions(s)) for s in data)} questions", file=sys.stderr)
    try:
        results = await run_configs(backend, data, args)
    finally:
        await backend.close()
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


async def run_configs(backend: SqliteCopies | PostgresCopies, data: list[dict],
                      args: argparse.Namespace) -> dict:
    from recall_core.app import Registries
    from recall_core.plugins import get_plugin_manager

    reg = Registries.from_pm(get_plugin_manager())
    default = {n: float(e.extra.get("default_weight", 1.0)) for n, e in reg.rankers.entries.items()}
    if args.weights:
        default = {k: float(v) for k, v in (p.split("=") for p in args.weights.split(","))}
    results = {}
    for name, rankers in CONFIGS.items():
        if args.only and name not in args.only:
            continue
        db = await backend.copy(name)  # access counts from one run must not leak into the next
        summary, lat = await run_inprocess(db, data, rankers or default, args.mmr)
        summary["p50_ms"] = round(statistics.median(lat), 2)
        results[f"{name} (in-process)"] = summary
        print(name, json.dumps(summary["overall"]), f"p50={summary['p50_ms']}ms", file=sys.stderr)
    if args.http:
        db = await backend.copy("http")
        summary, lat = await run_http(db, data, default, args.mmr)
        summary["p50_ms"] = round(statistics.median(lat), 2)
        results["hybrid (MCP over HTTP)"] = summary
        print("hybrid-http", json.dumps(summary["overall"]), file=sys.stderr)
    results["backend"] = backend.label
    return results


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # As `recall` sets it (recall_core/cli.py), so in-process figures match the server's.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    asyncio.run(main())
