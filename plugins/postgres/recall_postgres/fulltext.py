"""Keyword search: BM25 over the `fulltext` table, and the bookkeeping that keeps its
statistics exact.

Tables (migrations.py, step 5): `fulltext` holds one narrow row per active memory (its
tsvector: text at weight A, session context at weight D; `len`, its number of lexemes);
`fulltext_terms` the document frequencies per namespace and lexeme; `namespaces` the number
of active rows, their total length and a lower bound of the shortest one. Every write of the
plugin calls `sync` in its transaction, after its memory rows and before the namespace's
version row (the lock order of storage.py), so any snapshot sees statistics that match its
rows, and two writers never wait on each other in opposite orders (lexeme rows are locked
sorted). Nothing is counted at query time.

Ranking: BM25 with two fields (the variant measured on LoCoMo, bench/RESULTS.md):

    score = sum over the query's lexemes t of  idf(t) * tf * (K1 + 1) / (tf + K1 * norm)
    tf = 1 if the text holds t, + CONTEXT_WEIGHT if the session context does
    norm = 1 - B + B * len / average len,   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))

Speed: Postgres evaluates that for about 1 us a row, so scoring every row that holds a
common word costs tens of ms at 100k memories. A lexeme adds at most its `bound` to any row
(idf * the largest tf it has in the namespace, at the shortest length), so a row whose
lexemes' bounds sum to less than a level L scores less than L. `search` therefore asks for
the top `limit` among the rows whose bounds reach L only: the rows holding one of the
minimal sets of lexemes whose bounds sum to L (a GIN scan per set: `tsv @@ ANY(array of
AND-queries)`). When the `limit`-th score found is at least L, no other row can enter the
answer, which is therefore exactly the plain query's (same order, same ties). Otherwise the
`limit`-th score found is a lower bound of the true one and one more query at that level is
exact. L is chosen from the document frequencies (rows expected to score L or more, terms
taken as independent); the plain query (every matching row) only runs for small sets. The
level math (sets, levels, the proof) is recall_core.kit.levels, shared with the SQLite plugin.
A level that may bring thousands of rows (a common pair of words) is first read newest
first (ties.py): when one tied class fills the answer, only its newest rows are scored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from recall_core import ScoredId
from recall_core.kit.levels import by_levels, minimal_sets

K1 = 1.2
B = 0.75
#: Weight of the session context (the previous turn) against the memory's own text.
CONTEXT_WEIGHT = 0.4
#: Lexemes held by more than this share of the namespace's rows are left out of a query
#: (idf below ln(1 + 1/9) = 0.105, against ~3 for a word in 5% of the rows).
COMMON_SHARE = 0.9
#: When the other namespaces hold at most this many rows (or a tenth of this one's), GIN
#: scans are not scoped by the namespace token (the heap check still filters).
UNSCOPED_MAX_OTHERS = 1000
#: When the query's lexemes match at most this many rows together, they are all scored.
PLAIN_MAX_ROWS = 1500
#: Levels expected to bring many rows are read newest first (ties.py); False: never
#: (benchmarks compare the two).
NEWEST_FIRST = True
# Bounds are inflated by this much so that float rounding never makes a bound too low.
_SLACK = 1e-9

#: Memory types, as the memories table's CHECK constraint has them; namespaces counts the
#: active rows of each (active_<type>).
TYPES = ("preference", "fact", "decision", "procedure")

TSV = ("setweight(recall_ft_vector(m.search_text), 'A') || "
       "setweight(recall_ft_vector(coalesce(m.search_context, '')), 'D')")

# -- bookkeeping ------------------------------------------------------------------------------
_SYNC = """
WITH gone AS (
    DELETE FROM fulltext f WHERE {gone} RETURNING f.namespace, f.type, f.len, f.tsv),
new AS (
    INSERT INTO fulltext (id, namespace, created_at, seq, type, len, tsv)
    SELECT m.id, m.namespace, m.created_at, m.seq, m.type, length(v.tsv),
           v.tsv || array_to_tsvector(ARRAY[recall_ft_scope(m.namespace)])
      FROM memories m CROSS JOIN LATERAL (SELECT {tsv} AS tsv) v
     WHERE m.id = ANY ($1::text[]) AND m.valid_until IS NULL
        ON CONFLICT (id) DO NOTHING
    RETURNING namespace, type, len, tsv),
ch AS (SELECT namespace, type, len, tsv, 1 AS s FROM new
       UNION ALL SELECT namespace, type, len, tsv, -1 FROM gone),
terms AS (
    SELECT ch.namespace, t.lexeme, sum(ch.s)::int AS df,
           coalesce(sum(ch.s) FILTER (WHERE 'A' = ANY (t.weights)), 0)::int AS df_text,
           coalesce(sum(ch.s) FILTER (WHERE 'A' = ANY (t.weights) AND 'D' = ANY (t.weights)),
                    0)::int AS df_both
      FROM ch CROSS JOIN LATERAL unnest(ch.tsv) AS t
     WHERE t.lexeme <> recall_ft_scope(ch.namespace)
     GROUP BY ch.namespace, t.lexeme),
up AS (
    INSERT INTO fulltext_terms AS ft (namespace, lexeme, df, df_text, df_both)
    SELECT namespace, lexeme, df, df_text, df_both FROM terms
     WHERE df <> 0 OR df_text <> 0 OR df_both <> 0
     ORDER BY namespace, lexeme COLLATE "C"
        ON CONFLICT (namespace, lexeme) DO UPDATE
       SET df = ft.df + excluded.df, df_text = ft.df_text + excluded.df_text,
           df_both = ft.df_both + excluded.df_both
    RETURNING ft.namespace, ft.lexeme, ft.df)
SELECT c.*, e.emptied
  FROM (SELECT namespace, sum(s)::bigint AS docs, sum(s * len)::bigint AS len,
               min(len) FILTER (WHERE s > 0 AND len > 0) AS min_len,
               {by_type}
          FROM ch GROUP BY namespace) AS c
  LEFT JOIN (SELECT namespace, array_agg(lexeme) AS emptied FROM up WHERE df <= 0
              GROUP BY namespace) AS e ON e.namespace = c.namespace
"""
_SYNC_IDS = _SYNC.format(
    gone="f.id = ANY ($2::text[])", tsv=TSV,
    by_type=", ".join(f"coalesce(sum(s) FILTER (WHERE type = '{t}'), 0)::bigint AS {t}"
                      for t in TYPES))
_DROP_EMPTIED = ("DELETE FROM fulltext_terms WHERE namespace = $1 AND lexeme = ANY ($2::text[]) "
                 "AND df <= 0")


@dataclass(frozen=True)
class Counts:
    """What one transaction changed in a namespace's statistics."""
    docs: int = 0
    length: int = 0
    min_len: int | None = None  # shortest non-empty row it added
    by_type: tuple[int, ...] = (0,) * len(TYPES)  # active rows per type, in TYPES order


async def sync(con: asyncpg.Connection, added: Sequence[str] = (),
               removed: Sequence[str] = ()) -> dict[str, Counts]:
    """Index the memories `added` (those still active) and unindex `removed` (the ids this
    transaction's own statements retired or deleted, from their RETURNING: rows another
    transaction changed meanwhile are never counted twice), adjusting the document
    frequencies. Returns the changes to the namespace counters, which the caller applies
    with its version bump (the last lock)."""
    if not added and not removed:
        return {}
    rows = await con.fetch(_SYNC_IDS, list(added), list(removed))
    out = {}
    for r in rows:
        if r["emptied"]:
            await con.execute(_DROP_EMPTIED, r["namespace"], r["emptied"])
        out[r["namespace"]] = Counts(int(r["docs"]), int(r["len"]), r["min_len"],
                                     tuple(int(r[t]) for t in TYPES))
    return out


# -- search -----------------------------------------------------------------------------------
# One probe per lexeme (the LIMIT keeps the planner from flattening it into a join): the
# generic plan of a join walked all the namespace's lexemes instead (7 ms for a namespace
# with 10k distinct words, in a database with 20k namespaces).
_STATS = """
SELECT q.lexeme, coalesce(t.df, 0) AS df, coalesce(t.df_text, 0) AS df_text,
       coalesce(t.df_both, 0) AS df_both, n.ft_docs, n.ft_len, n.ft_min_len, n.version,
       recall_ft_scope($1) AS scope, pg_stat_get_live_tuples('fulltext'::regclass) AS rows
  FROM (SELECT DISTINCT l.lexeme
          FROM unnest($2::text[]) AS q(term),
               unnest(tsvector_to_array(recall_ft_vector(q.term))) AS l(lexeme)) AS q
  LEFT JOIN LATERAL (SELECT df, df_text, df_both FROM fulltext_terms
                      WHERE namespace = $1 AND lexeme = q.lexeme LIMIT 1) AS t ON true
  LEFT JOIN namespaces n ON n.namespace = $1
"""


@dataclass(frozen=True)
class Term:
    lexeme: str
    df: int
    idf: float
    in_text: bool      # some active row holds it in its text
    in_context: bool   # ... in its session context
    bound: float       # the most it adds to any row's score
    tf: float = 1.0    # the largest tf a row has for it (1, CONTEXT_WEIGHT or both added)

    @property
    def weight(self) -> float:
        """What a row holding it typically gets, for the level estimate (kit.levels)."""
        return self.idf


def quote(lexeme: str, weight: str = "") -> str:
    """A tsquery operand that matches exactly `lexeme` (no input can form query syntax)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" + (
        ":" + weight if weight else "")


def norm_factor(length: float, avglen: float) -> float:
    return K1 * (1 - B + B * length / avglen)


def weigh(lexemes: Sequence[tuple[str, int, int, int]], docs: int, total_len: int,
          min_len: int | None) -> tuple[list[Term], float]:
    """Terms (heaviest bound first) and the average length, from (lexeme, df, df_text,
    df_both) of the query's lexemes found in the namespace."""
    found = [x for x in lexemes if x[1] > 0]
    if not found:
        return [], 1.0
    # Counters that drifted (someone edited rows by hand) must not break the arithmetic.
    n = max(docs, max(df for _, df, _, _ in found))
    # Lexemes in nearly every row (a speaker's name in a conversation) weigh ~nothing but
    # would make every row a candidate: left out, the rarest one always kept.
    informative = [x for x in found if x[1] <= COMMON_SHARE * n]
    found = informative or [min(found, key=lambda x: (x[1], x[0]))]
    avglen = max(total_len / docs, 1.0) if docs > 0 else 1.0
    shortest = norm_factor(max(1, min_len or 1), avglen)
    terms = []
    for lexeme, df, df_text, df_both in found:
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        in_text = df_text > 0
        in_context = df_text < df or df_both > 0
        tf = 1 + CONTEXT_WEIGHT if df_both > 0 else (1.0 if in_text else CONTEXT_WEIGHT)
        bound = idf * tf * (K1 + 1) / (tf + shortest) * (1 + _SLACK)
        terms.append(Term(lexeme, df, idf, in_text, in_context, bound, tf))
    terms.sort(key=lambda t: (-t.bound, t.lexeme))
    return terms, avglen


def in_statement_order(terms: Sequence[Term]) -> list[Term]:
    """The terms in the order the scoring statement adds them up (grouped by kind, so the
    statement's text depends on how many of each kind there are, not on their order: fewer
    prepared statements)."""
    return sorted(terms, key=lambda t: (not t.in_text, not t.in_context))


def score_expression(terms: Sequence[Term], avglen: float) -> tuple[str, list[object]]:
    """A row's score over `f.tsv` and `f.len`, and its parameters from $4 on ($1 namespace,
    $2 the array of AND-queries a row must match one of, $3 limit). `contribution` computes
    each of its parts in Python to the last bit: keep the two in step."""
    # Everything float8 (a numeric literal times an integer would be numeric arithmetic).
    norm = f"{K1 * (1 - B)!r}::float8 + f.len * $4::float8"
    both = 1 + CONTEXT_WEIGHT
    params: list[object] = [K1 * B / avglen]
    parts = []
    for t in in_statement_order(terms):
        params.append(t.idf)
        w = f"${len(params) + 3}::float8"
        text_only = f"{w} * {K1 + 1} / (1 + {norm})"
        ctx_only = f"{w} * {CONTEXT_WEIGHT * (K1 + 1)} / ({CONTEXT_WEIGHT} + {norm})"
        with_ctx = f"{w} * {both * (K1 + 1)} / ({both} + {norm})"
        if t.in_text:
            params.append(quote(t.lexeme, "A"))
            a = f"${len(params) + 3}::tsquery"
        if t.in_context:
            params.append(quote(t.lexeme, "D"))
            d = f"${len(params) + 3}::tsquery"
        if t.in_text and t.in_context:
            parts.append(f"CASE WHEN f.tsv @@ {a} THEN CASE WHEN f.tsv @@ {d} THEN {with_ctx} "
                         f"ELSE {text_only} END WHEN f.tsv @@ {d} THEN {ctx_only} ELSE 0 END")
        elif t.in_text:
            parts.append(f"CASE WHEN f.tsv @@ {a} THEN {text_only} ELSE 0 END")
        else:
            parts.append(f"CASE WHEN f.tsv @@ {d} THEN {ctx_only} ELSE 0 END")
    return " + ".join(parts), params


def contribution(t: Term, length: int, per_len: float) -> float:
    """The most `t` adds to the score of a row of `length` lexemes, as `score_expression`
    computes it (same float8 operations in the same order, so the same bits: a row's
    score is the sum of its parts in statement order, and no row of that length holding
    `t` gets more from it). `per_len` is the statement's $4, K1 * B / avglen."""
    both = 1 + CONTEXT_WEIGHT
    norm_tail = length * per_len  # "c + f.len * $4" after "1 + ": ((1 + c) + len * $4)
    c = K1 * (1 - B)
    options = []
    if t.in_text:
        options.append(t.idf * (K1 + 1) / ((1 + c) + norm_tail))
    if t.in_context:
        options.append(t.idf * (CONTEXT_WEIGHT * (K1 + 1)) / ((CONTEXT_WEIGHT + c) + norm_tail))
    if t.in_text and t.in_context:
        options.append(t.idf * (both * (K1 + 1)) / ((both + c) + norm_tail))
    return max(options)


def set_query(terms: Sequence[Term], held: Sequence[int], scope: Sequence[str] = ()) -> str:
    """The AND-query of one word set (indexes into `terms`), after the namespace's token when
    the scan must stay in the namespace (`scope`)."""
    return " & ".join([*scope, *(quote(terms[i].lexeme) for i in held)])


def scoring_statement(terms: Sequence[Term], avglen: float) -> tuple[str, list[object]]:
    """The scoring statement and its parameters from $4 on ($1 namespace, $2 the array of
    AND-queries a row must match one of, $3 limit)."""
    expr, params = score_expression(terms, avglen)
    sql = f"""SELECT id, score FROM (
                  SELECT f.id, f.created_at, f.seq, {expr} AS score
                    FROM fulltext f
                   WHERE f.namespace = $1 AND f.tsv @@ ANY ($2::tsquery[])) AS s
               ORDER BY score DESC, created_at DESC, seq DESC LIMIT $3"""
    return sql, params


def scope(stats: asyncpg.Record) -> str | None:
    """The namespace token to AND into GIN scans, or None when the other namespaces hold few
    rows (live rows of the table, from the statistics counters; 0 when unknown): the scan
    then fetches at most those extra rows, and the intersection with a token every row of a
    big namespace holds cost ~15% of a search at 100k."""
    rows, mine = int(stats["rows"] or 0), int(stats["ft_docs"] or 0)
    if 0 < rows and rows - mine <= max(UNSCOPED_MAX_OTHERS, mine // 10):
        return None
    return stats["scope"]


async def _prepare(con: asyncpg.Connection, namespace: str, terms: Sequence[str], limit: int,
                   empty: dict | None = None) -> tuple[_Scoring, list, int] | None:
    """The query's statistics read and weighed: (scoring, weighed lexemes, documents in the
    namespace), or None when no term is indexed."""
    stats = await con.fetch(_STATS, namespace, list(terms))
    if not stats:
        return None
    first = stats[0]
    docs = int(first["ft_docs"] or 0)
    weighed, avglen = weigh(
        [(r["lexeme"], int(r["df"]), int(r["df_text"]), int(r["df_both"])) for r in stats],
        docs, int(first["ft_len"] or 0), first["ft_min_len"])
    if not weighed:
        return None
    scoring = _Scoring(con, namespace, scope(first), weighed, avglen, limit, docs,
                       int(first["ft_min_len"] or 1), first["version"], empty)
    return scoring, weighed, docs


class FullText:
    """Keyword search on one pool. `plans` counts how searches were answered (tests and
    benchmarks read it)."""

    def __init__(self) -> None:
        self.plans: Counter[str] = Counter()
        #: (namespace, version, GIN query) of the length-bounded scans found empty (ties.py):
        #: the same word sets come back across queries ("Who is working on Project X" for
        #: every X), and a namespace's version changes with every write to it.
        self.empty_scans: dict[tuple[str, int, str], None] = {}

    async def search(self, pool: asyncpg.Pool, namespace: str, terms: Sequence[str],
                     limit: int, plain: bool = False) -> list[ScoredId]:
        """The top `limit` rows for `terms` (already folded). `plain` scores every matching
        row, without levels: the reference the levels must equal (tests, benchmarks)."""
        async with pool.acquire() as con, con.transaction(isolation="repeatable_read",
                                                          readonly=True):
            # One snapshot: the statistics, the first and the second query agree.
            prepared = await _prepare(con, namespace, terms, limit, self.empty_scans)
            if prepared is None:
                return []
            scoring, weighed, docs = prepared
            if plain:
                return await scoring.run(0.0)
            return await self._ranked(scoring, weighed, limit, docs)

    async def near_duplicates(self, pool: asyncpg.Pool, namespace: str, terms: Sequence[str],
                              max_missing: int, limit: int) -> list[ScoredId]:
        """The top `limit` rows, ranked for all `terms`, among those holding one of the
        `max_missing + 1` rarest lexemes: a row lacking at most `max_missing` of them holds
        one (the worker's near-duplicate check; it never scores a row for a common word)."""
        async with pool.acquire() as con, con.transaction(isolation="repeatable_read",
                                                          readonly=True):
            prepared = await _prepare(con, namespace, terms, limit)
            if prepared is None:
                return []
            scoring, weighed, _ = prepared
            rarest = sorted(range(len(weighed)), key=lambda i: (weighed[i].df, i))
            self.plans["near duplicates"] += 1
            return await scoring.run_sets([[i] for i in rarest[:max(0, max_missing) + 1]])

    async def _ranked(self, scoring: _Scoring, terms: list[Term], limit: int,
                      docs: int) -> list[ScoredId]:
        if len(terms) > 1 and sum(t.df for t in terms) > max(PLAIN_MAX_ROWS, 2 * limit):
            found, plan = await by_levels(terms, docs, limit, scoring.run)
            if found is not None:
                self.plans[plan + (", newest first" if scoring.newest_first_runs else "")
                           + (", read deeper" if scoring.read_deeper else "")
                           + "".join(f", declined: {why}" for why in scoring.declined)] += 1
                return found
        self.plans["plain"] += 1
        return await scoring.run(0.0)


class _Scoring:
    def __init__(self, con: asyncpg.Connection, namespace: str, scope: str | None,
                 terms: list[Term], avglen: float, limit: int, docs: int = 0,
                 min_len: int = 1, version: int | None = None, empty: dict | None = None):
        self.con = con
        self.namespace = namespace
        # The namespace's token, ANDed to every set: GIN scans stay in the namespace.
        self.scope_token = [scope] if scope is not None else []
        self.scope = [quote(x) for x in self.scope_token]
        self.terms = terms
        self.limit = limit
        self.docs = docs
        self.min_len = min_len
        self.avglen = avglen
        self.sql, self.params = scoring_statement(terms, avglen)
        #: Levels answered by reading their rows newest first (ties.py), and why others
        #: were not.
        self.newest_first_runs = 0
        self.declined: list[str | None] = []
        self.read_deeper = 0  # ... of which step 1 read deeper than SCAN_ROWS
        self.version = version  # the namespace's, in this snapshot
        self.empty = empty  # FullText.empty_scans (None: no cache)

    async def run(self, level: float) -> list[ScoredId]:
        sets = minimal_sets(self.terms, level)
        from . import ties  # (ties imports this module)
        rows = ties.estimate(self.terms, sets)
        if (NEWEST_FIRST and self.docs >= ties.MIN_ROWS and rows >= ties.TIES_MIN_ROWS
                and ties.fills_prefix(rows, self.docs, self.limit)):
            newest = ties.NewestFirst(self.terms, self.avglen, self.min_len, self.limit,
                                      self.docs)
            found = await newest.run(
                self.con, self.namespace, self.scope_token, sets,
                self.empty if self.version is not None else None, self.version)
            self.read_deeper += newest.depth > ties.SCAN_ROWS
            if found is not None:
                self.newest_first_runs += 1
                return found
            self.declined.append(newest.declined)
        return await self.run_sets(sets)

    async def run_sets(self, sets: list[list[int]]) -> list[ScoredId]:
        """The top rows among those holding one of `sets` (indexes into `terms`)."""
        queries = [set_query(self.terms, s, self.scope) for s in sets]
        rows = await self.con.fetch(self.sql, self.namespace, queries, self.limit, *self.params)
        return [ScoredId(id=r["id"], score=float(r["score"])) for r in rows]
