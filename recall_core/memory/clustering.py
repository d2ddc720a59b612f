"""Which memories of a topic say the same thing: the grouping consolidate_memories merges.

The rule is average linkage around a seed, capped: a group is a seed plus memories each at
least `threshold` alike to the seed and, on average, to the whole group; a group never grows
past `max_size`. Single linkage (connected components) let a chain of near neighbours,
templated notes that each differ a little from the next, become one group of thousands that a
real run would replace with one memory (issue 28). Here every member is near the seed, so a
group cannot chain; complete linkage (every pair alike) was tried and split paraphrases the
model scores 0.8 apart; the cap bounds what one merge can take even when many texts really
are alike.

It is CPU work over n x n similarities, so it runs in a worker thread (never on the event
loop: one call on 15,000 memories held /health for 54 s), in numpy blocks, and stops at a
deadline, saying how far it got: the caller reports a partial result and a repeat call goes
on from there (merged groups are gone from the topic by then).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np

BLOCK = 512  # seeds whose similarity rows are computed at once (memory: BLOCK x n floats)
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
SHORTLIST = 8  # candidates kept per seed, times max_size: the rest could never join anyway


@dataclass
class Grouping:
    groups: list[list[int]]  # each in index order, ordered by their seed
    examined: int  # memories looked at as seeds, in index order (== n when complete)
    complete: bool


def number_keys(texts: list[str]) -> np.ndarray:
    """One int per text naming the set of numbers it contains: texts whose numbers differ
    ("Shipment 10001 ... day 5" / "Shipment 10002 ... day 6") are different facts however
    alike the model finds them (it scores such templated notes >= 0.9), so they never group."""
    ids: dict[frozenset[str], int] = {}
    return np.asarray([ids.setdefault(frozenset(_NUMBER.findall(t)), len(ids)) for t in texts],
                      dtype=np.int64)


def group(vectors: np.ndarray, threshold: float, max_size: int,
          deadline: float | None = None, keys: np.ndarray | None = None) -> Grouping:
    """Groups of >= 2 indices of `vectors` (rows); `deadline` is a time.monotonic() value;
    with `keys` (e.g. number_keys), only rows of one key group together."""
    n = len(vectors)
    if n < 2:
        return Grouping([], n, True)
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1, norms)
    free = np.ones(n, dtype=bool)
    groups: list[list[int]] = []
    for start in range(0, n, BLOCK):
        if start and deadline is not None and time.monotonic() > deadline:
            return Grouping(groups, start, False)
        sims = unit[start:start + BLOCK] @ unit.T
        for row, seed in enumerate(range(start, min(n, start + BLOCK))):
            if not free[seed]:
                continue
            # A seed left alone has no free neighbour: nothing later can take it either.
            free[seed] = False
            allowed = free if keys is None else free & (keys == keys[seed])
            members = _grow(unit, sims[row], seed, allowed, threshold, max_size)
            if len(members) > 1:
                free[members] = False
                groups.append(sorted(members))
    return Grouping(groups, n, True)


def _grow(unit: np.ndarray, sim: np.ndarray, seed: int, free: np.ndarray, threshold: float,
          max_size: int) -> list[int]:
    """The seed, then repeatedly the candidate most alike on average to the members so far,
    while that average is >= threshold (vectorised: one matrix-vector product per member)."""
    cand = np.flatnonzero((sim >= threshold) & free)
    if not len(cand) or max_size < 2:
        return [seed]
    keep = SHORTLIST * max_size
    if len(cand) > keep:
        cand = cand[np.argpartition(-sim[cand], keep)[:keep]]
    vecs = unit[cand]
    total = sim[cand].astype(np.float64)  # each candidate's summed similarity to the members
    members = [seed]
    while len(members) < max_size:
        k = int(np.argmax(total))
        if total[k] < threshold * len(members):
            break
        members.append(int(cand[k]))
        total += vecs @ vecs[k]
        total[k] = -np.inf
    return members
