"""A harness that cannot fail is a defect: run a few tune items of every kind through
bench/understanding.py's real path (runtime, store, worker, rows, search) with three
extractors whose outcomes are known, and check that the harness reports them.

- `Oracle`, built from the item's labels: the memories a perfect extractor would write
  (one per value, the fact key that makes the product supersede). Everything must pass.
- `Verbatim`: each text as one memory without a triple. Nothing is superseded, so every
  change and end must fail, every compound with two statements or more fails (one memory
  holds them all), every labelled triple is missed; separate items pass.
- `Merger`: each text as one memory, all under one fact key. Every separate item must
  report a false supersession.

    python bench/understanding.py --selfcheck
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from understanding import KINDS, load_set, run_all, runtime, texts_of  # noqa: E402

PER_KIND = 4


def _words(terms: list[str]) -> str:
    """A memory text holding the terms: the first alternative of each."""
    return " ".join(t.split("|")[0] for t in terms)


def _first(triple: list[str]) -> list[str]:
    return [part.split("|")[0] for part in triple]


def oracle_memories(item: dict) -> dict[str, list[tuple[str, list[str] | None]]]:
    """text -> [(memory text, triple or None)] as a perfect extractor would write them."""
    texts = texts_of(item)
    out: dict[str, list] = {t: [] for t in texts}
    kind = item["kind"]
    if kind == "change":
        entity, attribute = item["key"]
        out[texts[0]].append((_words(item["old"]), [entity, attribute, _words(item["old"])]))
        if "mid" in item:
            out[texts[1]].append((_words(item["mid"]), [entity, attribute, _words(item["mid"])]))
        out[texts[-1]].append((_words(item["new"]), [entity, attribute, _words(item["new"])]))
    elif kind == "end":
        entity, attribute = item["key"]

        def key(v: dict) -> list[str]:  # many-valued: one key per value
            return [entity, f"{attribute}:{_words(v['must'])}", _words(v["must"])]
        for v in [item["ended"], *item["kept"]]:
            out[texts[v["text"]]].append((_words(v["must"]), key(v)))
        gone = key(item["ended"])
        out[texts[-1]].append((f"no longer {_words(item['ended']['must'])}",
                               [gone[0], gone[1], "no longer"]))
    elif kind == "separate":
        for n, v in enumerate(item["values"]):
            out[texts[v["text"]]].append((_words(v["must"]), [f"thing {n}", "x", "y"]))
    elif kind == "compound":
        for s in item["statements"]:
            out[texts[0]].append((_words(s["must"]), _first(s["triple"]) if s["triple"] else None))
    elif item["triple"] is not None:
        out[texts[0]].append((_words(item["must"]), _first(item["triple"])))
    return out


class Oracle:
    name = "oracle"

    def __init__(self, items: list[dict]):
        # Items run one after another, so a text's memories are those of the item that says it.
        self.queue: list[tuple[str, list]] = [pair for i in items
                                              for pair in _ordered(i, oracle_memories(i))]

    async def extract(self, text: str, topic: str = "") -> list:
        from recall_core.models import ExtractedMemory

        said, memories = self.queue.pop(0)
        assert said == text, (said, text)
        return [ExtractedMemory(text=t, entity=k[0], attribute=k[1], value=k[2]) if k
                else ExtractedMemory(text=t) for t, k in memories]


def _ordered(item: dict, by_text: dict[str, list]) -> list[tuple[str, list]]:
    return [(t, by_text[t]) for t in texts_of(item)]


class Verbatim:
    name = "verbatim"

    async def extract(self, text: str, topic: str = "") -> list:
        from recall_core.models import ExtractedMemory

        return [ExtractedMemory(text=text)]


class Merger:
    name = "merger"

    async def extract(self, text: str, topic: str = "") -> list:
        from recall_core.models import ExtractedMemory

        return [ExtractedMemory(text=text, entity="user", attribute="everything", value=text)]


def sample() -> list[dict]:
    items = load_set("tune")
    return [i for k in KINDS for i in [x for x in items if x["kind"] == k][:PER_KIND]]


def expected_pass(name: str, item: dict) -> bool | None:
    """Whether the item must pass with this extractor (None: not asserted)."""
    if name == "oracle":
        return True
    if name == "verbatim":  # nothing superseded, nothing split, no triple
        return item["kind"] == "separate" or (item["kind"] == "statement"
                                              and item["triple"] is None)
    return False if item["kind"] == "separate" else None  # merger: separate items only


def problems(name: str, outcomes: list[dict], items: dict[str, dict]) -> list[str]:
    """What the harness failed to report for this extractor (empty: it reported right)."""
    bad = []
    for o in outcomes:
        expected = expected_pass(name, items[o["id"]])
        if expected is not None and o["pass"] != expected:
            bad.append(f"{name}: {o['id']} pass={o['pass']}, expected {expected}: {o}")
        if name == "merger" and o["kind"] == "separate" and not o["false_supersessions"]:
            bad.append(f"merger: {o['id']} shows no false supersession: {o}")
        if name == "oracle" and o.get("stale_above"):
            bad.append(f"oracle: {o['id']} stale value ranked above current: {o}")
    return bad


async def selfcheck(verbose: bool = False) -> bool:
    items = sample()
    by_id = {i["id"]: i for i in items}
    bad: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        rt = await runtime(str(Path(tmp) / "selfcheck.db"), "stub", {})
        try:
            for extractor in (Oracle(items), Verbatim(), Merger()):
                outcomes = await run_all(rt, extractor, items, extractor.name,
                                         prefix=f"{extractor.name}-")
                found = problems(extractor.name, outcomes, by_id)
                bad += found
                if verbose:
                    passed = sum(o["pass"] for o in outcomes)
                    print(f"{extractor.name}: {passed}/{len(outcomes)} items pass, "
                          f"{'as expected' if not found else f'{len(found)} WRONG'}")
        finally:
            await rt.close()
    for line in bad:
        print(line, file=sys.stderr)
    return not bad
