"""How a fact key is spelt: the one normalisation every path that writes or looks up an
(entity, attribute) applies (issue 28).

Two names a person reads as the same must be one key, or the fact model keeps two current
values of one fact. A model's output, an imported file or a form can differ from another
spelling only in what nobody sees: Unicode normal form (a precomposed "é" or "e" + accent),
width ("ＳＡＲＡＨ"), case ("Straße" / "STRASSE"), invisible characters (a zero-width space or
joiner, a soft hyphen, a byte-order mark, a direction mark) or runs of white space
(a no-break space, a tab). `key_form` removes exactly those differences:

1. invisible characters go: format characters (Unicode category Cf), control characters
   other than white space (Cc), variation selectors and the combining grapheme joiner;
2. NFKC (compatibility forms and width fold: "ﬁ" -> "fi", "Ａ" -> "A");
3. case fold (`str.casefold`, full Unicode folding: "ß" -> "ss"), then NFKC again, since
   folding can leave a string that is no longer in normal form;
4. white space collapsed to one space and trimmed.

It is idempotent (`key_form(key_form(s)) == key_form(s)`; a property test holds it), so the
migration that re-spells stored keys and every later write agree. The inventory's canonical
names (`kit.attributes`) are built on it; the storage migrations apply it alone, since a
stored key is already canonical in every other respect.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_WHITE = re.compile(r"\s+")
# Invisible though not in category Cf: variation selectors (U+FE00-FE0F, U+E0100-E01EF), the
# combining grapheme joiner, and the Hangul fillers (letters that draw nothing).
_INVISIBLE_EXTRA = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE10)] + [chr(c) for c in range(0xE0100, 0xE01F0)]
    + ["\u034f", "\u115f", "\u1160", "\u3164", "\uffa0"])


def _visible(ch: str) -> bool:
    if ch in _INVISIBLE_EXTRA:
        return False
    cat = unicodedata.category(ch)
    return cat != "Cf" and (cat != "Cc" or ch.isspace())


def strip_invisible(text: str) -> str:
    """`text` without the characters that draw nothing (see the module docstring)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch for ch in text if _visible(ch))


def fold_text(text: str) -> str:
    """Invisible characters removed, NFKC, white space collapsed; case kept (values are shown
    as written)."""
    text = unicodedata.normalize("NFKC", strip_invisible(text))
    return _WHITE.sub(" ", text).strip()


def key_form(text: str | None) -> str:
    """The spelling of an entity or attribute that compares equal for every name a person
    reads as the same (steps 1-4 of the module docstring). None reads as ""."""
    if not text:
        return ""
    if text.isascii() and text.isprintable():  # the common case, without the Unicode passes
        return _WHITE.sub(" ", text.lower()).strip()
    text = unicodedata.normalize("NFKC", strip_invisible(text))
    text = unicodedata.normalize("NFKC", text.casefold())
    return _WHITE.sub(" ", strip_invisible(text)).strip()


@dataclass(frozen=True)
class KeyRow:
    """What the key migration reads of a stored memory with a fact key."""

    id: str
    namespace: str
    entity: str
    attribute: str
    #: the row states a value and is current: it takes part in "one current row per key"
    current: bool
    #: when its value began (`valid_from`), then the storage's insertion order: newest wins
    order: tuple[Any, ...]


@dataclass
class Respelling:
    """What the storage applies, in this order: `ends` first (so at most one current row per
    re-spelt key remains), then `renames`."""

    #: (id, valid_until, superseded_by): a current row that becomes history of the newest
    ends: list[tuple[str, Any, str]] = field(default_factory=list)
    #: (id, entity, attribute): the key in `key_form`; (id, None, None) when nothing is left
    renames: list[tuple[str, str | None, str | None]] = field(default_factory=list)


def respell(rows: Iterable[KeyRow]) -> Respelling:
    """Stored keys in `key_form`, and the duplicates that makes merged by the fact rules:
    of the current rows that now share a key, the newest (latest `valid_from`, then latest
    written) stays current and every other one becomes history ending where it begins, with
    `superseded_by` pointing at it (as the fact model would have left them, written in the
    order they were said). `order[0]` of a row must be its `valid_from`."""
    out = Respelling()
    current: dict[tuple[str, str, str], list[KeyRow]] = {}
    for r in rows:
        entity, attribute = key_form(r.entity), key_form(r.attribute)
        if (entity, attribute) != (r.entity, r.attribute):
            out.renames.append((r.id, entity or None, attribute or None) if entity and attribute
                               else (r.id, None, None))
        if r.current and entity and attribute:
            current.setdefault((r.namespace, entity, attribute), []).append(r)
    for group in current.values():
        if len(group) > 1:
            newest = max(group, key=lambda r: r.order)
            out.ends.extend((r.id, newest.order[0], newest.id) for r in group if r is not newest)
    return out
