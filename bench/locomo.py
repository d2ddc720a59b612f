"""Retrieval quality on LoCoMo dev: recall@5, recall@10 and MRR of evidence turns, per half of
the dev file and per question category, through two write paths.

The dev file's five conversations are split by a fixed rule into a **tune** half (the first
three: conv-26, conv-30, conv-41; 383 questions) and a **confirm** half (the last two: conv-42,
conv-43; 377 questions). A change is chosen on one half and kept only if it also helps on the
other (bench/RESULTS.md logs every change, kept or dropped). Category 5 (adversarial) and
questions without evidence are skipped.

Each conversation goes into its own namespace, through one of two write paths:

* **verbatim**: one memory per dialog turn ("Speaker: text [shares caption]", created_at = the
  session's date, session_id = the session), through the product's verbatim import.
* **extract**: every turn queued through `store_memory`'s code (with its session id and, unless
  --undated, its session's date as `created_at`), then extracted by the default offline
  extractor (stub) and embedded by the worker, one job at a time in order. A memory counts as
  the turn whose job wrote it; the top-10 *memories* are scored, so a turn split into three
  memories takes three of the ten places, as it would for an agent.

Searches use recency_weight=--recency (0 by default; the tool's default is 0.3), limit=10
and mmr_lambda=--mmr (1.0 = off by default, as the held-out measurement is made), in-process
through MemoryService and, with --http, through a real `recall serve` over MCP. Each half's recall@10 comes with a 95% bootstrap interval over
its questions: differences well inside it are not evidence of a better ranking.

    python bench/locomo.py                       # both paths, bm25 / dense / hybrid, in-process
    python bench/locomo.py --http                # + hybrid over MCP/HTTP
    python bench/locomo.py --paths verbatim --only hybrid
    python bench/locomo.py --paths verbatim --only hybrid --no-access   # repeatable figures
    python bench/locomo.py ... --no-access --json b.json --against a.json  # b minus a, paired
    python bench/locomo.py --undated --recency 0.3   # turns stored at run time, as store_memory
                                                     # over MCP stores them; the tool's default
    python bench/locomo.py --cache /tmp/locomo-cache   # reuse loaded bases (delete after changing
                                                       # import, extraction or embeddings)
    python bench/locomo.py --db-url postgresql://postgres@127.0.0.1:5432/locomo   # on Postgres
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_backends import PostgresCopies, SqliteCopies  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
HALVES = {"tune": ("conv-26", "conv-30", "conv-41"), "confirm": ("conv-42", "conv-43")}
CONFIGS = {
    "bm25": {"bm25": 1.0},
    "dense": {"dense": 1.0},
    "hybrid": None,  # the product default: every installed ranker at its default weight
}


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


def half_of(sample_id: str) -> str:
    return next((h for h, ids in HALVES.items() if sample_id in ids), "other")


def metrics(ranked: list[str], q: dict, kept: set[str],
            texts: dict[str, list[str]] | None = None,
            ranked_texts: list[str] | None = None) -> tuple[float, float, float,
                                                            float | None, float | None]:
    """recall@5, recall@10, reciprocal rank, and for questions with `stale` turns (an older
    value of a fact, bench/synthetic.py): whether one ranks above the evidence in the top 10
    (1.0) or not (0.0), and whether an older value is still current at all (1.0: some turn in
    `stale` still has an active memory; `kept` = the turns that do), None for other questions.
    Stale above can only happen where the old value is still current: the second figure says
    how often the write path left that to ranking (always, verbatim; where the extractor gave
    no fact key to supersede, extraction path).

    With `texts` (a turn's current memory texts) and `ranked_texts`, for questions that name
    their old values (`stale_values`, bench/synthetic.py), a memory of a stale turn counts as
    stale only when it says an old value: the turn may also state something still true ("I
    work at Acme as an engineer": the role stays current when the employer changes)."""
    olds = [v.lower() for v in q.get("stale_values", [])] if texts is not None else []
    ev = set(q["evidence"])
    r5 = len(ev & set(ranked[:5])) / len(ev)
    r10 = len(ev & set(ranked[:10])) / len(ev)
    rr = next((1.0 / i for i, d in enumerate(ranked, 1) if d in ev), 0.0)
    stale = old_current = None
    if q.get("stale"):
        said = ranked_texts if olds and ranked_texts else [""] * len(ranked)
        first = next((d for d, t in zip(ranked[:10], said) if d in ev or (
            d in q["stale"] and (not olds or any(v in t.lower() for v in olds)))), None)
        stale = float(first is not None and first not in ev)
        old_current = float(any(d in kept for d in q["stale"]))
        if olds:
            old_current = float(any(v in t.lower() for d in q["stale"]
                                    for t in texts.get(d, []) for v in olds))
    return r5, r10, rr, stale, old_current


def interval(values: list[float], draws: int = 2000, seed: int = 0) -> list[float]:
    """95% bootstrap interval of a mean over questions (resampled with replacement, seeded):
    how far a figure could move on other questions of the same kind. Questions of one
    conversation are not independent, so the real spread between conversations is wider."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(draws))
    return [round(means[int(0.025 * draws)], 3), round(means[int(0.975 * draws) - 1], 3)]


def summarise(rows: list[tuple]) -> dict:
    """rows: (half, category, r@5, r@10, rr, stale, old current) -> {half: {overall,
    <category>...}}; each half's overall recall@10 with its 95% bootstrap interval."""
    def agg(sel, ci=False):
        out = {"n": len(sel), "recall@5": round(statistics.mean(r[2] for r in sel), 3),
               "recall@10": round(statistics.mean(r[3] for r in sel), 3),
               "mrr": round(statistics.mean(r[4] for r in sel), 3)}
        if ci:
            out["recall@10_ci95"] = interval([r[3] for r in sel])
        stale = [r[5] for r in sel if r[5] is not None]
        if stale:
            out["stale_above"] = round(statistics.mean(stale), 3)
            out["old_current"] = round(statistics.mean(r[6] for r in sel if r[6] is not None), 3)
        return out

    out: dict = {"questions": {"half": [r[0] for r in rows],
                               "recall@10": [round(r[3], 4) for r in rows]}}
    for half in (*HALVES, "all"):
        part = [r for r in rows if half == "all" or r[0] == half]
        if not part:
            continue
        entry = {"overall": agg(part, ci=True)}
        for cat, name in CATEGORIES.items():
            sel = [r for r in part if r[1] == cat]
            if sel:
                entry[name] = agg(sel)
        out[half] = entry
    return out


# -- loading ---------------------------------------------------------------------------------
def import_lines(sample: dict, dated: bool = True):
    """`dated`: each turn carries its session's date; otherwise it is stored at the time of
    the run, as `store_memory` over MCP stores what an agent sends (it takes no time)."""
    from recall_core.memory.transfer import ImportLine

    ns = sample["sample_id"]
    return [(i, ImportLine(id=f"{ns}|{t['dia_id']}", text=t["text"],
                           created_at=t["created_at"] if dated else None,
                           session_id=t["session_id"]))
            for i, t in enumerate(turns(sample), 1)]


#: `[plugins.*]` tables for every runtime the bench builds (--dense sets the dense model).
PLUGINS: dict[str, dict] = {}


async def _runtime(db: str, embed: bool):
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    config = load_config(None, db=db, plugins=PLUGINS,
                         rankers={"bm25": 1.0, "dense": 1.0} if embed else {"bm25": 1.0})
    rt = await build_runtime(config, start_worker=False)
    if embed and not await asyncio.to_thread(rt.embedder.wait_ready, 300):
        await rt.close()
        raise SystemExit(f"the dense model did not load: {rt.embedder.status()}")
    return rt


async def load_verbatim(db: str, data: list[dict], dated: bool = True) -> None:
    """One memory per turn, with kept ids "<namespace>|<dia_id>"."""
    from recall_core.memory.transfer import import_verbatim

    rt = await _runtime(db, embed=True)
    try:
        for sample in data:
            await import_verbatim(rt.storage, sample["sample_id"], import_lines(sample, dated),
                                  rt.embedder, keep_ids=True)
    finally:
        await rt.close()


async def load_extract(db: str, data: list[dict], allow_failed: bool = False,
                       dated: bool = True) -> None:
    """Queue every turn through `store_memory`'s code (MemoryService.store, with its session
    id, and its session's date as `created_at` unless not `dated`; the key is the line's
    content key, as `recall import --extract` makes it), then run the jobs one at a time in
    queue order (session context follows the conversation) with the configured extractor
    (`extractor` in the config / RECALL_EXTRACTOR). A job that ends failed stops the run unless
    `allow_failed` (an LLM extractor's failures are part of its figure: the turn has no
    memory, so its questions lose recall)."""
    from recall_core.memory.transfer import content_key
    from recall_core.jobs.worker import Worker

    rt = await _runtime(db, embed=True)
    try:
        for sample in data:
            for _, line in import_lines(sample, dated):
                await rt.service.store(
                    sample["sample_id"], line.text, session_id=line.session_id,
                    idempotency_key=content_key(line),
                    created_at=line.created_at.isoformat() if line.created_at else None)
        worker = Worker(rt.storage, rt.extractor, rt.embedder, rt.config)
        while (op := await rt.storage.claim_job(600)) is not None:
            await worker.run_one(op)
        failed = await rt.storage.count_jobs(None, "failed")
        left = await rt.storage.count_jobs(None, "pending")
        print(f"extract: extractor {rt.extractor.name!r}, {failed} jobs failed, {left} left "
              f"pending", file=sys.stderr)
        if left:
            raise SystemExit(f"{left} extraction jobs are still pending (a retry scheduled "
                             "later? set RECALL_WORKER__RETRY_BACKOFF=0 for the benchmark)")
        if failed and not allow_failed:
            raise SystemExit(f"{failed} extraction jobs failed: "
                             f"{await rt.storage.recent_failures(None, 3)} (--allow-failed "
                             "measures anyway)")
    finally:
        await rt.close()


async def evidence_map(db: str, data: list[dict], path: str, dated: bool = True
                       ) -> dict[str, dict[str, str]]:
    """namespace -> memory id -> dia_id of the turn it came from."""
    if path == "verbatim":
        return {s["sample_id"]: {f"{s['sample_id']}|{t['dia_id']}": t["dia_id"] for t in turns(s)}
                for s in data}
    from recall_core.memory.transfer import content_key

    rt = await _runtime(db, embed=False)
    out: dict[str, dict[str, str]] = {}
    try:
        for sample in data:
            ns = sample["sample_id"]
            by_key = {content_key(line): line.id.split("|", 1)[1]
                      for _, line in import_lines(sample, dated)}
            by_job: dict[str, str] = {}
            out[ns] = {}
            async for m in rt.storage.iter_memories(ns):
                job = m.source_job_id
                if job not in by_job:
                    op = await rt.storage.get_operation(ns, job) if job else None
                    by_job[job] = by_key.get(op.idempotency_key, "?") if op else "?"
                out[ns][m.id] = by_job[job]
    finally:
        await rt.close()
    return out


# -- searching -------------------------------------------------------------------------------
async def run_inprocess(db: str, data: list[dict], idmap: dict, rankers: dict[str, float],
                        mmr: float, limit: int = 10, no_access: bool = False,
                        recency: float = 0.0) -> tuple[dict, list[float]]:
    """`no_access`: search as the inspector does (explain=True), which records no access, so
    access strength cannot differ between runs: for comparing variants side by side (the
    latencies then include building the trace)."""
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    config = load_config(None, db=db, rankers=rankers, plugins=PLUGINS)
    rt = await build_runtime(config, start_worker=False)
    rows, lat = [], []
    try:
        if rt.embedder is not None:
            await asyncio.to_thread(rt.embedder.wait_ready, 300)
        for sample in data:
            ns = sample["sample_id"]
            kept = set(idmap[ns].values())
            texts: dict[str, list[str]] = {}
            if any(q.get("stale_values") for q in sample["qa"]):
                async for m in rt.storage.iter_memories(ns):
                    texts.setdefault(idmap[ns].get(m.id, "?"), []).append(m.text)
            for q in questions(sample):
                t0 = time.perf_counter()
                res = await rt.service.search(ns, q["question"], limit=limit,
                                              recency_weight=recency, mmr_lambda=mmr,
                                              explain=no_access)
                lat.append((time.perf_counter() - t0) * 1000)
                ranked = [idmap[ns].get(r["id"], "?") for r in res["results"]]
                rows.append((half_of(ns), q["category"], *metrics(
                    ranked, q, kept, texts, [r["text"] for r in res["results"]])))
        await rt.service.drain()
    finally:
        await rt.close()
    return summarise(rows), lat


async def run_http(db: str, data: list[dict], idmap: dict, rankers: dict[str, float],
                   mmr: float, recency: float = 0.0) -> tuple[dict, list[float]]:
    from recall_testkit.serverproc import Agent, ServerProcess

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
            kept = set(idmap[ns].values())
            async with Agent(srv.url, srv.token(ns)) as agent:
                for q in questions(sample):
                    t0 = time.perf_counter()
                    res = await agent.ok("search_memories", query=q["question"], limit=10,
                                         recency_weight=recency, mmr_lambda=mmr)
                    lat.append((time.perf_counter() - t0) * 1000)
                    ranked = [idmap[ns].get(r["id"], "?") for r in res["results"]]
                    rows.append((half_of(ns), q["category"], *metrics(ranked, q, kept)))
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    return summarise(rows), lat


def table(results: dict) -> str:
    """A markdown table: one row per path/ranking/half, recall@10 per category."""
    cats = list(CATEGORIES.values())
    head = ("| path | ranking | half | n | recall@5 | recall@10 | 95% interval | MRR | "
            + " | ".join(cats) + " | stale above | old current | p50 ms |\n|"
            + "---|" * (11 + len(cats)))
    lines = [head]
    for key, summary in results.items():
        if not isinstance(summary, dict) or "all" not in summary:
            continue
        path, ranking = key.split(" ", 1)
        for half in (*HALVES, "all"):
            s = summary.get(half)
            if s is None:
                continue
            o = s["overall"]
            by_cat = " | ".join(f"{s[c]['recall@10']:.3f}" if c in s else "-" for c in cats)
            p50 = f"{summary['p50_ms']:.1f}" if half == "all" else ""
            stale = f"{o['stale_above']:.3f}" if "stale_above" in o else "-"
            old = f"{o['old_current']:.3f}" if "old_current" in o else "-"
            lo, hi = o.get("recall@10_ci95", (None, None))
            ci = f"{lo:.3f}-{hi:.3f}" if lo is not None else "-"
            lines.append(f"| {path} | {ranking} | {half} | {o['n']} | {o['recall@5']:.3f} | "
                         f"**{o['recall@10']:.3f}** | {ci} | {o['mrr']:.3f} | {by_cat} | {stale} | "
                         f"{old} | {p50} |")
    return "\n".join(lines)


def paired(new: dict, old: dict) -> dict[str, dict]:
    """Per half: the mean change of recall@10 question by question (new minus old) with its
    95% bootstrap interval, and how many questions got better or worse. Two variants measured
    on the same questions differ far less than their own intervals suggest; this is the
    interval of the difference itself."""
    a, b = old["questions"], new["questions"]
    if a["half"] != b["half"]:
        raise SystemExit("--against: the two runs did not ask the same questions")
    out = {}
    for half in (*HALVES, "all"):
        d = [y - x for h, x, y in zip(a["half"], a["recall@10"], b["recall@10"])
             if half == "all" or h == half]
        if d:
            out[half] = {"n": len(d), "change": round(sum(d) / len(d), 4),
                         "ci95": interval(d), "better": sum(x > 0 for x in d),
                         "worse": sum(x < 0 for x in d)}
    return out


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA), help="conversations in LoCoMo's JSON shape")
    ap.add_argument("--paths", nargs="*", default=["verbatim", "extract"],
                    help="write paths to measure (verbatim extract)")
    ap.add_argument("--only", nargs="*", help="rankings to run (bm25 dense hybrid)")
    ap.add_argument("--http", action="store_true", help="also measure hybrid over MCP/HTTP")
    ap.add_argument("--mmr", type=float, default=1.0, help="mmr_lambda for the searches")
    ap.add_argument("--json", help="write results to this file")
    ap.add_argument("--dense", metavar="MODEL",
                    help="the dense ranker's model ([plugins.dense] model), e.g. "
                         "multilingual-e5-small-q4 (keep its --cache apart from MiniLM's)")
    ap.add_argument("--weights", help="hybrid ranker weights, e.g. bm25=1,dense=0.7")
    ap.add_argument("--cache", help="keep (or reuse) the loaded SQLite bases in this directory")
    ap.add_argument("--db-url", help="run on Postgres instead of SQLite: postgresql://.../<db>; "
                                     "this script creates <db>_<path> and copies of it")
    ap.add_argument("--keep", action="store_true",
                    help="with --db-url: keep the loaded databases and reuse them next time")
    ap.add_argument("--convs", nargs="*",
                    help="only these conversations (sample ids), or a half's name: tune, confirm")
    ap.add_argument("--no-access", action="store_true",
                    help="in-process searches record no access (explain=True), so repeated "
                         "runs give the same figures: compare variants this way")
    ap.add_argument("--against", help="a previous --json file of the same questions: print "
                                      "each half's paired change of recall@10 against it")
    ap.add_argument("--undated", action="store_true",
                    help="store every turn at the time of the run, as store_memory over MCP "
                         "does (it takes no time), instead of at its session's date")
    ap.add_argument("--recency", type=float, default=0.0,
                    help="recency_weight of the searches (the tool's default is 0.3)")
    ap.add_argument("--allow-failed", action="store_true",
                    help="extract path: measure even when some extraction jobs failed (LLM "
                         "extractors); the count is reported")
    args = ap.parse_args(argv)
    if args.dense:
        PLUGINS["dense"] = {"model": args.dense}
    data = json.loads(Path(args.data).read_text())
    if args.convs:
        wanted = {c for name in args.convs for c in HALVES.get(name, (name,))}
        unknown = wanted - {s["sample_id"] for s in data}
        if unknown:
            raise SystemExit(f"--convs: no conversation {sorted(unknown)} in {args.data}")
        data = [s for s in data if s["sample_id"] in wanted]
    backend = PostgresCopies(args.db_url, args.keep) if args.db_url else SqliteCopies(args.cache)
    dated = not args.undated
    loaders = {"verbatim": lambda db, d: load_verbatim(db, d, dated),
               "extract": lambda db, d: load_extract(db, d, args.allow_failed, dated)}
    results: dict = {}
    try:
        for path in args.paths:
            t0 = time.perf_counter()
            await backend.load(base_name(path, dated), lambda db, f=loaders[path]: f(db, data))
            print(f"{path}: loaded {sum(len(turns(s)) for s in data)} turns in "
                  f"{time.perf_counter() - t0:.1f}s", file=sys.stderr)
            results.update(await run_configs(backend, data, path, args, dated))
    finally:
        await backend.close()
    results["backend"] = backend.describe()
    results["mmr_lambda"] = args.mmr
    results["recency_weight"] = args.recency
    results["dated"] = dated
    # The per-question lists (for --against) are 760 numbers a run: the --json file has them,
    # the printed figures leave them out.
    print(json.dumps({k: {f: v for f, v in s.items() if f != "questions"}
                      if isinstance(s, dict) else s for k, s in results.items()}, indent=2))
    print("\n" + table(results), file=sys.stderr)
    if args.against:
        before = json.loads(Path(args.against).read_text())
        for key, summary in results.items():
            if isinstance(summary, dict) and "questions" in summary and key in before:
                for half, c in paired(summary, before[key]).items():
                    lo, hi = c["ci95"]
                    print(f"{key} {half}: recall@10 {c['change']:+.3f} against {args.against} "
                          f"(95% interval {lo:+.3f}..{hi:+.3f}; {c['better']} questions better, "
                          f"{c['worse']} worse)", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


def base_name(path: str, dated: bool) -> str:
    """A loaded base per write path and dating (--cache keeps both apart)."""
    return path + ("" if dated else "-undated")


async def run_configs(backend, data: list[dict], path: str, args: argparse.Namespace,
                      dated: bool) -> dict:
    from recall_core.server.runtime import Registries
    from recall_core.plugins import get_plugin_manager

    reg = Registries.from_pm(get_plugin_manager())
    default = {n: e.options["default_weight"] for n, e in reg.rankers.entries.items()}
    if args.weights:
        default = {k: float(v) for k, v in (p.split("=") for p in args.weights.split(","))}
    base = base_name(path, dated)
    idmap = await evidence_map(await backend.copy(base, "map"), data, path, dated)
    if path == "extract":
        count = sum(len(m) for m in idmap.values())
        print(f"extract: {count} memories from {sum(len(turns(s)) for s in data)} turns",
              file=sys.stderr)
    results = {}
    for name, rankers in CONFIGS.items():
        if args.only and name not in args.only:
            continue
        db = await backend.copy(base, name)
        summary, lat = await run_inprocess(db, data, idmap, rankers or default, args.mmr,
                                           no_access=args.no_access, recency=args.recency)
        summary["p50_ms"] = round(statistics.median(lat), 2)
        results[f"{path} {name}"] = summary
        print(path, name, json.dumps(summary["all"]["overall"]),
              {h: summary[h]["overall"]["recall@10"] for h in HALVES if h in summary},
              f"p50={summary['p50_ms']}ms", file=sys.stderr)
    if args.http:
        db = await backend.copy(base, "http")
        summary, lat = await run_http(db, data, idmap, default, args.mmr, args.recency)
        summary["p50_ms"] = round(statistics.median(lat), 2)
        results[f"{path} hybrid-over-HTTP"] = summary
        print(path, "hybrid-http", json.dumps(summary["all"]["overall"]), file=sys.stderr)
    return results


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # As `recall` sets it (recall_core/cli.py), so in-process figures match the server's.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    asyncio.run(main())
