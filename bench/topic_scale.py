"""Where a dense model puts two stored texts: its topic scale (`Embedder.topic_scale`).

    python bench/topic_scale.py                                  # the default model (MiniLM)
    python bench/topic_scale.py --dense multilingual-e5-small-q4
    python bench/topic_scale.py --dense e5 --sets confirm dev3_confirm   # check, not calibrate

Core's bars between memories (search's newer-first rule: SAME_TOPIC, UNKEYED_SAME_TOPIC) were
measured in all-MiniLM-L6-v2's space, and another model reads them through its topic scale
(`recall_core.contracts.on_reference_scale`). The scale is two medians over issue 27's change
items (`bench/understanding/`): the cosine of an item's first and last text (a fact and its
change: one topic), and of an item's first text with other items' last texts (unrelated).
It is calibrated on the tune sets (the default); run it on the held-out halves to see that
the mapped bars pass the same shares of pairs there. Prints the medians and, for each bar,
the share of one-topic and of unrelated pairs whose mapped cosine reaches it (and, to compare,
whose raw cosine does).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from understanding import SET as SETS, load_set  # noqa: E402

TUNE = ["tune", "dev3_tune", *sorted(p.stem for p in (SETS / "fresh").glob("writer13_*.jsonl"))]
#: Items of other changes to pair each first text with (offsets into the list).
SHIFTS = (7, 13, 29)


def changes(names: list[str]) -> list[dict]:
    """The change items of halves or fresh sets, by name."""
    out = []
    for name in names:
        fresh = SETS / "fresh" / f"{name}.jsonl"
        out += load_set(name, ("change",), path=fresh if fresh.exists() else None)
    return out


async def cosines(model: str, items: list[dict]) -> tuple[np.ndarray, np.ndarray, tuple]:
    from recall_embeddings.ranker import make_dense

    embedder = make_dense({"model": model}).embedder
    if not await asyncio.to_thread(embedder.wait_ready, 300):
        raise SystemExit(f"the dense model did not load: {embedder.status()}")
    first = np.asarray(await embedder.embed([i["texts"][0] for i in items]))
    last = np.asarray(await embedder.embed([i["texts"][-1] for i in items]))
    one_topic = (first * last).sum(1)
    unrelated = np.concatenate([(first * np.roll(last, k, 0)).sum(1) for k in SHIFTS])
    return one_topic, unrelated, embedder.topic_scale


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dense", default="auto", help="the model ([plugins.dense] model)")
    ap.add_argument("--sets", nargs="+", default=TUNE,
                    help="halves or fresh sets by name (default: the tune sets)")
    args = ap.parse_args(argv)
    from recall_core.contracts import on_reference_scale
    from recall_core.search.newer import SAME_TOPIC, UNKEYED_SAME_TOPIC

    items = changes(args.sets)
    one_topic, unrelated, scale = asyncio.run(cosines(args.dense, items))
    print(f"{args.dense}: {len(items)} changes, {len(unrelated)} unrelated pairs "
          f"({', '.join(args.sets)})")
    print(f"medians: unrelated {np.median(unrelated):.3f}, one topic {np.median(one_topic):.3f}"
          f"  -> topic_scale ({np.median(unrelated):.2f}, {np.median(one_topic):.2f});"
          f" the model declares {scale}")
    for bar in (SAME_TOPIC, UNKEYED_SAME_TOPIC):
        on, off = (on_reference_scale(c, scale) >= bar for c in (one_topic, unrelated))
        raw_on, raw_off = ((c >= bar).mean() for c in (one_topic, unrelated))
        print(f"bar {bar}: one topic {on.mean():.3f} pass, unrelated {off.mean():.3f} pass "
              f"(raw cosines, unmapped: {raw_on:.3f}, {raw_off:.3f})")


if __name__ == "__main__":
    sys.exit(main())
