"""A level's rows read newest first, for levels that bring thousands of tied rows.

In a big namespace a common pair of words can reach a level (fulltext.py, kit.levels) with
tens of thousands of rows, and when they come from one template they all have the same
words and length, hence the same score: "Project X budget" at 1M rows holds 25k rows of
{project, budget} at length 8. The plain level statement scores every one of them (a heap
visit each: the 261 MB table does not fit Postgres's buffers) though the answer needs only
the newest few, ties being broken newest first.

So such a level is read in two steps, exactly as its plain statement would rank it:

1. **Newest first**: the newest 2 * limit rows holding one of the level's sets, through
   `fulltext_newest` (migration 18), scored; at most SCAN_ROWS rows of the namespace are
   looked at. Let s be the `limit`-th best score among them.
2. **What can still beat s**: a row older than all of those enters the answer only with a
   score above s (at s it loses the tie to `limit` newer rows). A row holding exactly the
   query words T at length n scores at most V(T, n) = the sum of each word's largest part
   at n (fulltext.contribution: the statement's arithmetic to the bit, so the bound is not
   inflated and a tied class's own bound equals its score). V falls with n, so for each T
   the rows that can beat s are those holding T and shorter than the first n where
   V(T, n) <= s: one GIN scan of `fulltext_at_len` (each word of a row as a 'word n' token,
   n its length), "('project 5' & 'budget 5') | ('project 6' & 'budget 6')", which costs
   posting lists of only those lengths, not heap visits, and finds nothing when no such row
   exists (the usual case for the tied class itself).

The answer is the top `limit` of both steps' rows: any other row is either older than the
prefix and scores at most s (beaten by `limit` newer rows of the prefix), or holds none of
the level's sets (below the level: kit.levels' proof covers it). Declines (None: the caller
scores the level as before) when the prefix holds fewer than `limit` rows, the query has
more than MAX_TERMS words, or more than MAX_SETS scans would be needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from recall_core import ScoredId

from .fulltext import (Term, contribution, in_statement_order, quote, score_expression,
                       set_query)

#: Namespaces of fewer rows never read a level newest first: at 10k rows (bench/tenants.py
#: one, 200 queries) it cost the p95 2 ms more (4.5 -> 6.7 ms) for the same p50; at 100k
#: it was neutral to slightly faster (p50 6.1 -> 5.4 ms at limit 50).
MIN_ROWS = 100_000
#: A level is read newest first when its sets may hold at least this many rows (`estimate`).
TIES_MIN_ROWS = 2000
#: Newest rows of the level read in step 1 (at least; 2 * limit): enough that a tie at
#: the `limit`-th shows it overflows (TIE_OVERFLOW) and that the `limit`-th is the tied
#: class's own score when one class dominates the newest rows.
PREFIX_ROWS = 32
#: Most rows of the namespace step 1 looks at (a literal in the statement: a parameter
#: would let a generic plan assume 10% of the table and sort it). A class worth reading
#: this way is a few % of the rows: 5000 rows hold ~125 of one of 2.5%. Fewer found than
#: `limit`: declined (the rows looked at are the cost of a wrong guess, ~1-3 ms).
SCAN_ROWS = 5000
#: When the newest SCAN_ROWS hold fewer rows of the level than the answer needs, step 1
#: reads deeper (deeper_scan), at most this many rows of the namespace.
MAX_SCAN_ROWS = 80_000
#: A row read newest first costs about this fraction of a level's row read through the
#: GIN index and scored. At 1M rows (bench/tenants.py one's queries): 0.16-0.20 us a row
#: along fulltext_newest, whose rows lie together in the heap, against 2.7 us (quartiles
#: 2.2-4.2) a row of a level's statement, whose rows are scattered over it. The lower
#: quartile's ratio, so a deeper read is chosen only where it clearly pays.
SCAN_COST_RATIO = 12
#: Step 2 runs only when at least this many rows of the prefix beyond the `limit`-th tie
#: with it: a tied class cut by the limit. Otherwise the level's rows are scored as before
#: (step 2 would scan most of the level's word sets with their lengths, at more cost).
TIE_OVERFLOW = 4
#: Queries with more words are not split by their exact word sets (2^n of them).
MAX_TERMS = 7
#: Length tokens one scan may OR; beyond, the scan is not restricted by length.
MAX_LENGTHS = 16
#: Most scans in step 2.
MAX_SETS = 16
#: Step 2 runs when it is expected to read at most this many rows, or fewer than half the
#: level's (then it still reads fewer rows than the level's statement would score).
REST_MAX_ROWS = 4000
#: A word set holding a word of at most this many rows is read whole, not by length.
RARE_ROWS = 1000
#: Empty scans remembered (FullText.empty_scans) before the memory is cleared.
EMPTY_SCANS_MAX = 10_000



def estimate(terms: Sequence[Term], sets: list[list[int]]) -> int:
    """At most how many rows hold one of `sets` (each set: its rarest word's rows). Not the
    independent-terms estimate: the words that tie thousands of rows come together ("ticket
    REC-1234" is 25k rows of {ticket, rec}, independence says 1.3k)."""
    return sum(min(terms[i].df for i in s) for s in sets)


def fills_prefix(rows: int, docs: int, limit: int) -> bool:
    """Whether step 1 can be expected to find `limit` of a level's (at most) `rows` rows among
    the namespace's newest SCAN_ROWS, its rows spread over time as the namespace's are. When
    not, step 1 comes back short and is declined, its scan wasted: "What did Kari Energy ask
    for?" at 1M rows is a level of ~2,100 rows, ~11 of them in the newest 5,000, and its
    1.8 ms scan was thrown away before the level statement ran. (`rows` counts each set's
    rarest word's rows, often many more than hold the whole set: when the scan comes back
    short all the same, deeper_scan decides from what it found.)"""
    return rows * min(1.0, SCAN_ROWS / max(docs, 1)) >= limit


def deeper_scan(found: int, docs: int, want: int) -> int | None:
    """How many of the namespace's newest rows step 1 reads again when the newest SCAN_ROWS
    held only `found` of the level's rows, fewer than the answer needs: enough to hold
    `want` at the density seen (SCAN_ROWS times a power of two, so that few statements are
    prepared). None when that read would exceed MAX_SCAN_ROWS or cost more than scoring the
    level's rows outright (about found * docs / SCAN_ROWS of them, at SCAN_COST_RATIO)."""
    if found <= 0:
        return None
    depth = SCAN_ROWS
    while depth * found < want * SCAN_ROWS:
        depth *= 2
    if depth > MAX_SCAN_ROWS or depth * SCAN_ROWS >= SCAN_COST_RATIO * found * docs:
        return None
    return depth


def beating(terms: Sequence[Term], per_len: float, min_len: int, s: float
            ) -> list[tuple[list[int], int | None, int]] | None:
    """(word set T as indexes into `terms`, first length at which no row holding exactly T
    beats `s` or None when any length may, shortest length) for the scans of step 2, fewest
    and widest: a set is left out when a subset of it covers it. None when MAX_SETS would
    not do."""
    order = in_statement_order(terms)
    index = {id(t): i for i, t in enumerate(terms)}
    slots = [index[id(t)] for t in order]  # statement position -> index into terms
    n = len(terms)
    parts: dict[int, list[float]] = {}

    def bound(mask: int, length: int) -> float:
        # The statement adds every part, 0 for the words a row lacks, in its order.
        at = parts.get(length)
        if at is None:
            at = parts[length] = [contribution(terms[i], length, per_len) for i in slots]
        total = None
        for k, i in enumerate(slots):
            v = at[k] if mask >> i & 1 else 0.0
            total = v if total is None else total + v
        return total  # type: ignore[return-value]

    found: list[tuple[int, int | None, int]] = []
    for mask in sorted(range(1, 2 ** n), key=lambda m: (bin(m).count("1"), m)):
        if any(t & mask == t and u is None for t, u, _ in found):
            continue  # a subset's scan takes every length
        lo = max(min_len, bin(mask).count("1"))
        if bound(mask, lo) <= s:
            continue
        if bound(mask, lo + MAX_LENGTHS) > s:
            upto = None
        else:  # the bound falls with the length: the first length at or below s
            a, b = lo, lo + MAX_LENGTHS  # bound(a) > s >= bound(b)
            while b - a > 1:
                mid = (a + b) // 2
                a, b = (mid, b) if bound(mask, mid) > s else (a, mid)
            upto = b
        if any(t & mask == t and (u is None or (upto is not None and u >= upto))
               for t, u, _ in found):
            continue
        found.append((mask, upto, lo))
        if len(found) > MAX_SETS:
            return None
    return [([i for i in range(n) if m >> i & 1], u, lo) for m, u, lo in found]


def at_length(terms: Sequence[Term], held: Sequence[int], scope: Sequence[str], n: int) -> str:
    """The GIN query of `fulltext_at_len` for the rows of length `n` holding the words
    `held` (and the namespace's token, when the scan must stay in the namespace): each word
    as its 'word n' token, whose posting list holds only rows of that length."""
    return " & ".join(quote(f"{x} {n}") for x in [*scope, *(terms[i].lexeme for i in held)])


def _key(r: asyncpg.Record) -> tuple[float, datetime, int]:
    """The plain query's order, reversed (sort with reverse=True)."""
    return (float(r["score"]), r["created_at"], int(r["seq"]))


class NewestFirst:
    """Step 1 and 2 for one prepared query (fulltext._Scoring holds it)."""

    def __init__(self, terms: list[Term], avglen: float, min_len: int, limit: int,
                 docs: int = 0):
        self.terms = terms
        self.docs = docs
        self.min_len = max(1, min_len)
        self.limit = limit
        self.declined: str | None = None
        self.depth = 0  # the namespace's newest rows step 1 read last
        expr, self.params = score_expression(terms, avglen)
        self.per_len = float(self.params[0])  # the statement's $4: K1 * B / avglen
        self.expr = expr  # a row's score (fulltext.score_expression)
        # Each term alone, in `terms` order (step 1 says which a row holds).
        self.words = words = f"${len(self.params) + 4}::tsquery[]"
        self.rest_sql = f"""
            SELECT id, score, created_at, seq FROM (
                SELECT f.id, f.created_at, f.seq, {expr} AS score FROM fulltext f
                 WHERE f.namespace = $1
                   AND (f.tsv @@ ANY ($2::tsquery[])
                        OR recall_ft_at_len(f.tsv, f.len) @@ ANY ({words}))) AS s
             ORDER BY score DESC, created_at DESC, seq DESC LIMIT $3"""

    def prefix_sql(self, depth: int) -> str:
        """Step 1: the level's rows among the namespace's newest `depth` (a literal: as a
        parameter, a generic plan would assume a tenth of the table and sort it)."""
        return f"""
            SELECT f.id, {self.expr} AS score, f.created_at, f.seq, f.len,
                   (SELECT coalesce(sum(1 << (q.i::int - 1)), 0) FROM unnest({self.words})
                      WITH ORDINALITY AS q(w, i) WHERE f.tsv @@ q.w) AS held
              FROM (SELECT id, created_at, seq, len, tsv FROM fulltext
                     WHERE namespace = $1 ORDER BY created_at DESC, seq DESC
                     LIMIT {int(depth)}) AS f
             WHERE f.tsv @@ ANY ($2::tsquery[])
             ORDER BY f.created_at DESC, f.seq DESC LIMIT $3"""

    def _decline(self, why: str) -> None:
        self.declined = why  # FullText.plans counts it (benchmarks read why)
        return None

    async def run(self, con: asyncpg.Connection, namespace: str, scope: Sequence[str],
                  level_sets: list[list[int]], empty: dict | None = None,
                  version: int | None = None) -> list[ScoredId] | None:
        """The top `limit` rows among those holding one of `level_sets` (the level's word
        sets, indexes into `terms`), or None (declined). `empty`: length-bounded scans known
        to find nothing at (namespace, `version`), kept across searches."""
        if len(self.terms) > MAX_TERMS:
            return self._decline("many words")
        queries = [set_query(self.terms, held) for held in level_sets]
        want = max(PREFIX_ROWS, 2 * self.limit)
        words = [quote(t.lexeme) for t in self.terms]
        self.depth = SCAN_ROWS
        prefix = await con.fetch(self.prefix_sql(self.depth), namespace, queries, want,
                                 *self.params, words)
        if len(prefix) < self.limit:
            depth = deeper_scan(len(prefix), self.docs, want)
            if depth is None:
                return self._decline("short prefix")
            self.depth = depth
            prefix = await con.fetch(self.prefix_sql(depth), namespace, queries, want,
                                     *self.params, words)
            if len(prefix) < self.limit:
                return self._decline("short prefix, deeper")
        ranked = sorted(prefix, key=_key, reverse=True)
        top = ranked[:self.limit]
        s = float(top[-1]["score"])
        if sum(1 for r in ranked[self.limit:] if r["score"] == s) < TIE_OVERFLOW:
            # No tie cut at the limit-th row: nothing to gain over the level.
            return self._decline("no tie cut")
        sets = beating(self.terms, self.per_len, self.min_len, s)
        if sets is None:
            return self._decline("too many sets")
        # What step 2 would read, from what the prefix (the newest rows) holds: a set whose
        # length-bounded scan matches prefix rows matches proportionally many older ones.
        level_rows = sum(min(self.terms[i].df for i in q) for q in level_sets)
        expected, seen_any = 0.0, False
        for k, (held, upto, lo) in enumerate(sets):
            mask = sum(1 << i for i in held)
            rare = min(self.terms[i].df for i in held)
            if upto is not None and rare <= RARE_ROWS:
                # Its rows are few: read them all, one scan of the words' own index.
                sets[k] = (held, None, lo)
                upto = None
            if upto is None:
                expected += rare
            else:
                seen = sum(1 for r in prefix if r["held"] & mask == mask and r["len"] < upto)
                seen_any = seen_any or seen > 0
                expected += min(rare, seen / len(prefix) * level_rows)
        if expected > REST_MAX_ROWS and 2 * expected > level_rows:
            return self._decline("too many rows")
        whole = [set(h) for h, u, _ in sets if u is None]
        sets = [(h, u, lo) for h, u, lo in sets  # what a set read whole holds, left out
                if not any(w < set(h) for w in whole)]
        rows = {r["id"]: r for r in top}
        scans, proofs = [], []
        for held, upto, lo in sets:
            if upto is None:
                scans.append(set_query(self.terms, held, [quote(x) for x in scope]))
            else:
                proofs.extend(at_length(self.terms, held, scope, m) for m in range(lo, upto))
        lengths = []
        if proofs:
            # The length-bounded scans, as one query; when
            # it finds nothing (the usual case: no row of the tied words is shorter), that
            # is remembered for the namespace's version. (When a row of the prefix matches
            # it, it is not empty: no need to ask.)
            proof = " | ".join(f"( {p} )" for p in proofs)
            key = (namespace, version, proof)
            if empty is None or key not in empty:
                if empty is None or seen_any or await con.fetchval(_NONEMPTY, namespace, proof):
                    lengths.append(proof)
                else:
                    if len(empty) > EMPTY_SCANS_MAX:
                        empty.clear()
                    empty[key] = None
        if scans or lengths:
            for r in await con.fetch(self.rest_sql, namespace, scans, self.limit,
                                     *self.params, lengths):
                rows.setdefault(r["id"], r)
        best = sorted(rows.values(), key=_key, reverse=True)[:self.limit]
        return [ScoredId(id=r["id"], score=float(r["score"])) for r in best]

# Whether any row of the namespace matches (one GIN scan; the bitmap is built whole). Asked
# through unnest: as a plain EXISTS, the planner expected a seq scan to meet a row soon
# (thousands estimated) and read the table for 1.5 s when none did.
_NONEMPTY = """
SELECT count(*) FROM unnest(ARRAY[$2::tsquery]) AS q(s)
 WHERE EXISTS (SELECT 1 FROM fulltext f
                WHERE f.namespace = $1 AND recall_ft_at_len(f.tsv, f.len) @@ q.s)"""
