"""FTS5's bm25() of a few rows, computed from their text: the level search's scorer.

Why not bm25() itself on the rows a level selects (fulltext.py, kit.levels)? Two reasons.
bm25() sums over the *phrases of the MATCH expression*, so a level's expression, an OR of
conjunctions that repeat terms (`"a" AND "b" OR "a" AND "c"`), would count "a" twice. And
bm25() walks every phrase's whole doclist for its IDF at each query: "project", in 43% of a
1M-row namespace, costs ~11 ms that way before any row is scored. Here the IDFs come from
term counts the caller keeps per data version, and each candidate's term frequencies from
its own text, tokenized by FTS5's own tokenizer (an in-memory FTS5 table with the index's
`tokenize` option, read through fts5vocab): the same tokens the index holds, so the same
frequencies, then bm25()'s formula with its operations in its order (fts5_aux.c:
fts5Bm25Function), so the score is bit for bit bm25()'s.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from recall_core.kit.text import fold

from .fts_terms import _TOKEN, prefix

#: The tokenizer of memories_fts (schema.py, migrations 4 and 16); a test checks the
#: live table's definition holds it.
TOKENIZE = "porter unicode61 remove_diacritics 2"
#: Stems kept (index tokens -> FTS5 tokens); beyond it the cache starts over.
STEMS_CACHE_SIZE = 200_000
#: Texts whose words are kept (a few MB); beyond it the cache starts over.
WORDS_CACHE_SIZE = 20_000
#: Weight of the session context column (the previous turn) against the memory's own text.
CONTEXT_WEIGHT = 0.4
#: Columns of memories_fts; with columnsize=0 FTS5 takes every row to be -1 token per column.
COLUMNS = 4
# FTS5's bm25() constants (fts5_aux.c); a term adds at most idf * (K1 + 1) to a row's score
# (the pad column keeps the saturation term positive, schema.py).
K1 = 1.2
B = 0.75


def saturation(avgdl: float) -> float:
    """bm25()'s k1 * (1 - b + b * D / avgdl), with D = -COLUMNS (see COLUMNS), computed as
    fts5_aux.c computes it."""
    return K1 * (1 - B + B * float(-COLUMNS) / avgdl)


class Stems:
    """Index tokens (`<namespace prefix><word>`) -> the tokens FTS5 stores for them, cached.
    FTS5 tokenizes token by token, so a row's stored tokens are its pieces' stems in order."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(f"CREATE VIRTUAL TABLE s USING fts5(x, tokenize='{TOKENIZE}')")
        self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
        self._cache: dict[str, tuple[str, ...]] = {}
        # Texts -> their index words (folded, split as fts_terms splits them). The level
        # search reads the same rows query after query (the newest of a tie, a rare word's
        # rows): splitting was a third of its Python time.
        self._words: dict[str, list[str]] = {}

    def words(self, text: str | None) -> list[str]:
        if not text:
            return []
        found = self._words.get(text)
        if found is None:
            if len(self._words) >= WORDS_CACHE_SIZE:
                self._words.clear()
            found = self._words[text] = _TOKEN.findall(fold(text))
        return found

    def of(self, tokens: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """The cache, holding every one of `tokens`."""
        cache = self._cache
        missing = list(dict.fromkeys(t for t in tokens if t not in cache))
        if missing:
            if len(cache) + len(missing) > STEMS_CACHE_SIZE:
                cache.clear()
            out: dict[int, list[str]] = {i: [] for i in range(len(missing))}
            with self._db:
                self._db.executemany("INSERT INTO s (rowid, x) VALUES (?, ?)",
                                     enumerate(missing))
                for doc, term in self._db.execute(
                        "SELECT doc, term FROM v ORDER BY doc, offset"):
                    out[doc].append(term)
                self._db.execute("DELETE FROM s")
            cache.update((missing[i], tuple(terms)) for i, terms in out.items())
        return cache


class Scorer:
    """bm25(memories_fts, 1.0, 0.0, CONTEXT_WEIGHT, 0.0) of rows of one namespace for one
    query, from the rows' text and context."""

    def __init__(self, stems: Stems, code: int, quoted: Sequence[str], idfs: Sequence[float],
                 avgdl: float, context_weight: float = CONTEXT_WEIGHT):
        self._stems = stems
        self._prefix = prefix(code)
        # Each quoted phrase (fts_terms.quote_terms: '"<p>word <p>word"') as its stored tokens.
        pieces = [q.strip('"').split(" ") for q in quoted]
        known = stems.of(p for ps in pieces for p in ps)
        self.phrases = [tuple(s for p in ps for s in known[p]) for ps in pieces]
        self._idfs = list(idfs)
        self._context_weight = context_weight
        self._k = saturation(avgdl)
        # Single-token phrases (nearly every query): a row's word -> the phrases its stored
        # tokens are, per query, so most words cost one dict lookup.
        self._single = all(len(p) == 1 for p in self.phrases)
        self._which: dict[str, tuple[int, ...]] = {}

    @property
    def usable(self) -> bool:
        """False when a phrase has no token (FTS5 would treat it apart): use bm25()."""
        return all(self.phrases)

    def weight(self, i: int, freq: float | None) -> float:
        """What phrase `i` adds to a row where its weighted frequency is `freq` (None: the
        limit for a frequency without bound), as bm25() computes it."""
        idf = self._idfs[i]
        if freq is None:
            return idf * (K1 + 1.0)
        return idf * ((freq * (K1 + 1.0)) / (freq + self._k))

    def scores(self, rows: Sequence[tuple[str | None, str | None]]) -> list[float]:
        """bm25() of each (text, context)."""
        split = self._stems.words
        words = [(split(t), split(c)) for t, c in rows]
        p = self._prefix
        new = {w for a, b in words for w in (*a, *b) if w not in self._which}
        if new:
            known = self._stems.of(p + w for w in new)
            if self._single:
                at: dict[str, list[int]] = {}
                for i, ph in enumerate(self.phrases):  # two phrases may share a stem
                    at.setdefault(ph[0], []).append(i)
                for w in new:
                    self._which[w] = tuple(i for s in known[p + w] for i in at.get(s, ()))
            else:
                for w in new:
                    self._which[w] = known[p + w]
        return [self._score(a, b) for a, b in words]

    def _score(self, text: list[str], context: list[str]) -> float:
        n = len(self.phrases)
        if self._single:
            counts_t, counts_c = [0] * n, [0] * n
            which = self._which
            for w in text:
                for i in which[w]:
                    counts_t[i] += 1
            for w in context:
                for i in which[w]:
                    counts_c[i] += 1
        else:
            toks_t = [s for w in text for s in self._which[w]]
            toks_c = [s for w in context for s in self._which[w]]
            counts_t = [_occurrences(toks_t, ph) for ph in self.phrases]
            counts_c = [_occurrences(toks_c, ph) for ph in self.phrases]
        score = 0.0
        cw = self._context_weight
        for idf, a, c in zip(self._idfs, counts_t, counts_c):
            if not a and not c:
                continue
            # bm25() adds each instance's column weight in position order: the text column
            # comes before the context column (fts5_aux.c).
            f = 0.0
            for _ in range(a):
                f += 1.0
            for _ in range(c):
                f += cw
            score += idf * ((f * (K1 + 1.0)) / (f + self._k))
        return score


def _occurrences(tokens: list[str], phrase: tuple[str, ...]) -> int:
    n = len(phrase)
    return sum(1 for i in range(len(tokens) - n + 1) if tuple(tokens[i:i + n]) == phrase)
