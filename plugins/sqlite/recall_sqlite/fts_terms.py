"""Namespace-prefixed terms: what the full-text index (memories_fts, schema.py migration 16)
holds in its text and context columns, so that every term's doclist is one namespace's.

Before, one doclist per word spanned every tenant: FTS5 walks a query term's whole doclist
to count it for bm25()'s IDF, so a 100-row tenant's search cost grew with the file (bench/
RESULTS.md, "Full text per tenant"). Now each word is indexed as
`<prefix><word>`: the prefix names the namespace (its number in `fts_namespaces`), the word
still goes through FTS5's own `porter unicode61 remove_diacritics 2`, so stemming and folding
stay FTS5's and a query meets the same stems. Counting and scoring then read the tenant's
own postings only, and a term's document frequency is the namespace's.

The prefix is made of consonants (never a, e, i, o, u, w, x or y) ending in `z`: the porter
stemmer looks at vowels and at a stem's last letters, so a consonant prefix leaves its
decisions alone except for a few edge cases that apply alike to stored and query terms
(words under 3 letters get stemmed: "as" and "a" meet; a word starting with "y" reads it as
a vowel). The `z` makes (prefix, word) -> term injective.

The text is split here into the runs of letters and digits unicode61 would make tokens of
(after case folding and removing diacritics, which FTS5 would do anyway), so the number of
tokens per row, hence bm25()'s average length, is what it was. Triggers call
`recall_fts_terms(code, text)` and `recall_fts_count(text)` (per-namespace token totals for
the namespace's own average length, fulltext.py): every connection of this plugin registers
them; a writer without them (the sqlite3 shell) gets "no such function" instead of a wrong
index.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from recall_core.kit.text import fold

#: SQL names of the functions the triggers call.
FUNCTION = "recall_fts_terms"
COUNT = "recall_fts_count"
_DIGITS = "bcdfghjklmnpqrstv"
_END = "z"
_TOKEN = re.compile(r"[^\W_]+")


def prefix(code: int) -> str:
    """The term prefix of namespace number `code` (base 17 in consonants, then `z`)."""
    out = []
    while True:
        code, digit = divmod(code, len(_DIGITS))
        out.append(_DIGITS[digit])
        if code == 0:
            return "".join(reversed(out)) + _END


def index_text(code: int | None, text: str | None) -> str:
    """The text the index gets for a row of namespace `code`: each token prefixed."""
    if code is None or not text:
        return ""
    p = prefix(code)
    return " ".join(p + t for t in _TOKEN.findall(fold(text)))


def count_tokens(text: str | None) -> int:
    """How many tokens `index_text` gives `text` (fts_namespaces.tokens adds them up)."""
    return len(_TOKEN.findall(fold(text))) if text else 0


def quote_terms(code: int, terms: Sequence[str]) -> list[str]:
    """Each query term as a quoted FTS5 string of the namespace's prefixed tokens (a term
    the query folding left in several pieces becomes a phrase of them), empty ones and
    duplicates dropped. Inside double quotes FTS5 only tokenizes: no input can form query
    syntax (the pieces are letters and digits only)."""
    p = prefix(code)
    quoted = []
    for term in terms:
        pieces = _TOKEN.findall(fold(term))
        if pieces:
            quoted.append('"' + " ".join(p + t for t in pieces) + '"')
    return list(dict.fromkeys(quoted))


def register(conn: sqlite3.Connection) -> None:
    """Make the triggers' functions available on a plain sqlite3 connection (tests, tools)."""
    conn.create_function(FUNCTION, 2, index_text, deterministic=True)
    conn.create_function(COUNT, 1, count_tokens, deterministic=True)
