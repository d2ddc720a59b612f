"""Check the held-out dev3 set (bench/understanding/items/dev3.jsonl) against the README's format.

    python bench/understanding/check_dev3.py [path]

Every line parses; ids are unique and prefixed ``d3-``; each kind has its label fields; every
must-term occurs, at a word start (the matcher of bench/extraction_match.py), in the text that
states it; attributes are inventory names (or ``favorite_<thing>``), a change's attribute is
single-valued and an end's many-valued; entities are lowercase. Exits 1 on any problem.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from extraction_match import term_matches  # noqa: E402

try:
    from recall_core.kit.attributes import FAVORITE_PREFIX, INVENTORY
except Exception:  # the package is not importable: skip the inventory checks
    INVENTORY, FAVORITE_PREFIX = None, "favorite_"

KINDS = {"change", "end", "separate", "compound", "statement"}
WHYS = {"other_subject", "many_valued", "other_attribute", "hedge", "question", "past", "negated"}


def attr_known(attr: str) -> bool:
    return INVENTORY is None or all(a in INVENTORY or a.startswith(FAVORITE_PREFIX)
                                    for a in attr.split("|"))


def many(attr: str) -> bool | None:
    if INVENTORY is None:
        return None
    flags = {INVENTORY[a].many if a in INVENTORY else False for a in attr.split("|")}
    return flags.pop() if len(flags) == 1 else None


def check(path: Path) -> list[str]:
    problems: list[str] = []
    ids: Counter[str] = Counter()

    def must_in(where: str, must, text: str) -> None:
        if not isinstance(must, list) or not must or not all(isinstance(t, str) and t for t in must):
            problems.append(f"{where}: must is not a non-empty list of terms: {must!r}")
            return
        for term in must:
            if not term_matches(term, text):
                problems.append(f"{where}: must-term {term!r} not at a word start in {text!r}")

    def entity_ok(where: str, entity: str) -> None:
        if entity != entity.lower():
            problems.append(f"{where}: entity {entity!r} is not lowercase")

    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            item = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"line {n}: does not parse: {e}")
            continue
        iid, kind = item.get("id", f"line {n}"), item.get("kind")
        ids[iid] += 1
        if not str(iid).startswith("d3-"):
            problems.append(f"{iid}: id not prefixed d3-")
        if kind not in KINDS:
            problems.append(f"{iid}: unknown kind {kind!r}")
            continue
        texts = item["texts"] if "texts" in item else [item.get("text")]
        if not all(isinstance(t, str) and t.strip() for t in texts):
            problems.append(f"{iid}: empty text")
            continue
        if kind in ("change", "end"):
            entity, attr = item["key"]
            entity_ok(iid, entity)
            if not attr_known(attr):
                problems.append(f"{iid}: attribute {attr!r} not in the inventory")
            if many(attr) is (kind == "change"):
                problems.append(f"{iid}: a {kind} of a {'many' if many(attr) else 'single'}"
                                f"-valued attribute {attr!r}")
        if kind == "change":
            if len(texts) not in (2, 3) or ("mid" in item) != (len(texts) == 3):
                problems.append(f"{iid}: 2 texts, or 3 with mid")
            must_in(f"{iid} old", item["old"], texts[0])
            must_in(f"{iid} new", item["new"], texts[-1])
            if "mid" in item and len(texts) == 3:
                must_in(f"{iid} mid", item["mid"], texts[1])
            if item.get("cue") not in ("explicit", "none") or not item.get("question"):
                problems.append(f"{iid}: cue must be explicit|none and question set")
        elif kind == "end":
            ended = item["ended"]
            must_in(f"{iid} ended", ended["must"], texts[ended["text"]])
            for k in item["kept"]:
                must_in(f"{iid} kept", k["must"], texts[k["text"]])
        elif kind == "separate":
            if item.get("why") not in WHYS:
                problems.append(f"{iid}: why {item.get('why')!r}")
            if len(texts) != 2 or not item["values"]:
                problems.append(f"{iid}: two texts and at least one value")
            for v in item["values"]:
                must_in(f"{iid} value", v["must"], texts[v["text"]])
        elif kind == "compound":
            if not 2 <= len(item["statements"]) <= 4:
                problems.append(f"{iid}: 2-4 statements")
            for s in item["statements"]:
                must_in(f"{iid} statement", s["must"], texts[0])
                if s["triple"] is not None:
                    entity_ok(iid, s["triple"][0])
                    if len(s["triple"]) != 3 or not attr_known(s["triple"][1]):
                        problems.append(f"{iid}: triple {s['triple']!r}")
        elif kind == "statement":
            if (item["triple"] is None) != (item["must"] is None):
                problems.append(f"{iid}: triple and must are both null or both set")
            if item["triple"] is not None:
                entity_ok(iid, item["triple"][0])
                if len(item["triple"]) != 3 or not attr_known(item["triple"][1]):
                    problems.append(f"{iid}: triple {item['triple']!r}")
                must_in(f"{iid} statement", item["must"], texts[0])
    problems += [f"{i}: id used {c} times" for i, c in ids.items() if c > 1]
    return problems


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "items" / "dev3.jsonl"
    problems = check(path)
    items = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    print(f"{len(items)} items:", dict(Counter(i.get("kind") for i in items)),
          "" if INVENTORY is not None else "(inventory not importable: names not checked)")
    for p in problems:
        print(p)
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
