"""Full-text search over the FTS5 index (`memories_fts`, see schema.py).

The index holds active rows only. Its words are prefixed with the namespace's number
(fts_terms.py, schema.py migration 16), so a query's terms are the namespace's own: FTS5 never
reads, counts or scores other tenants' postings, and a small tenant's search costs what its
own rows cost, whatever the file holds. Terms are quoted (see `fts_terms.quote_terms`), so no
input can reach the FTS5 query syntax.

Statistics are the namespace's own. A term's document frequency is, since its doclist is.
bm25() takes the row count and average length from the whole table, so it is used as is only
when the namespace is the whole index (`search`: one tenant per file, the 1M-row case); a
namespace sharing the file is scored per term with its own row count and average length
(`_per_term`), which gives exactly what bm25() gives it in a file of its own. (Before
migration 16 all three statistics were the file's, so tenants moved each other's rankings.)
The near-duplicate search (a candidate finder for the worker) uses bm25() as is.

Scores are FTS5's bm25() without length normalisation (the index has no per-row sizes,
schema.py migration 4): a term's weight is its IDF, saturated by how often it occurs, with the
session context column at CONTEXT_WEIGHT. Rows holding the same terms tie and the newer one goes
first.

Speed: FTS5's bm25() scores every row that matches any query term before it sorts (~0.2 us
a row), and first walks each term's whole doclist for its IDF: "project", in 43% of a 1M-row
namespace, cost ~11 ms that way alone, the plain query over it ~70 ms. A large namespace alone
in its file is therefore searched by levels (kit.levels, fts_levels.py): term counts are read
once per data version from FTS5's vocabulary, only the rows that can reach a level are read
(a MATCH of conjunctions, no bm25()), newest first where thousands tie, and scored in Python
from their text exactly as bm25() scores them (fts_rescore.py). Same rows, order and scores
as the plain query (tests compare them); at 1M rows a search reads ~100-500 rows instead of
scoring ~100k (bench/RESULTS.md). When no level pays, the plain query runs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from recall_core import ScoredId

from .codec import fts_match
from .connection import Database
from .fts_levels import LevelSearch, Query
from .fts_rescore import CONTEXT_WEIGHT, K1, Stems, saturation
from .fts_terms import quote_terms

#: Below this many active memories a search uses every term as given.
COMMON_TERM_MIN_ROWS = 2000
#: From this many rows of a namespace alone in its file, the level search (fts_levels.py);
#: below, the plain query. Measured on bench/speed.py's corpus, 200 queries, in process
#: (`bench/tenants.py one --compare`): at 10k rows the plain query is ~3x faster (p50 0.54
#: against 1.64 ms); at 100k the level search is faster on average (mean 3.0 against 4.1 ms,
#: p95 6.6 against 9.8; p50 2.8 against 2.3); at 1M ~4x (4.5 against 20 ms).
LEVELS_MIN_ROWS = 100_000
# The namespace's number in the index (NULL: it never had a searchable row), its indexed rows
# and tokens, FTS5's own record of the index's rows and tokens (bm25() reads the same), and
# the data version (bumped by every write that changes memories, in any process).
_AVERAGES = "(SELECT block FROM memories_fts_data WHERE id = 1)"
_SIZES = ("SELECT f.id, coalesce(f.docs, 0), coalesce(f.tokens, 0), " + _AVERAGES + ", "
          "(SELECT value FROM version_counter WHERE id = 1) "
          "FROM (SELECT 1) LEFT JOIN fts_namespaces AS f ON f.namespace = ?")
#: FTS5's vocabulary of memories_fts, one row per stored token: rows holding it and its
#: instances (connection.py creates it in each connection's temp schema).
VOCABULARY = "temp.memories_fts_rows"
#: FTS5's instance vocabulary (term, doc, col, offset), created with VOCABULARY.
INSTANCES = "temp.memories_fts_instances"
#: A term with at most this many instances beyond one per row has its repeating rows listed
#: (one walk of its instances, ~0.4 us each, per data version) for fts_levels.py.
REPEATS_MAX = 5000
#: Up to this many rows, a namespace sharing the file gets its rows' ids in the same
#: statement as their scores (`_per_term`).
IDS_INLINE_MAX_ROWS = 5000
#: Term counts kept between searches (until the data version changes).
HITS_CACHE_SIZE = 20_000



def averages(block: bytes | None) -> tuple[int, int]:
    """(rows, tokens in all columns) from FTS5's averages record (memories_fts_data id 1: a
    varint of the row count, then one per column of its tokens), as bm25() reads them."""
    values: list[int] = []
    i, data = 0, block or b""
    while i < len(data):
        value = 0
        for j in range(9):  # SQLite varint: 7 bits a byte, big-endian; the 9th byte whole
            byte = data[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return (values[0], sum(values[1:])) if values else (0, 0)


def idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a term in `hits` of `rows` rows, clamped as FTS5 clamps it."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else 1e-6


class FullText:
    def __init__(self, db: Database):
        self.db = db
        # (namespace number, term) -> rows matching; valid for one data version. Counting "project" in
        # 42% of 100k rows costs 2.4 ms, and the same words come back query after query.
        self._hit_cache: dict[tuple[int, str], int] = {}
        self._hit_version: int | None = None
        # The same counts, kept across writes, for choosing near-duplicate candidates (where
        # a stale count costs speed, never correctness).
        self._loose_hits: dict[tuple[int, str], int] = {}
        #: FTS5 tokens of index tokens (fts_rescore.py), kept across searches.
        self._stems = Stems()
        self._levels = LevelSearch(db, self._stems)
        #: Levels (kit.levels) for a large namespace alone in its file; False: always the
        #: plain query (benchmarks compare the two).
        self.levels = True
        #: How each search was answered (single / plain / level ... / per term); tests and
        #: benchmarks read it.
        self.plans: Counter[str] = Counter()

    async def search(self, namespace: str, terms: Sequence[str], limit: int) -> list[ScoredId]:
        if limit <= 0:
            return []
        code, mine, tokens, rows, index_tokens = await self._sizes(namespace)
        quoted = quote_terms(code, terms) if code is not None and mine > 0 else []
        if not quoted:
            return []
        if mine != rows:
            # Other namespaces share the index: bm25()'s row count and average length would
            # be the file's, so the namespace's own statistics are applied per term.
            self.plans["per term"] += 1
            return await self._per_term(namespace, quoted, mine, tokens, limit)
        if len(quoted) > 1 and mine >= COMMON_TERM_MIN_ROWS:
            levels = self.levels and mine >= LEVELS_MIN_ROWS
            counts = await self._counts(code, quoted, repeats=levels)
            version = self._hit_version
            kept = _informative(quoted, [n for n, _, _ in counts], rows)[0]
            if levels:
                counts = [counts[quoted.index(t)] for t in kept]
                found, plan = await self._levels.search(Query(
                    namespace, code, kept, [n for n, _, _ in counts], [e for _, e, _ in counts],
                    [r for _, _, r in counts], rows, index_tokens / rows, version,
                    [idf(rows, n) for n, _, _ in counts]), limit)
                self.plans[plan] += 1
                if found is not None:
                    return found
            else:
                self.plans["plain"] += 1
            quoted = kept
        else:
            self.plans["single"] += 1
        return await self._ranked(namespace, quoted, None, limit)

    async def _sizes(self, namespace: str) -> tuple[int | None, int, int, int, int]:
        """(the namespace's number in the index, its indexed rows and tokens, the rows and
        tokens in the whole index as bm25() reads them); drops the cached term counts when
        the data changed."""
        code, mine, tokens, block, version = await self.db.fetch_one(_SIZES, (namespace,))
        if version != self._hit_version or len(self._hit_cache) > HITS_CACHE_SIZE:
            self._hit_cache, self._hit_version = {}, version
        return code, int(mine), int(tokens), *averages(block)

    async def _per_term(self, namespace: str, quoted: list[str], docs: int, tokens: int,
                        limit: int) -> list[ScoredId]:
        """BM25 with the namespace's own statistics, in a file other namespaces share.

        One statement runs a single-term query per term (each walks only the namespace's
        doclist of that term: the terms carry its prefix) and reads FTS5's averages in the
        same snapshot. From each row's single-term bm25() and the IDF and saturation FTS5
        used, the term's weighted frequency in the row is recovered exactly (it is a sum of
        1.0s for the text and CONTEXT_WEIGHTs for the context); the row's score is then what
        bm25() would give it in an index holding the namespace alone: the same formula, the
        same order of terms, with the namespace's row count and average length. Costs what
        the namespace's own rows holding the terms cost, whatever the file holds.
        """
        # A small namespace's rows come with their ids (one round trip less); a large one's
        # ids are looked up for the top rows only.
        with_ids = docs <= IDS_INLINE_MAX_ROWS
        row = ("SELECT {i}, h.rowid, h.s, m.id FROM (SELECT rowid, bm25(memories_fts, 1.0, 0.0, "
               f"{CONTEXT_WEIGHT}, 0.0) AS s FROM memories_fts WHERE memories_fts MATCH ?) AS h "
               # CROSS JOIN keeps the full-text side outside: the other way round, SQLite
               # ran the MATCH (and bm25()'s doclist walk) once per memory of the namespace.
               "CROSS JOIN memories AS m ON m.seq = h.rowid AND m.namespace = ? "
               "AND m.valid_until IS NULL"
               if with_ids else
               f"SELECT {{i}}, rowid, bm25(memories_fts, 1.0, 0.0, {CONTEXT_WEIGHT}, 0.0), NULL "
               "FROM memories_fts WHERE memories_fts MATCH ?")
        sql = " UNION ALL ".join([f"SELECT -1, 0, 0.0, {_AVERAGES}"] +
                                 [row.format(i=i) for i in range(len(quoted))])
        params: list[object] = []
        for t in quoted:
            params += [fts_match([t]), namespace] if with_ids else [fts_match([t])]
        found = await self.db.fetch(sql, params)
        index_rows, index_tokens = averages(found[0][3])
        per_term: list[list[tuple[int, float]]] = [[] for _ in quoted]
        ids: dict[int, str] = {}
        for i, rowid, score, memory_id in found[1:]:
            per_term[i].append((rowid, -score))
            if memory_id is not None:
                ids[rowid] = memory_id
        hits = [len(rows) for rows in per_term]
        kept = list(range(len(quoted)))
        if len(quoted) > 1 and docs >= COMMON_TERM_MIN_ROWS:  # as the single-namespace path
            kept = [quoted.index(t) for t in _informative(quoted, hits, docs)[0]]
        file_k = saturation(index_tokens / index_rows) if index_rows else 0.0
        own_k = saturation(tokens / docs)
        scores: dict[int, float] = {}
        for i in kept:
            file_idf, own_idf = idf(index_rows, hits[i]), idf(docs, hits[i])
            for rowid, score in per_term[i]:
                g = score / file_idf
                freq = round(g * file_k / (K1 + 1 - g) * 5) / 5  # a + 0.4 b, a and b whole
                scores[rowid] = scores.get(rowid, 0.0) + own_idf * (
                    (freq * (K1 + 1)) / (freq + own_k))
        top = sorted(scores.items(), key=lambda r: (-r[1], -r[0]))[:limit]
        if not top or with_ids:
            return [ScoredId(id=ids[r], score=s) for r, s in top if r in ids]
        ids = dict(await self.db.fetch(
            f"SELECT seq, id FROM memories WHERE seq IN ({', '.join('?' * len(top))}) "
            "AND namespace = ? AND valid_until IS NULL", [r for r, _ in top] + [namespace]))
        return [ScoredId(id=ids[r], score=s) for r, s in top if r in ids]

    async def near_duplicates(self, namespace: str, terms: Sequence[str], max_missing: int,
                              limit: int) -> list[ScoredId]:
        """See recall_core.contracts.storage.NearDuplicateSearch: only rows holding one of the
        `max_missing + 1` rarest terms are scored (by every term; the rare ones count twice,
        which suits a search for rows holding them all)."""
        if limit <= 0:
            return []
        code, mine, _, _, _ = await self._sizes(namespace)
        quoted = quote_terms(code, terms) if code is not None and mine > 0 else []
        if not quoted:
            return []
        if len(quoted) <= max_missing + 1 or mine < COMMON_TERM_MIN_ROWS:
            return await self._ranked(namespace, quoted, None, limit)
        # Any max_missing + 1 terms would be correct (a near-duplicate holds one of them); the
        # rarest are merely the cheapest, so counts of an older data version serve too.
        unknown = [t for t in quoted if (code, t) not in self._loose_hits]
        if unknown:
            if len(self._loose_hits) > HITS_CACHE_SIZE:
                self._loose_hits = {}
            self._loose_hits.update(zip(((code, t) for t in unknown),
                                        await self._hits(code, unknown)))
        rarest = sorted(quoted, key=lambda t: self._loose_hits[(code, t)])[:max_missing + 1]
        self.plans["near-duplicates"] += 1
        return await self._ranked(namespace, rarest, quoted, limit)

    async def _ranked(self, namespace: str, terms: list[str], also: list[str] | None,
                      limit: int) -> list[ScoredId]:
        return _scored(await self._rows(namespace, terms, also, limit))

    async def _rows(self, namespace: str, terms: list[str], also: list[str] | None,
                    limit: int) -> list[Row]:
        # Ranked inside FTS5 (active rows of the namespace only: the terms carry its prefix;
        # the ns and pad columns weighted 0), then only the top rowids are joined, which
        # re-checks namespace and activity (defence in depth: they always hold).
        # bm25() is lower-is-better, so it is negated into higher-is-better. Scores ignore
        # length (schema.py, migration 4), so rows holding the same terms tie: the newer row
        # (higher rowid) goes first, in every query alike (fts_levels.py orders ties the same).
        rows = await self.db.fetch(
            "SELECT m.id, -hit.rank, hit.rowid FROM ("
            f" SELECT rowid, bm25(memories_fts, 1.0, 0.0, {CONTEXT_WEIGHT}, 0.0) AS rank"
            f" FROM memories_fts WHERE memories_fts MATCH ?"
            f" ORDER BY rank, rowid DESC LIMIT ?) AS hit "
            "JOIN memories AS m ON m.seq = hit.rowid "
            "WHERE m.namespace = ? AND m.valid_until IS NULL ORDER BY hit.rank, hit.rowid DESC "
            "LIMIT ?",
            (fts_match(terms, also), limit, namespace, limit))
        return [(r[0], float(r[1]), r[2]) for r in rows]

    async def _hits(self, code: int, quoted: list[str]) -> list[int]:
        return [n for n, _, _ in await self._counts(code, quoted, repeats=False)]

    async def _counts(self, code: int, quoted: list[str], repeats: bool = True
                      ) -> list[tuple[int, int | None, tuple[int, ...] | None]]:
        """For each term, how many of the namespace's rows hold it, how many instances they
        hold beyond one each (None for a phrase of several tokens) and, with `repeats` and
        when those are few, which rows hold it more than once (else None: only the level
        search reads them, and listing them walks the term's instances). A one-token term
        is read from FTS5's vocabulary (`VOCABULARY`: rows and instances, one doclist walk,
        ~0.03 us a row), a phrase is counted by a MATCH (its rows only); bm25() takes the
        same counts for its IDF. Kept per data version."""
        missing = [t for t in quoted if (code, t) not in self._hit_cache]
        if missing:
            tokens = self._stems.of(p for t in missing for p in t.strip('"').split(" "))
            parts, params = [], []
            for t in missing:
                stored = [x for p in t.strip('"').split(" ") for x in tokens[p]]
                if len(stored) == 1:
                    parts.append(f"(SELECT doc || ' ' || cnt FROM {VOCABULARY} WHERE term = ?)")
                    params.append(stored[0])
                else:
                    parts.append("(SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?)")
                    params.append(fts_match([t]))
            *counts, version = (await self.db.fetch(
                "SELECT " + ", ".join(parts) +
                ", (SELECT value FROM version_counter WHERE id = 1)", params))[0]
            if version != self._hit_version:
                # Written since `_sizes`: these counts are of a newer snapshot than the
                # cached ones. Answer with both, but keep no version the level search could
                # take them for (it then declines) and the next `_sizes` drops them all.
                # (Dropping them here lost the cached terms of this very search.)
                self._hit_version = None
            for t, n in zip(missing, counts):
                if isinstance(n, str):  # "rows instances" from the vocabulary
                    docs, instances = map(int, n.split())
                    self._hit_cache[(code, t)] = (docs, instances - docs,
                                                  () if instances == docs else None)
                elif n is None:  # a token the vocabulary lacks: no row holds it
                    self._hit_cache[(code, t)] = (0, 0, ())
                else:  # a phrase's count: how often a row holds it is unknown
                    self._hit_cache[(code, t)] = (int(n), None, None)
        if repeats:
            for t in quoted:
                docs, extra, listed = self._hit_cache[(code, t)]
                if listed is None and extra is not None and extra <= REPEATS_MAX:
                    # (extra is known only for a one-token term: its stored token)
                    [stored] = self._stems.of([t.strip('"')])[t.strip('"')]
                    # The few rows holding it more than once (fts_levels.py scores them
                    # apart): one walk of its instances.
                    found = await self.db.fetch(
                        f"SELECT -1 UNION ALL SELECT * FROM (SELECT doc FROM {INSTANCES} "
                        "WHERE term = ? GROUP BY doc HAVING count(*) > 1) UNION ALL "
                        "SELECT (SELECT value FROM version_counter WHERE id = 1)",
                        (stored,))
                    if found[-1][0] != self._hit_version:
                        self._hit_version = None  # as above
                    self._hit_cache[(code, t)] = (docs, extra, tuple(r[0] for r in found[1:-1]))
        return [self._hit_cache[(code, t)] for t in quoted]


#: (memory id, score, rowid) of one full-text hit.
Row = tuple[str, float, int]


def _scored(rows: Sequence[Row]) -> list[ScoredId]:
    return [ScoredId(id=r[0], score=r[1]) for r in rows]


def _informative(quoted: list[str], hits: list[int], rows: int) -> tuple[list[str], list[int]]:
    """Drop terms found in at least half of all rows: FTS5 clamps their IDF to 1e-6, so they
    cannot move the ranking, yet bm25() would score every row holding them (one "the"
    made a query over 100k rows cost ~100 ms). The rarest term is always kept."""
    kept = [(t, n) for t, n in zip(quoted, hits) if 2 * n < rows]
    if not kept:
        kept = [min(zip(quoted, hits), key=lambda p: p[1])]
    return [t for t, _ in kept], [n for _, n in kept]
