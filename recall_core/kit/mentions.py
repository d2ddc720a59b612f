"""Which entities a text names: the one reading of "is this text about Tom / the mother / the
billing service?" that the known-facts read (`memory.known`) and search's newer-first rule
(`search.newer`) share, so both mean the same by it."""

from __future__ import annotations

import re

from .attributes import INVENTORY, TEAM, USER, base_attribute, canonical_attribute, \
    canonical_entity

_WORD = re.compile(r"[\w'.+#-]+")
# Entity words too common to tie a text to an entity ("the billing service" -> "billing").
_COMMON = frozenset("the a an my our your his her their new old app team service".split())


def said(text: str) -> set[str]:
    """The text's words, lower case; a possessive also as its owner ("husband's" names the
    husband) and a relation also in the spelling entities keep ("mom" names the mother)."""
    out = set()
    for w in _WORD.findall(text):
        w = w.strip(".'").lower()
        out.add(w)
        if w.endswith("'s"):
            w = w[:-2]
            out.add(w)
        out.add(canonical_entity(w))
    return out


def names(entity: str, words: set[str]) -> bool:
    """Whether a text whose `said` words are `words` names `entity` by one of its own words
    ("the billing service" by "billing"; "mother" by "mom")."""
    return any(w in words for w in re.split(r"[\s_]+", entity.lower())
               if w and w not in _COMMON and len(w) > 2)


def names_value(value: str, words: set[str]) -> bool:
    """Whether every word of `value` is said ("Flask is gone" names Flask)."""
    parts = [w.strip(".'").lower() for w in _WORD.findall(value)]
    return bool(parts) and all(w in words for w in parts)


def of_a_thing(attribute: str) -> bool:
    """A fact of a team's thing (a database, a CI), not of a person (the inventory's `about`)."""
    row = INVENTORY.get(base_attribute(canonical_attribute(attribute)))
    return row is not None and row.about == "thing"


def one_side(a: str | None, b: str | None) -> bool:
    """The same owner, counting the user and the team as one side ("We use npm ..." and, later,
    "pnpm now for mobile-web" read as the user's)."""
    return a == b or {a, b} <= {USER, TEAM}
