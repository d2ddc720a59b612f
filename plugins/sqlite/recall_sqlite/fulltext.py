"""Full-text search over the FTS5 index (`memories_fts`, see schema.py).

The index holds active rows only, one `text` column and one `ns` column with a token per
namespace, so a MATCH is scoped to the namespace by FTS5 itself and never scores other
tenants' rows. Terms are quoted (see `codec.quote_terms`), so no input can reach the FTS5
query syntax.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from recall_core.models import ScoredId

from .codec import fts_match, quote_terms
from .connection import Database

#: Below this many active memories a search uses every term as given.
COMMON_TERM_MIN_ROWS = 2000
#: When the other namespaces hold at most this many active memories together (one tenant, or
#: nearly), the MATCH leaves out the namespace token and over-fetches by that many rows
#: instead: the token makes FTS5 walk the namespace's whole doclist to compute its IDF, which
#: costs ~5 ms per query at 100k rows even for a rare term.
UNSCOPED_MAX_OTHERS = 2000
# Active memories outside `?`, unless there are many namespaces (then: scope the MATCH).
_OTHERS = ("SELECT count(*), coalesce(sum(n), 0) FROM (SELECT n FROM active_counts "
           "WHERE namespace <> ? AND n > 0 LIMIT 64)")


# Weight of the session context column (the previous turn) against the memory's own text.
CONTEXT_WEIGHT = 0.4


class FullText:
    def __init__(self, db: Database, count_active: Callable[[str], Awaitable[int]]):
        self.db = db
        self._count = count_active

    async def search(self, namespace: str, terms: Sequence[str], limit: int) -> list[ScoredId]:
        quoted = quote_terms(terms)
        if not quoted or limit <= 0:
            return []
        groups, others = await self.db.fetch_one(_OTHERS, (namespace,))
        scope: str | None = namespace
        if groups < 64 and others <= UNSCOPED_MAX_OTHERS:
            scope = None
        if len(quoted) > 1:
            quoted = await self._informative_terms(namespace, scope, quoted)
        # Ranked inside FTS5 (active rows only; the ns column weighted 0), then only the top
        # rowids are joined, re-checking namespace and activity. Unscoped, the inner LIMIT
        # grows by every active row of other namespaces (read in the same statement, so the
        # same snapshot): even if all of them outrank ours, `limit` of ours remain.
        # bm25() is lower-is-better, so it is negated into higher-is-better.
        if scope is None:
            inner_limit = "? + (SELECT coalesce(sum(n), 0) FROM active_counts WHERE namespace <> ?)"
            limit_params: tuple[object, ...] = (limit, namespace)
        else:
            inner_limit, limit_params = "?", (limit,)
        rows = await self.db.fetch(
            "SELECT m.id, hit.rank FROM ("
            f" SELECT rowid, bm25(memories_fts, 1.0, 0.0, {CONTEXT_WEIGHT}) AS rank FROM memories_fts"
            f" WHERE memories_fts MATCH ? ORDER BY rank LIMIT {inner_limit}) AS hit "
            "JOIN memories AS m ON m.seq = hit.rowid "
            "WHERE m.namespace = ? AND m.valid_until IS NULL ORDER BY hit.rank LIMIT ?",
            (fts_match(scope, quoted), *limit_params, namespace, limit))
        return [ScoredId(id=r[0], score=-float(r[1])) for r in rows]

    async def _informative_terms(self, namespace: str, scope: str | None,
                                 quoted: list[str]) -> list[str]:
        """Drop terms found in more than half of a large namespace's memories.

        bm25() must score every row that matches any term, so one word like "the" makes a
        query over 100k rows cost ~100 ms. Such a term has an IDF of about zero in BM25
        (FTS5 clamps it to 1e-6), so it barely moves the ranking; without it the query costs
        what the informative terms cost. The rarest term is always kept.
        """
        total = await self._count(namespace)
        if total < COMMON_TERM_MIN_ROWS:
            return quoted
        half = total // 2
        counts = (await self.db.fetch(
            "SELECT " + ", ".join(
                "(SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? "
                "LIMIT ?))" for _ in quoted),
            [p for term in quoted for p in (fts_match(scope, [term]), half + 1)]))[0]
        kept = [term for term, n in zip(quoted, counts) if n <= half]
        return kept or [min(zip(counts, quoted))[1]]
