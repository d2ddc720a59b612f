"""Text normalisation shared by the BM25 ranker, MMR fallback and duplicate detection.

Queries are reduced to plain lowercase word tokens before they reach a storage's full-text
index, so FTS syntax characters, quotes and operators in user input can never form a query
expression. Stemming is left to the index (FTS5 porter, Postgres english); the in-process
fallback uses `stem()` below.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

# Short English stop-word list: function words that match almost every memory and carry no
# topic. Kept small on purpose: question words and negations are dropped, content words stay.
STOP_WORDS = frozenset("""
a an and are as at be been being but by can could did do does doing for from had has have
having he her hers him his how i if in into is it its itself just me my myself no nor not of
on or our ours she should so some such than that the their theirs them then there these they
this those to too was we were what when where which while who whom why will with would you
your yours yourself about after again all am any because before both during each few further
here more most other out over own same very s t don now ll re ve d m o y also yes yeah oh
""".split())


def fold(text: str) -> str:
    """Lowercase and strip diacritics so 'Café' and 'cafe' meet."""
    if text.isascii():  # nothing to strip; most text, and the per-character pass is slow
        return text.lower()
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """All word tokens, folded; possessive/contraction suffixes removed."""
    out = []
    for tok in _WORD.findall(fold(text)):
        if "'" in tok:
            tok = tok.split("'", 1)[0]
        if tok:
            out.append(tok)
    return out


def query_terms(text: str, max_terms: int = 32) -> list[str]:
    """Distinct content tokens of a query, in order. Falls back to all tokens when the
    query is made only of stop words (so "who am I" still searches something)."""
    toks = words(text)
    content = [t for t in toks if t not in STOP_WORDS]
    chosen = content or toks
    seen: dict[str, None] = {}
    for t in chosen:
        seen.setdefault(t, None)
    return list(seen)[:max_terms]


_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ingly", "ments", "ement", "ness",
             "ment", "ings", "edly", "ies", "ing", "ers", "est", "ed", "er", "ly", "es", "s")


@functools.lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """A light suffix stripper for the in-process BM25 fallback (no native FTS) and MMR's
    token sets. Cached: the same words recur text after text."""
    if len(token) <= 3 or not token.isalpha():
        return token
    for suf in _SUFFIXES:
        if token.endswith(suf) and len(token) - len(suf) >= 3:
            token = token[: -len(suf)]
            if suf == "ies":
                token += "y"
            break
    return token


def index_tokens(text: str) -> list[str]:
    return [stem(t) for t in words(text) if t not in STOP_WORDS]


@functools.lru_cache(maxsize=8192)
def token_set(text: str) -> frozenset[str]:
    # Cached: MMR asks for the same top memories' sets search after search, and stemming in
    # Python was ~2.5 ms of a 30-candidate MMR (bench/speed.py --profile).
    return frozenset(index_tokens(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def estimate_tokens(text: str) -> int:
    """Rough LLM token count (~4 characters a token) for the max_tokens budget."""
    return max(1, (len(text) + 3) // 4)
