"""Top-k full text by score levels: score only the rows that can enter the answer.

Both storage backends rank keyword hits by a sum of per-term contributions, and a term adds
at most its `bound` to any row. So a row whose terms' bounds sum to less than a level L
scores less than L. To find the top `limit`, a backend scores only the rows holding one of
the *minimal sets* of terms whose bounds reach L (`minimal_sets`); when the `limit`-th score
found is at least L, no other row can enter the answer, which is therefore exactly the plain
query's (same rows, same order, same ties). Otherwise that `limit`-th score is a lower bound
of the true one, and one more run at that level is exact. L is chosen from the document
frequencies (`first_level`: rows expected to reach it, terms taken as independent); the plain
query (every matching row) runs when no level pays.

The semantics (which rows a level covers, which level is tried, when an answer is proven)
live here once; a backend supplies the terms (df, a typical weight, a bound) and `run`, which
ranks the rows holding one of the sets exactly as its plain query would
(recall_postgres/fulltext.py: tsquery arrays; recall_sqlite/fulltext.py: FTS5 MATCH
expressions re-scored from the rows' own terms).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from recall_core.models import ScoredId

#: The levels tried, highest first: where about this many times `limit` rows are expected
#: to score (terms taken as independent; words that go together make it more).
TARGETS = (0.25, 4.0, 32.0)
#: Most conjunctions one level ORs (each is an index scan); more and the cover is coarser.
MAX_SETS = 16
#: How many of the query's terms (the weightiest) the estimate looks at.
ESTIMATE_TERMS = 8


class LevelTerm(Protocol):
    """What the level math needs of a query term."""

    @property
    def df(self) -> int: ...  # rows holding it

    @property
    def weight(self) -> float: ...  # what a row holding it typically gets (estimates only)

    @property
    def bound(self) -> float: ...  # the most it adds to any row's score (never too low)


def minimal_sets(terms: Sequence[LevelTerm], level: float, cap: int = MAX_SETS
                 ) -> list[list[int]]:
    """Indexes (into `terms`, heaviest bound first) of the minimal sets of terms whose bounds
    sum to `level` or more: a row holds one of them exactly when its terms' bounds reach the
    level. Beyond `cap` sets, a coarser cover: each of the heaviest terms alone, as many as
    the remaining ones cannot reach the level without (the max-score split)."""
    n = len(terms)
    if level <= 0:
        return [[i] for i in range(n)]
    suffix = [0.0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + terms[i].bound
    out: list[list[int]] = []

    def walk(start: int, chosen: list[int], total: float) -> bool:
        for i in range(start, n):
            if total + suffix[i] < level:
                return True
            reached = total + terms[i].bound
            if reached >= level:
                out.append(chosen + [i])
                if len(out) > cap:
                    return False
            elif not walk(i + 1, chosen + [i], reached):
                return False
        return True

    if walk(0, [], 0.0):
        return out
    split = next(i for i in range(n + 1) if suffix[i] < level)
    return [[i] for i in range(split)]


def first_level(terms: Sequence[LevelTerm], docs: int, want: float,
                estimate_terms: int = ESTIMATE_TERMS) -> float:
    """The highest score that about `want` rows are expected to reach (terms independent,
    a row holding term t typically scoring t.weight)."""
    dist: dict[float, float] = {0.0: 1.0}
    for t in terms[:estimate_terms]:
        p = min(1.0, t.df / docs) if docs else 1.0
        nxt: dict[float, float] = {}
        for s, q in dist.items():
            nxt[s] = nxt.get(s, 0.0) + q * (1 - p)
            k = round(s + t.weight, 9)
            nxt[k] = nxt.get(k, 0.0) + q * p
        dist = nxt
    need = want / max(docs, 1)
    acc = 0.0
    for s in sorted(dist, reverse=True):
        acc += dist[s]
        if acc >= need:
            return s
    return 0.0


#: Ranks the rows reaching a level (those holding one of `minimal_sets(terms, level)`)
#: exactly as the plain query ranks them, best first, at most `limit`; or None when the
#: backend declines (too many rows to score that way: the plain query is then cheaper).
Run = Callable[[float], Awaitable[list[ScoredId] | None]]


async def by_levels(terms: Sequence[LevelTerm], docs: int, limit: int, run: Run
                    ) -> tuple[list[ScoredId] | None, str]:
    """(the exact top `limit`, how it was found), or (None, "plain") when no level paid and
    the caller must run its plain query. `terms` heaviest bound first; `docs` the rows of
    the namespace."""
    if not terms:
        return None, "plain"
    tried = float("inf")
    lightest = min(t.bound for t in terms)
    for want in TARGETS:
        level = first_level(terms, docs, want * limit)
        if level >= tried:
            continue
        if level <= lightest:  # every matching row reaches it: the plain query is the same
            break
        found = await run(level)
        if found is None:
            break
        if len(found) == limit and found[-1].score >= level:
            return found, f"level {want:g}"
        if len(found) == limit:
            # The limit-th score found is a lower bound of the true one, so the rows that
            # can reach it hold the answer: exact at that level.
            again = await run(found[-1].score)
            if again is None:
                break
            return again, f"level {want:g}, then its score"
        tried = level
    return None, "plain"
