"""Level search on FTS5 (kit.levels): the top `limit` of a large namespace's plain query,
from the few rows that can enter it.

A level's rows are those holding one of its sets of terms: an FTS5 MATCH expression
`{text context} : (("a" AND "b") OR ("c"))` (no bm25(), so no IDF walk and no scoring in
FTS5). They are scored in Python by fts_rescore.Scorer, bit for bit what bm25() gives them.

Ties. Rows holding the same words score the same and the newer goes first; a templated or
repetitive namespace has thousands of rows tied at the boundary ("ticket" AND "rec": 25k
rows of 1M, one score). So a level's rows are read newest first, a chunk at a time: once
`limit` rows are scored with the `limit`-th at s, an older row can only enter with a score
*above* s, i.e. by holding a set of terms whose largest possible score exceeds s
(`above`). A term's largest possible contribution is exact when no row holds it twice
(FTS5's vocabulary counts its rows and its instances: equal): then rows of the tied pattern
cannot exceed s, the scan narrows to heavier patterns and usually ends at once. Where a few
rows hold a term several times ("mobile": 348 extra instances in 60k rows), those rows are
listed once per data version (FTS5's instance vocabulary) and scored apart, so the bound of
every other row stays one instance; past REPEATS_MAX extra instances a term gets the bound of
the most instances one row can hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from recall_core import ScoredId
from recall_core.kit.levels import by_levels, minimal_sets

from .connection import Database
from .fts_rescore import Scorer, Stems

#: Rows read per step of the newest-first scan of a level.
CHUNK = 256
#: Most rows one search scores in Python (a few us each); past it the level declines and
#: the plain query (bm25() in C) runs. Only speed depends on it.
SCAN_MAX_ROWS = 2000
#: Most rows scored apart for holding a query word more than once (fulltext.REPEATS_MAX
#: bounds them per word; this, per search).
APART_MAX_ROWS = 1000
#: `above` enumerates subsets of at most this many terms (2^n).
EXACT_MAX_TERMS = 10
# Bounds handed to kit.levels are inflated by this much, so that summing them in another
# order than the scorer never makes one too low.
_SLACK = 1e-9

# The rows of a level older than a rowid, newest first, after one row holding FTS5's
# averages record and the data version: one snapshot.
_AVERAGES = "(SELECT block FROM memories_fts_data WHERE id = 1)"
_CHUNK = (f"SELECT -1, {_AVERAGES}, (SELECT value FROM version_counter WHERE id = 1), NULL "
          "UNION ALL SELECT * FROM (SELECT m.seq, m.text, m.context, m.id "
          "FROM memories_fts AS h CROSS JOIN memories AS m ON m.seq = h.rowid "
          "WHERE memories_fts MATCH ? AND h.rowid < ? AND m.namespace = ? "
          "AND m.valid_until IS NULL ORDER BY h.rowid DESC LIMIT ?)")


@dataclass(frozen=True)
class Term:
    """A query term for kit.levels: its position in the plain query, rows holding it, what
    a row holding it once in its text gets, and the most it adds to a row."""
    index: int
    df: int
    weight: float
    bound: float


@dataclass
class Query:
    """One search's terms and statistics (counts of one data version)."""
    namespace: str
    code: int
    quoted: list[str]      # the plain query's phrases, in its order
    hits: list[int]        # rows holding each
    extra: list[int | None]  # instances beyond one per row (None: unknown, a phrase)
    repeated: list[tuple[int, ...] | None]  # rows holding it more than once (None: unknown)
    rows: int              # rows in the index (the namespace's: it is alone in the file)
    avgdl: float           # FTS5's average row size, as bm25() reads it
    version: int | None    # the data version the counts are of
    idfs: list[float]


class LevelSearch:
    def __init__(self, db: Database, stems: Stems):
        self.db = db
        self.stems = stems

    async def search(self, q: Query, limit: int) -> tuple[list[ScoredId] | None, str]:
        """(the plain query's top `limit`, the plan) or (None, "plain")."""
        scorer = Scorer(self.stems, q.code, q.quoted, q.idfs, q.avgdl)
        if not scorer.usable:
            return None, "plain"
        # The most each term adds to a row outside `repeated`: bm25()'s weight at one
        # instance where the rows holding it more than once are known (they are scored
        # apart, below), else at the most instances one row can hold.
        repeated = q.repeated
        apart = sorted({seq for r in repeated if r for seq in r})
        if len(apart) > APART_MAX_ROWS:  # too many to score apart: looser bounds instead
            repeated = [r if r == () else None for r in repeated]
            apart = []
        most = [scorer.weight(i, 1.0) if r is not None else
                scorer.weight(i, 1.0 + e if e is not None else None)
                for i, (e, r) in enumerate(zip(q.extra, repeated))]
        first = await self._rows_apart(q, scorer, apart, limit)
        if first is None:
            return None, "plain"
        once = [scorer.weight(i, 1.0) for i in range(len(q.quoted))]
        terms = sorted((Term(i, q.hits[i], once[i], most[i] * (1 + _SLACK))
                        for i in range(len(q.quoted))), key=lambda t: (-t.bound, t.index))
        budget = [SCAN_MAX_ROWS]

        async def run(level: float) -> list[ScoredId] | None:
            sets = [[terms[i].index for i in s] for s in minimal_sets(terms, level)]
            return await self._scan(q, scorer, most, sets, limit, budget, first, set(apart))

        return await by_levels(terms, q.rows, limit, run)

    async def _rows_apart(self, q: Query, scorer: Scorer, seqs: list[int], limit: int
                          ) -> list[tuple[float, int, str]] | None:
        """The rows holding a query term more than once, scored (best first, at most
        `limit`); None when the snapshot moved."""
        best: list[tuple[float, int, str]] = []
        for start in range(0, len(seqs), 500):
            part = seqs[start:start + 500]
            found = await self.db.fetch(
                "SELECT -1, NULL, (SELECT value FROM version_counter WHERE id = 1), NULL "
                "UNION ALL SELECT seq, text, context, id FROM memories WHERE seq IN "
                f"({', '.join('?' * len(part))}) AND namespace = ? AND valid_until IS NULL",
                [*part, q.namespace])
            if found[0][2] != q.version:
                return None
            rows = found[1:]
            scores = scorer.scores([(r[1], r[2]) for r in rows])
            best = sorted([*best, *((sc, r[0], r[3]) for sc, r in zip(scores, rows))],
                          key=lambda r: (-r[0], -r[1]))[:limit]
        return best

    async def _scan(self, q: Query, scorer: Scorer, most: list[float], sets: list[list[int]],
                    limit: int, budget: list[int], first: list[tuple[float, int, str]],
                    apart: set[int]) -> list[ScoredId] | None:
        """The top `limit` (plain order) of the rows holding one of `sets` (or of more rows:
        a superset only makes the caller's proof stronger), newest first, narrowing as the
        `limit`-th score rises; None when the budget runs out or the snapshot moved. `first`:
        the rows set apart (`apart`, their seqs), already scored; the scan skips them."""
        best = list(first)
        below = 1 << 62
        while sets:
            found = await self.db.fetch(_CHUNK, (_match(q.quoted, sets), below, q.namespace,
                                                 CHUNK))
            _, block, version, _ = found[0]
            if version != q.version:
                return None  # written since the counts were taken: their bounds may not hold
            rows = found[1:]
            budget[0] -= len(rows)
            if budget[0] < 0:
                return None
            fresh = [r for r in rows if r[0] not in apart]
            scores = scorer.scores([(r[1], r[2]) for r in fresh])
            best = sorted([*best, *((s, r[0], r[3]) for s, r in zip(scores, fresh))],
                          key=lambda r: (-r[0], -r[1]))[:limit]
            if len(rows) < CHUNK:
                break
            below = rows[-1][0]
            if len(best) == limit:
                # Older rows enter only above the limit-th score.
                narrower = above(most, best[-1][0])
                if narrower is not None:
                    sets = narrower
        return [ScoredId(id=m, score=s) for s, _, m in best]


def above(most: Sequence[float], score: float) -> list[list[int]] | None:
    """The minimal sets of terms (indexes in the plain query's order) whose largest possible
    score, summed in that order as bm25() sums, exceeds `score`: a row holding none of them
    scores at most `score`. None when there are too many terms to enumerate."""
    n = len(most)
    if n > EXACT_MAX_TERMS:
        return None
    out: list[list[int]] = []
    for size in range(1, n + 1):
        for combo in combinations(range(n), size):
            if any(set(s) <= set(combo) for s in out):
                continue
            total = 0.0
            for i in combo:  # float addition is monotone: a superset never sums lower
                total += most[i]
            if total > score:
                out.append(list(combo))
    return out


def _match(quoted: Sequence[str], sets: Sequence[Sequence[int]]) -> str:
    return "{text context} : (" + " OR ".join(
        "(" + " AND ".join(quoted[i] for i in s) + ")" for s in sets) + ")"

