"""Issue 27's figures: does Recall understand that a fact changed, without merging different facts?

    python bench/understanding.py                           # the default (rule-based) extractor
    python bench/understanding.py --half tune --kinds change separate
    python bench/understanding.py --extractor openai base_url=http://127.0.0.1:8080/v1 model=m
    python bench/understanding.py --extractor haiku         # needs ANTHROPIC_API_KEY
    python bench/understanding.py --llama                   # + SmolLM2 on a local llama.cpp server
    python bench/understanding.py --json out.json           # + every item's outcome and rows
    python bench/understanding.py --items fresh/writer_a.jsonl  # a fresh set, same format
    python bench/understanding.py --dense multilingual-e5-small-q4  # search in e5's space
    python bench/understanding_selfcheck.py                 # the harness can fail, and can pass

The set is `bench/understanding/` (README.md there: kinds, labels, the split rule; never tune
on the confirm half). Every item runs through the product's write path in a namespace of its
own: a runtime built as the default install builds it (SQLite in a temporary file, the
installed rankers at their default weights: bm25 and the embeddings plugin's dense ranker),
each text stored with `MemoryService.store` a day after the previous one, the queued job run
by the product's `Worker`, the rows read back from storage. Pass or fail is decided from the
rows' texts and whether they are current, not from attribute names (README.md: matching):

- change: superseded when every memory of the old text holding the old value (and of the
  middle text holding an intermediate one) is no longer current, at least one such memory
  was stored, and a current memory of a later text holds the new value;
- stale above current: `search_memories(question)` with default parameters ranks a result
  holding the old value (and not the new) above the first one holding the new, or returns
  the old and not the new;
- end: the ended value's memories are no longer current (and were stored); kept values stay;
- false supersession: a value that must stay current (separate items, kept values of end
  items) was held by a memory of its text that was ended, and by no current one;
- compound split: each labelled statement matched by a different current memory of the
  text, and no memory matching two statements;
- triple accuracy: labelled triples among the triples of the text's memories;
- no-fact texts (statements labelled `triple: null`): no memory with a triple.

Cost: the extractor's time per text and per labelled statement (p50 / p95 / mean), model
calls and tokens per text where the extractor counts them, failed jobs.
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
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from recall_core import Extractor

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "bench" / "understanding"
sys.path.insert(0, str(ROOT / "bench"))

from extraction_match import fold, matches, value_matches  # noqa: E402

KINDS = ("change", "end", "separate", "compound", "statement")
HALVES = ("tune", "confirm")
#: Held-out sets in the same format (`<name>.jsonl` here), run only when asked by name, never
#: part of "all": `dev3` (written independently of the tuned phrasings, after the first
#: round of tuning), split by the same rule (split.py): tune on `dev3_tune` only.
HELD_OUT = ("dev3_tune", "dev3_confirm")
#: How far apart the texts of one item are said (created_at), oldest first.
GAP = timedelta(days=1)


# -- the set ------------------------------------------------------------------------------------

def load_set(half: str = "all", kinds: tuple[str, ...] = KINDS,
             ids: set[str] | None = None, path: Path | None = None) -> list[dict]:
    """The items of a half (or both), or of the file `path` (a fresh set in the same format,
    named after the file)."""
    items = []
    files = ([(path.stem, path)] if path else
             [(h, SET / f"{h}.jsonl") for h in (HALVES if half == "all" else (half,))])
    for h, file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            if item["kind"] in kinds and (not ids or item["id"] in ids):
                items.append({**item, "half": h})
    return items


def texts_of(item: dict) -> list[str]:
    return item["texts"] if "texts" in item else [item["text"]]


def statements_in(item: dict) -> int:
    """Labelled statements per text, to spread a text's extraction time over them."""
    return len(item["statements"]) if item["kind"] == "compound" else 1


# -- judging rows -------------------------------------------------------------------------------

@dataclass
class Row:
    """One stored memory as the judges see it."""

    text: str
    active: bool
    entity: str | None = None
    attribute: str | None = None
    value: str | None = None


def holds(text: str, terms: list[str]) -> bool:
    return matches({"must": terms}, text)


def value_status(rows: list[Row], terms: list[str]) -> str:
    """`current` when a current row holds the value, `ended` when only ended rows do (a
    false supersession when the value must stay), `missing` when no row ever held it."""
    held = [r for r in rows if holds(r.text, terms)]
    if any(r.active for r in held):
        return "current"
    return "ended" if held else "missing"


def _replaced(rows: list[Row], terms: list[str], label: str) -> str | None:
    """Why a replaced value is not properly ended (None when it is)."""
    held = [r for r in rows if holds(r.text, terms)]
    if not held:
        return f"{label} value never stored"
    if any(r.active for r in held):
        return f"{label} value still current"
    return None


def judge_change(item: dict, by_text: list[list[Row]]) -> dict:
    why = [_replaced(by_text[0], item["old"], "old")]
    if "mid" in item:
        why.append(_replaced(by_text[1], item["mid"], "middle"))
    # Any later text: a last text that re-states a value already keyed from the middle one
    # refreshes that row instead of writing its own ("trying Vivaldi" -> "sticking with it").
    if not any(r.active and holds(r.text, item["new"]) for t in by_text[1:] for r in t):
        why.append("new value not current")
    why = [w for w in why if w]
    return {"pass": not why, "why": why}


def judge_ranking(item: dict, results: list[str]) -> dict:
    """Is a stale value ranked above the current one for the item's question?"""
    stale_terms = [item["old"]] + ([item["mid"]] if "mid" in item else [])
    new = next((i for i, t in enumerate(results) if holds(t, item["new"])), None)
    stale = next((i for i, t in enumerate(results)
                  if any(holds(t, s) for s in stale_terms) and not holds(t, item["new"])), None)
    above = stale is not None and (new is None or stale < new)
    return {"stale_above": above, "new_rank": new, "stale_rank": stale}


def judge_end(item: dict, by_text: list[list[Row]]) -> dict:
    ended = item["ended"]
    why = _replaced(by_text[ended["text"]], ended["must"], "ended")
    kept = [value_status(by_text[k["text"]], k["must"]) for k in item["kept"]]
    return {"pass": why is None and all(s == "current" for s in kept),
            "why": [why] if why else [], "kept": kept,
            "false_supersessions": kept.count("ended")}


def judge_separate(item: dict, by_text: list[list[Row]]) -> dict:
    values = [value_status(by_text[v["text"]], v["must"]) for v in item["values"]]
    return {"pass": all(s == "current" for s in values), "values": values,
            "false_supersessions": values.count("ended"), "missing": values.count("missing")}


def _alternatives(part: str) -> list[str]:
    return [fold(a) for a in part.split("|")]


def triple_found(triple: list[str], rows: list[Row]) -> bool:
    """Entity and attribute equal after folding (the attribute before its first ':'), the
    value by the matcher's folding and word containment; '|' lists accepted readings."""
    entities, attributes = _alternatives(triple[0]), _alternatives(triple[1])
    values = triple[2].split("|")
    return any(r.entity is not None and fold(r.entity) in entities
               and fold(r.attribute or "").split(":")[0] in attributes
               and any(value_matches(v, r.value) for v in values) for r in rows)


def judge_compound(item: dict, rows: list[Row]) -> dict:
    current = [r for r in rows if r.active]
    statements = item["statements"]
    merged = [r.text for r in current if sum(holds(r.text, s["must"]) for s in statements) > 1]
    taken: set[int] = set()
    matched: list[int | None] = []
    for s in statements:  # one-to-one; exact once no memory matches two statements
        hit = next((i for i, r in enumerate(current)
                    if i not in taken and holds(r.text, s["must"])), None)
        if hit is not None:
            taken.add(hit)
        matched.append(hit)
    triples = [triple_found(s["triple"], rows) if s["triple"] else None for s in statements]
    return {"pass": not merged and None not in matched, "merged": merged,
            "unmatched": [i for i, m in enumerate(matched) if m is None], "triples": triples}


def judge_statement(item: dict, rows: list[Row]) -> dict:
    if item["triple"] is None:
        facts = [r.text for r in rows if r.entity is not None]
        return {"pass": not facts, "no_fact": not facts, "facts": facts}
    ok = triple_found(item["triple"], rows)
    return {"pass": ok, "triple_ok": ok,
            "stored": any(holds(r.text, item["must"]) for r in rows)}


def judge(item: dict, by_text: list[list[Row]], results: list[str] | None) -> dict:
    kind = item["kind"]
    if kind == "change":
        return {**judge_change(item, by_text), **judge_ranking(item, results or [])}
    if kind == "end":
        return judge_end(item, by_text)
    if kind == "separate":
        return judge_separate(item, by_text)
    if kind == "compound":
        return judge_compound(item, by_text[0])
    return judge_statement(item, by_text[0])


# -- running items through the product ----------------------------------------------------------

class Timed(Extractor):
    """The extractor the worker calls, timing each `extract` and counting model usage
    (run_item takes the records of each text's jobs)."""

    def __init__(self, inner: Extractor):
        self.inner = inner
        self.calls: list[dict] = []
        self.name, self.model = inner.name, inner.model
        self.prompt_version = inner.prompt_version
        # Known facts are handed on to an extractor that reads them (and only to one).
        self.reads_known = inner.reads_known
        self.reads_statements = getattr(inner, "reads_statements", False)

    async def merge(self, memories: Any, topic: str = "") -> Any:
        return await self.inner.merge(memories, topic)

    def _usage(self) -> tuple[int, int, int]:
        u = getattr(self.inner, "usage", None)
        return (u.calls, u.input_tokens, u.output_tokens) if u else (0, 0, 0)

    async def extract(self, text: str, topic: str = "", **known: Any) -> list:
        before, t0 = self._usage(), time.perf_counter()
        try:
            return await self.inner.extract(text, topic, **known)
        finally:
            after = self._usage()
            self.calls.append({"ms": round((time.perf_counter() - t0) * 1000, 2),
                               "calls": after[0] - before[0], "tokens_in": after[1] - before[1],
                               "tokens_out": after[2] - before[2]})


async def runtime(db: str, name: str, settings: dict[str, Any], dense: str | None = None):
    """The default install's runtime, with the worker left to us (jobs run in store order);
    `dense` names another model for the dense ranker ("multilingual-e5-small-q4")."""
    from recall_core.server.runtime import build_runtime
    from recall_core.config import load_config

    plugins = {name: settings} if settings else {}
    if dense:
        plugins["dense"] = {"model": dense}
    config = load_config(None, db=db, extractor=name, plugins=plugins,
                         worker={"retry_backoff": 0})
    rt = await build_runtime(config, start_worker=False)
    if rt.embedder is not None and not await asyncio.to_thread(rt.embedder.wait_ready, 300):
        await rt.close()
        raise SystemExit(f"the dense model did not load: {rt.embedder.status()}")
    return rt


async def drain(rt, worker) -> None:
    """Run every queued job (a failed one is retried at once, up to max_attempts)."""
    while (op := await rt.storage.claim_job(rt.config.worker.lease_seconds,
                                            rt.config.worker.max_attempts)) is not None:
        await worker.run_one(op)


async def run_item(rt, worker, timed: Timed, item: dict, base: datetime, prefix: str) -> dict:
    ns = f"{prefix}{item['id']}"
    jobs, extract = [], []
    for i, text in enumerate(texts_of(item)):
        said = (base + i * GAP).isoformat()
        jobs.append((await rt.service.store(ns, text, created_at=said))["job_id"])
        first = len(timed.calls)
        await drain(rt, worker)
        extract.append(timed.calls[first:])  # one record per attempt
    rows: dict[str, list[Row]] = {j: [] for j in jobs}
    async for m in rt.storage.iter_memories(ns, active_only=False):
        rows.setdefault(m.source_job_id, []).append(
            Row(m.text, m.active, m.entity, m.attribute, m.value))
    by_text = [rows[j] for j in jobs]
    results = None
    if item["kind"] == "change":
        found = await rt.service.search(ns, item["question"])
        results = [r["text"] for r in found["results"]]
    outcome = judge(item, by_text, results)
    return {"id": item["id"], "half": item["half"], "kind": item["kind"], **outcome,
            "failed_jobs": await rt.storage.count_jobs(ns, "failed"), "extract": extract,
            "rows": [[asdict(r) for r in t] for t in by_text],
            **({"search": results[:5]} if results is not None else {})}


async def run_all(rt, extractor: Any, items: list[dict], label: str,
                  prefix: str = "u27-") -> list[dict]:
    """Each item in a namespace of its own (`prefix` + id: one database can hold several
    runs of the same items)."""
    from recall_core.jobs.worker import Worker

    timed = Timed(extractor)
    worker = Worker(rt.storage, timed, rt.embedder, rt.config)
    base = (datetime.now(UTC) - timedelta(days=30)).replace(microsecond=0)
    out = []
    for n, item in enumerate(items, 1):
        out.append(await run_item(rt, worker, timed, item, base, prefix))
        if n % 100 == 0:
            print(f"[{label}] {n}/{len(items)} items", file=sys.stderr)
    return out


# -- figures ------------------------------------------------------------------------------------

def ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def summarise(outcomes: list[dict], items: dict[str, dict]) -> dict:
    of = {k: [o for o in outcomes if o["kind"] == k] for k in KINDS}
    ch, en, sep, cmp, stm = (of[k] for k in KINDS)
    facts = [o for o in stm if items[o["id"]]["triple"] is not None]
    nofacts = [o for o in stm if items[o["id"]]["triple"] is None]
    cmp_triples = [t for o in cmp for t in o["triples"] if t is not None]
    triples_ok = sum(o["triple_ok"] for o in facts) + sum(cmp_triples)
    false = sum(o["false_supersessions"] for o in sep + en)
    by_cue = {c: ratio(sum(o["pass"] for o in ch if items[o["id"]]["cue"] == c),
                       sum(items[o["id"]]["cue"] == c for o in ch)) for c in ("none", "explicit")}
    by_why: dict[str, int] = {}
    for o in sep:
        why = items[o["id"]]["why"]
        by_why[why] = by_why.get(why, 0) + o["false_supersessions"]
    return {
        "changes_superseded": ratio(sum(o["pass"] for o in ch), len(ch)),
        "changes": len(ch), "superseded_by_cue": by_cue,
        "stale_above_current": sum(o["stale_above"] for o in ch),
        "stale_first": sum(o["stale_rank"] == 0 for o in ch),
        "ends": ratio(sum(o["pass"] for o in en), len(en)), "end_items": len(en),
        "false_supersessions": false, "false_by_why": by_why,
        "false_in_end_items": sum(o["false_supersessions"] for o in en),
        "separate_values_missing": sum(o["missing"] for o in sep), "separate_items": len(sep),
        "compound_split": ratio(sum(o["pass"] for o in cmp), len(cmp)), "compounds": len(cmp),
        "triple_accuracy": ratio(triples_ok, len(facts) + len(cmp_triples)),
        "triples": len(facts) + len(cmp_triples),
        "statements_stored": ratio(sum(o["stored"] for o in facts), len(facts)),
        "no_fact_clean": ratio(sum(o["no_fact"] for o in nofacts), len(nofacts)),
        "failed_jobs": sum(o["failed_jobs"] for o in outcomes),
    }


def cost(outcomes: list[dict], items: dict[str, dict]) -> dict:
    """Per text: all its extraction attempts together (a retried job costs each attempt)."""
    texts = [(o, attempts) for o in outcomes for attempts in o["extract"]]
    per_text = [sum(a["ms"] for a in attempts) for _, attempts in texts]
    per_statement = [ms / statements_in(items[o["id"]]) for (o, _), ms in zip(texts, per_text)]

    def spread(values: list[float]) -> dict:
        if not values:
            return {}
        v = sorted(values)
        return {"p50": round(statistics.median(v), 2),
                "p95": round(v[min(len(v) - 1, int(0.95 * len(v)))], 2),
                "mean": round(statistics.mean(v), 2)}

    def per(field: str) -> float:
        return round(sum(a[field] for _, attempts in texts for a in attempts)
                     / max(1, len(texts)), 2)

    return {"ms_per_text": spread(per_text), "ms_per_statement": spread(per_statement),
            "texts": len(texts), "attempts": sum(len(a) for _, a in texts),
            "calls_per_text": per("calls"), "tokens_in_per_text": per("tokens_in"),
            "tokens_out_per_text": per("tokens_out")}


def report(label: str, outcomes: list[dict], items: dict[str, dict], seconds: float) -> dict:
    order = (*HALVES, *HELD_OUT)
    halves = sorted({o["half"] for o in outcomes},
                    key=lambda h: (order.index(h) if h in order else len(order), h))
    groups = {h: [o for o in outcomes if o["half"] == h] for h in halves}
    if len(halves) > 1:
        groups["all"] = outcomes
    return {"extractor": label, "seconds": round(seconds, 1),
            "summary": {h: summarise(g, items) for h, g in groups.items()},
            "cost": {h: cost(g, items) for h, g in groups.items()},
            "items": outcomes}


def _f(value: Any) -> str:
    return "-" if value is None else f"{value}"


def table(results: list[dict]) -> str:
    lines = [("| extractor | half | changes superseded | stale above current (first) | ends | false "
              "supersessions | compound split | triple acc. | no-fact clean | ms/text p50 / p95 "
              "| ms/statement p50 | failed jobs |"), "|---" * 12 + "|"]
    for r in results:
        for half, s in r["summary"].items():
            c = r["cost"][half]
            t, st = c["ms_per_text"], c["ms_per_statement"]
            lines.append(
                f"| {r['extractor']} | {half} | {_f(s['changes_superseded'])} ({s['changes']}) "
                f"| {s['stale_above_current']} ({s['stale_first']}) "
                f"| {_f(s['ends'])} ({s['end_items']}) "
                f"| {s['false_supersessions']} | {_f(s['compound_split'])} ({s['compounds']}) "
                f"| {_f(s['triple_accuracy'])} ({s['triples']}) | {_f(s['no_fact_clean'])} "
                f"| {_f(t.get('p50'))} / {_f(t.get('p95'))} | {_f(st.get('p50'))} "
                f"| {s['failed_jobs']} |")
    lines += ["", ("| extractor | half | superseded, no cue / explicit cue | false supersessions "
                   "by why (separate) + in end items | separate values missing | statements "
                   "stored | calls, tokens in/out per text |"), "|---" * 7 + "|"]
    for r in results:
        for half, s in r["summary"].items():
            c = r["cost"][half]
            why = ", ".join(f"{k} {v}" for k, v in sorted(s["false_by_why"].items())) or "-"
            lines.append(
                f"| {r['extractor']} | {half} | {_f(s['superseded_by_cue']['none'])} / "
                f"{_f(s['superseded_by_cue']['explicit'])} | {why}; end {s['false_in_end_items']} "
                f"| {s['separate_values_missing']} | {_f(s['statements_stored'])} "
                f"| {c['calls_per_text']}, {c['tokens_in_per_text']:g} / "
                f"{c['tokens_out_per_text']:g} |")
    return "\n".join(lines)


# -- main ---------------------------------------------------------------------------------------

async def bench(label: str, name: str, settings: dict[str, Any], items: list[dict],
                dense: str | None = None) -> dict:
    print(f"[{label}] {len(items)} items ...", file=sys.stderr)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rt = await runtime(str(Path(tmp) / "understanding.db"), name, settings, dense)
        print(f"[{label}] extractor {rt.extractor.name}, rankers "
              + ", ".join(f"{s.ranker.name}:{s.weight:g}" for s in rt.rankers), file=sys.stderr)
        try:
            outcomes = await run_all(rt, rt.extractor, items, label)
        finally:
            await rt.close()
    return report(label, outcomes, {i["id"]: i for i in items}, time.perf_counter() - t0)


def runs_from(args: argparse.Namespace) -> list[tuple[str, str, dict]]:
    runs = []
    for spec in args.extractor or [["stub"]]:
        name, pairs = spec[0], spec[1:]
        settings = dict(kv.split("=", 1) for kv in pairs)
        runs.append((" ".join([name, settings.get("model", "")]).strip(), name, settings))
    return runs


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extractor", nargs="+", action="append", metavar="NAME [KEY=VALUE]",
                    help="stub (default), haiku, or openai with its [plugins.openai] settings; "
                         "repeat to bench several")
    ap.add_argument("--llama", action="store_true",
                    help="also start llama-cpp-python's server with SmolLM2-135M on loopback "
                         "(one thread) and bench the openai extractor against it")
    ap.add_argument("--half", choices=(*HALVES, *HELD_OUT, "all"), default="all")
    ap.add_argument("--items", type=Path, metavar="FILE",
                    help="run this file's items instead of a half (same format: a fresh set "
                         "written by someone who saw neither the set nor the code)")
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    ap.add_argument("--ids", nargs="+", help="only these items (e.g. to compare one by one)")
    ap.add_argument("--json", help="write figures and every item's outcome and rows here")
    ap.add_argument("--lowercase", action="store_true",
                    help="every text in lower case, as people often type in chat (names "
                         "included): how much the reading leans on capitals")
    ap.add_argument("--dense", metavar="MODEL",
                    help="the dense ranker's model ([plugins.dense] model), e.g. "
                         "multilingual-e5-small-q4: search's figures in another vector space")
    args = ap.parse_args(argv)
    items = load_set(args.half, tuple(args.kinds), set(args.ids) if args.ids else None,
                     args.items)
    if args.lowercase:
        items = [{**item, "texts": [t.lower() for t in texts_of(item)]} if "texts" in item
                 else {**item, "text": item["text"].lower()} for item in items]
    if not items:
        raise SystemExit("no items selected")
    runs = runs_from(args)
    server = None
    if args.llama:
        from recall_testkit.llama_server import LlamaServer, unavailable

        reason = unavailable()
        if reason:
            print(f"--llama skipped: {reason}", file=sys.stderr)
        else:
            server = LlamaServer().start()
            runs.append(("openai: SmolLM2-135M Q4_1, llama.cpp", "openai", server.settings()))
    results = []
    try:
        for label, name, settings in runs:
            results.append(await bench(label, name, settings, items, args.dense))
    finally:
        if server is not None:
            server.stop()
    print(table(results))
    for r in results:
        print(f"[{r['extractor']}] {len(r['items'])} items in {r['seconds']} s", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    asyncio.run(main())
