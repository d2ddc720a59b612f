"""Who says a transcript line ("Caroline: I went to the group"): one rule for the extractors
that carry the speaker into a memory and for search, which asks the speaker a query names."""

from __future__ import annotations

import re

from .attributes import FAVORITE_PREFIX, INVENTORY, canonical_attribute

# "Caroline: ...", "Dr. Jane Doe: ...", "user: ...": up to three name-like words, then ": ".
_SPEAKER = re.compile(r"^\s*(?P<name>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}|user|assistant)\s*:\s+(?P<rest>\S.*)$",
                      re.DOTALL)
# Labels that open a note rather than name a speaker ("Important: I always use Emacs").
_NOT_SPEAKERS = set("""
important note notes update todo fyi reminder warning tip summary decision decisions context
question answer edit ps re q a action actions status result results update problem solution
goal goals plan step steps example examples nb caution info error fix bug feature request
background agenda topic subject title date time location where when why how what who
""".split())


def split_speaker(text: str) -> tuple[str | None, str]:
    """(speaker, the rest) for a transcript line, else (None, text). A fact's name is a label,
    not a speaker ("Skills: SQL, Tableau", "Allergies: peanuts": the extractors read the line
    as "my skills are ...")."""
    m = _SPEAKER.match(text)
    if not m or m["name"].lower() in _NOT_SPEAKERS or "\n" in m["name"] \
            or _names_a_fact(m["name"]):
        return None, text
    return m["name"], m["rest"]


def speaker_of(text: str) -> str | None:
    return split_speaker(text)[0]


def _names_a_fact(label: str) -> bool:
    attribute = canonical_attribute(label)
    return attribute in INVENTORY or attribute.startswith(FAVORITE_PREFIX)
