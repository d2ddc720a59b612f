"""Split a long text into pieces that one model call can extract from.

A store may hold up to 256 KiB of text, about 65k tokens. An extraction restates every
statement, so its output is about as long as its input (often longer, with the JSON keys and
triples), and no model's output budget covers that in one call. So the text is cut into
pieces whose size is bounded by the call's output budget and its context window, at the
gentlest boundary that works: blank lines, then lines, then sentence ends, then spaces, and
only as a last resort in the middle of a word.

Token counts are estimated without a tokenizer (no tokenizer fits every model): one token per
three UTF-8 bytes. English runs at about four and a half bytes per token, so the estimate errs
on the safe side; CJK text is three bytes per character and one or two tokens per character,
which is why the extractors also split a piece again when a reply is cut off at max_tokens.
"""

from __future__ import annotations

import re

BYTES_PER_TOKEN = 3

# Boundaries from gentlest to harshest; each keeps its separator on the piece before it, so
# the pieces joined give back the text exactly.
_BOUNDARIES = (re.compile(r"(?<=\n)[ \t]*\n\s*"), re.compile(r"(?<=\n)"),
               re.compile(r"(?<=[.!?\u2026\u3002\uff01\uff1f])[\"')\]]*\s+"),
               re.compile(r"(?<=\s)"))


def estimate_tokens(text: str) -> int:
    """A deliberately high estimate of the tokens in `text` for any common tokenizer."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def split_text(text: str, max_tokens: int) -> list[str]:
    """Pieces of `text`, each estimated at no more than `max_tokens`, in order, that join back
    into `text`. Whitespace-only pieces are dropped."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    return [p for p in _split(text, max_tokens, 0) if p.strip()]


def _split(text: str, limit: int, level: int) -> list[str]:
    if estimate_tokens(text) <= limit:
        return [text]
    if level >= len(_BOUNDARIES):
        return _hard_cut(text, limit)
    parts = _cut_at(text, _BOUNDARIES[level])
    if len(parts) == 1:
        return _split(text, limit, level + 1)
    out: list[str] = []
    current = ""
    size = 0
    for part in parts:
        cost = len(part.encode("utf-8"))
        if current and -(-(size + cost) // BYTES_PER_TOKEN) > limit:
            out.extend(_split(current, limit, level + 1))
            current, size = "", 0
        current += part
        size += cost
    if current:
        out.extend(_split(current, limit, level + 1))
    return out


def _cut_at(text: str, boundary: re.Pattern[str]) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in boundary.finditer(text):
        end = match.end()
        if end > start and end < len(text):
            parts.append(text[start:end])
            start = end
    parts.append(text[start:])
    return parts


def _hard_cut(text: str, limit: int) -> list[str]:
    """Cut by bytes, never inside a UTF-8 character."""
    budget = limit * BYTES_PER_TOKEN
    out: list[str] = []
    current: list[str] = []
    size = 0
    for ch in text:
        n = len(ch.encode("utf-8"))
        if current and size + n > budget:
            out.append("".join(current))
            current, size = [], 0
        current.append(ch)
        size += n
    if current:
        out.append("".join(current))
    return out
