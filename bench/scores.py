"""What search scores mean: can one `score_threshold` drop nonsense and off-topic queries
while keeping the answers to real ones?

On the LoCoMo dev conversations (verbatim import, as bench/locomo.py), three query sets go
through MemoryService.search (product defaults except recency_weight=0, limit=10, MMR off):

* the LoCoMo questions of each half (tune / confirm): recall@10 of their evidence turns
  when results below the threshold are dropped;
* **gibberish**: 40 seeded random letter strings ("qwzx plmok vbnrt");
* **off-topic**: 40 real questions about things these conversations never mention.

For each threshold the report gives the recall kept per half and the share of gibberish and
off-topic searches that still return anything. A threshold is chosen on the tune half and
confirmed on the other.

    python bench/scores.py [--cache DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import DATA, HALVES, evidence_map, half_of, load_verbatim, questions  # noqa: E402
from locomo_backends import SqliteCopies  # noqa: E402

THRESHOLDS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4]

OFF_TOPIC = [
    "What is the boiling point of mercury?", "How do I configure an nginx reverse proxy?",
    "Which Kubernetes version added native sidecar containers?", "What is the capital of Australia?",
    "How many moons does Neptune have?", "Explain the CAP theorem for distributed databases",
    "What is the airspeed velocity of an unladen swallow?", "Who designed the Rust borrow checker?",
    "What is the income tax rate in Norway?", "How do I compile a Linux kernel module?",
    "What port does PostgreSQL listen on by default?", "Which enzyme breaks down lactose?",
    "What is the half-life of carbon-14?", "How do I rotate an AWS access key?",
    "What is the GDP of Brazil?", "Which chess opening starts with e4 c5?",
    "How do you calculate compound interest?", "What is the melting point of tungsten?",
    "Which Python version removed distutils?", "What is the speed of sound in water?",
    "How do I set up a VPN on a router?", "Who won the 1998 football World Cup?",
    "What is the chemical formula of sulfuric acid?", "How many bones are in the human hand?",
    "What does the HTTP status code 418 mean?", "How do I defragment a hard drive?",
    "What is the orbital period of Mars?", "Which language is spoken in Suriname?",
    "What is a monad in functional programming?", "How do I change a car's brake pads?",
    "What is the population of Reykjavik?", "How does a transistor amplify current?",
    "What is the difference between TCP and UDP?", "Which element has atomic number 74?",
    "How long does it take to boil an egg at altitude?", "What is the Riemann hypothesis?",
    "How do I write a SQL window function?", "Which planet has the strongest winds?",
    "What is the exchange rate of the Swiss franc?", "How do vaccines trigger immunity?",
]


def gibberish(n: int, seed: int = 14) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [" ".join("".join(rng.choice(letters) for _ in range(rng.randint(3, 8)))
                     for _ in range(rng.randint(2, 5))) for _ in range(n)]


async def collect(db: str, data: list[dict], idmap: dict) -> dict:
    """Per query: the (score, dia_id) list of its top 10."""
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    rt = await build_runtime(load_config(None, db=db), start_worker=False)
    out: dict = {"questions": [], "gibberish": [], "off-topic": []}
    try:
        if rt.embedder is not None:
            await asyncio.to_thread(rt.embedder.wait_ready, 300)

        async def search(ns: str, query: str) -> list[tuple[float, str]]:
            res = await rt.service.search(ns, query, limit=10, recency_weight=0.0, mmr_lambda=1.0)
            return [(r["score"], idmap[ns].get(r["id"], "?")) for r in res["results"]]

        for sample in data:
            ns = sample["sample_id"]
            for q in questions(sample):
                out["questions"].append({"half": half_of(ns), "evidence": q["evidence"],
                                         "hits": await search(ns, q["question"])})
            for kind, queries in (("gibberish", gibberish(40)), ("off-topic", OFF_TOPIC)):
                for query in queries:
                    out[kind].append({"half": half_of(ns), "hits": await search(ns, query)})
    finally:
        await rt.close()
    return out


def report(runs: dict) -> dict:
    rows = {}
    for t in THRESHOLDS:
        row: dict = {}
        for half in HALVES:
            qs = [q for q in runs["questions"] if q["half"] == half]
            rec = [len(set(q["evidence"]) & {d for s, d in q["hits"] if s >= t}) / len(set(q["evidence"]))
                   for q in qs]
            row[f"recall@10 {half}"] = round(statistics.mean(rec), 3)
            for kind in ("gibberish", "off-topic"):
                runs_k = [r for r in runs[kind] if r["half"] == half]
                row[f"{kind} answered {half}"] = round(
                    sum(any(s >= t for s, _ in r["hits"]) for r in runs_k) / len(runs_k), 3)
        rows[str(t)] = row
    tops = {}
    for kind in ("questions", "gibberish", "off-topic"):
        top = sorted(r["hits"][0][0] for r in runs[kind] if r["hits"])
        if top:
            tops[kind] = {p: round(top[min(len(top) - 1, int(p / 100 * len(top)))], 3)
                          for p in (10, 50, 90, 99)}
    return {"by_threshold": rows, "top1_score_percentiles": tops}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", help="keep (or reuse) the loaded SQLite base in this directory")
    ap.add_argument("--json", help="write the report to this file")
    args = ap.parse_args()
    data = json.loads(DATA.read_text())
    backend = SqliteCopies(args.cache)
    try:
        await backend.load("verbatim", lambda db: load_verbatim(db, data))
        idmap = await evidence_map(await backend.copy("verbatim", "map"), data, "verbatim")
        runs = await collect(await backend.copy("verbatim", "scores"), data, idmap)
    finally:
        await backend.close()
    result = report(runs)
    print(json.dumps(result, indent=2))
    head = ["threshold"] + list(next(iter(result["by_threshold"].values())))
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head), file=sys.stderr)
    for t, row in result["by_threshold"].items():
        print(f"| {t} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |", file=sys.stderr)
    print("top-1 score percentiles (p10/p50/p90/p99):", result["top1_score_percentiles"], file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    asyncio.run(main())
