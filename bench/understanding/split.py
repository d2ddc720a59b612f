"""Split the hand-written items into the tune and confirm halves (README.md: the split rule).

The held-out set `items/dev3.jsonl` (written later, independently of the tuned phrasings) is
split by the same rule into `dev3_tune.jsonl` and `dev3_confirm.jsonl`.

    python bench/understanding/split.py          # rewrite tune.jsonl and confirm.jsonl
    python bench/understanding/split.py --check  # exit 1 when the committed halves differ

The rule looks at item ids only, so no text, label or extractor output can move an item.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ("change", "end", "separate", "compound", "statement")
HALVES = ("tune", "confirm")


#: Later sets, each split on its own into `<name>_tune.jsonl` and `<name>_confirm.jsonl`.
HELD_OUT = ("dev3",)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def load_items(name: str | None = None) -> list[dict]:
    """The hand-written items of the first set (None) or of a held-out set by name."""
    if name is not None:
        return _read(HERE / "items" / f"{name}.jsonl")
    rows = []
    for kind in KINDS:
        rows += _read(HERE / "items" / f"{kind}.jsonl")
    return rows


def _bit(item_id: str) -> int:
    return hashlib.sha256(item_id.encode()).digest()[0] & 1


def assign(ids: list[str]) -> dict[str, str]:
    """Half per id of ONE kind: consecutive pairs in id order, the first id's hash bit
    decides which of the two goes to tune (so each kind splits within one item)."""
    ids = sorted(ids)
    out: dict[str, str] = {}
    for i in range(0, len(ids), 2):
        pair = ids[i:i + 2]
        order = HALVES if _bit(pair[0]) == 0 else HALVES[::-1]
        for item_id, half in zip(pair, order):
            out[item_id] = half
    return out


def split(items: list[dict]) -> dict[str, list[dict]]:
    halves: dict[str, list[dict]] = {h: [] for h in HALVES}
    for kind in KINDS:
        of_kind = [r for r in items if r["kind"] == kind]
        where = assign([r["id"] for r in of_kind])
        for r in sorted(of_kind, key=lambda r: r["id"]):
            halves[where[r["id"]]].append(r)
    return halves


def render(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args()
    stale = []
    for name in (None, *HELD_OUT):
        stale += _split_set(name, args.check)
    if stale:
        print(f"out of date: {', '.join(stale)} (run without --check)", file=sys.stderr)
    return 1 if stale else 0


def _split_set(name: str | None, check: bool) -> list[str]:
    items = load_items(name)
    ids = [r["id"] for r in items]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate item ids")
    stale = []
    for half, rows in split(items).items():
        half = half if name is None else f"{name}_{half}"
        path = HERE / f"{half}.jsonl"
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != render(rows):
                stale.append(path.name)
        else:
            path.write_text(render(rows), encoding="utf-8")
        counts = {k: sum(r["kind"] == k for r in rows) for k in KINDS}
        print(half, len(rows), counts)
    return stale


if __name__ == "__main__":
    sys.exit(main())
