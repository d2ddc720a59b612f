"""What consolidation's grouping would merge on real dialogue (issue 28): every turn of the
LoCoMo dev conversations as one topic's memories, embedded by the default dense model, grouped
by the old rule (single linkage: connected components of cosine >= t) and by today's
(recall_core.memory.clustering: average linkage around a seed, capped; and with number_keys,
as consolidate_memories runs it), at a few thresholds.
Plus the templated-notes case (recall_testkit.load.templated_notes). Turns are distinct
statements, so a good rule groups few and never makes a huge group.

    python bench/consolidation_groups.py
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import numpy as np

from recall_core.memory.clustering import group, number_keys
from recall_embeddings import DenseSettings, make_dense
from recall_testkit.load import templated_notes

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo-dev.json"


def single_linkage(vectors: np.ndarray, t: float) -> list[int]:
    """Sizes of the connected components (>= 2) of cosine >= t (the rule before)."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    n = len(unit)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    rows, cols = np.nonzero(np.triu(unit @ unit.T, 1) >= t)
    for i, j in zip(rows.tolist(), cols.tolist()):
        parent[find(i)] = find(j)
    sizes: dict[int, int] = {}
    for i in range(n):
        sizes[find(i)] = sizes.get(find(i), 0) + 1
    return sorted((s for s in sizes.values() if s > 1), reverse=True)


def report(name: str, vectors: np.ndarray, texts: list[str]) -> None:
    keys = number_keys(texts)
    for t in (0.75, 0.85, 0.9):
        old = single_linkage(vectors, t)
        t0 = time.perf_counter()
        new = sorted((len(g) for g in group(vectors, t, 20).groups), reverse=True)
        print(json.dumps({"set": name, "n": len(vectors), "threshold": t,
                          "before_groups": len(old), "before_grouped": sum(old),
                          "before_largest": old[0] if old else 0,
                          "after_groups": len(new), "after_grouped": sum(new),
                          "after_largest": new[0] if new else 0,
                          "after_s": round(time.perf_counter() - t0, 2),
                          "after_numbers_groups": len(group(vectors, t, 20, keys=keys).groups)}),
              flush=True)


async def main() -> None:
    ranker = make_dense(DenseSettings())
    embedder = ranker.embedder
    await asyncio.to_thread(embedder.wait_ready, 300)
    turns = []
    for conv in json.loads(DATA.read_text()):
        c = conv["conversation"]
        for key in sorted(k for k in c if k.startswith("session_") and isinstance(c[k], list)):
            turns.extend(t["text"] for t in c[key] if t.get("text"))
    vectors = np.asarray(await embedder.embed(turns), dtype=np.float32)
    report("locomo-dev turns", vectors, turns)
    texts, _ = templated_notes(3000, 1)
    report("templated notes (model)", np.asarray(await embedder.embed(texts), dtype=np.float32),
           texts)


if __name__ == "__main__":
    asyncio.run(main())
