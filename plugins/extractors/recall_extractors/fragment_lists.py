"""Lists of verbless fragments: each item its own statement.

People type their setup as a list of fragments, each naming a value and its role, with no
verb at all: "Rust backend, Axum for the web layer, SQLite for storage", "Firefox for
browsing, Warp as my terminal", "Our stack: React on the frontend, Express backend". Each item
says one thing, so each is a statement of its own (a later "we moved storage to Postgres"
then supersedes one item, not the list). An item is read as the statement it shortens:

* "<value> for|as <role>" and "<value> on|in the <part>": "I use <item>";
* "<value> <role noun>" ("Express backend", "Next.js frontend"): "I use <value> for the
  <noun>"; "<value> everywhere": "I use <item>";
* a set of pronouns ("she/her"): "my pronouns are <item>";
* after a clause "<subject> <copula> X" ("I'm 29, single, ..."), a short bare item is
  another complement of that copula ("I'm single").

"We" reads the items instead of "I" under a label of ours ("Our stack: ..."). A list is
split only when every fragment of it, read so, states a fact (the rules are the grammar, as
in `reading.elided`), so lists of values of one fact ("I like tea, coffee and juice"), an
apposition ("my wife Elena, a pediatrician, ...") or a place ("Austin, Texas") stay whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .lexicon import category_of, purpose_attribute
from .statements import opens_with_subject
from .subjects import find_subject
from .triples import Reading

_I = re.IGNORECASE

# "Our stack: ...": a label whose noun names what the list is.
_LABEL = re.compile(r"^(?P<label>(?:(?P<who>my|our)\s+)?[a-z][\w-]*(?:\s[a-z][\w-]*)?)\s*:\s+"
                    r"(?P<rest>\S.*)$", _I)
_COMMA = re.compile(r"\s*,\s+(?:and\s+|&\s+)?|\s*;\s*")
_AND = re.compile(r"\s+(?:and|&)\s+", _I)
# A value: one to four words, none of them a word that makes a clause of the item.
_VALUE = r"(?P<v>[\w.+#/-]+(?:\s[\w.+#/-]+){0,3}?)"
_FUNCTION = re.compile(r"\b(?:i|i'm|im|we|we're|you|he|she|they|it|is|are|was|were|am|be|"
                       r"the|a|an|my|our|to|of|that|this|not|no)\b", _I)
_PURPOSE = re.compile(r"^" + _VALUE + r"\s+(?P<prep>for|as)\s+(?P<role>(?:(?:the|my|our|a|an)"
                      r"\s+)?[\w-]+(?:\s[\w-]+){0,2})$", _I)
_PART = re.compile(r"^" + _VALUE + r"\s+(?P<prep>on|in)\s+the\s+(?P<role>[\w-]+(?:\s[\w-]+)?)$",
                   _I)
_EVERYWHERE = re.compile(r"^" + _VALUE + r"\s+(?:everywhere|across the board|for everything)$",
                         _I)
_NOUN_LAST = re.compile(r"^" + _VALUE + r"\s+(?P<role>[a-z][\w-]*)$")
# Parts of a system that name no attribute but are a tool's role all the same.
_PARTS = frozenset("backend frontend back-end front-end api server client app web mobile "
                   "infra stack".split())
_PRONOUNS = re.compile(r"^(?:he|she|they|xe|ze|it|any)/(?:him|her|them|hers|their|xem|zir|its|"
                       r"they|she|he)(?:/\w+)?$", _I)
# "<subject> <copula> X": the clause whose copula a bare item after it shares.
_COPULA_HEAD = re.compile(r"^(?P<head>(?:i'm|im|i am|we're|we are|he's|he is|she's|she is|"
                          r"they're|they are|(?:my|our)\s+[\w-]+\s+(?:is|are)|[A-Z][a-z]+ is|"
                          r"[A-Z][a-z]+'s))\s+\S", _I)
# "gym at 7", "standup at 9:30", "retro on Fridays": a routine and when it is.
_SCHEDULE = re.compile(r"^(?P<what>[a-z][\w-]*(?:\s[a-z][\w-]*)?)\s+(?P<when>(?:at|by|around|"
                       r"from)\s+\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?|on\s+(?:mon|tues|"
                       r"wednes|thurs|fri|satur|sun)days?)$", _I)
# "Pacific time", "UK time": a time zone.
_ZONE = re.compile(r"^[A-Z][\w-]*(?:\s[A-Z][\w-]*)?\s+time$")
_PREPOSITION = re.compile(r"\b(?:in|from|at|on|near|outside|by|of|to|with)\b", _I)
_WE = re.compile(r"^(?:we|we're|we've|our)\b", _I)
_BARE = re.compile(r"^[\w/'.+#-]+(?:\s[\w/'.+#-]+){0,3}$")

Reader = Callable[[str], Reading]


def split_fragment_list(statement: str, read: Reader,
                        speaker: str | None = None) -> list[tuple[str, Reading | None]] | None:
    """The items of a list of fragments, each (text to store, its reading), or None when the
    statement is no such list. A clause in the list (it opens with a subject of its own) is
    returned with no reading: the caller reads it as any statement."""
    label = _LABEL.match(statement)
    body = label["rest"] if label else statement
    items = _items(body.rstrip(".!"))
    if len(items) < 2:
        return None
    # the items are the team's under a label of ours or beside a clause of ours
    ours = (label["who"] or "") if label else ""
    who = "We" if ours.lower() == "our" or any(_WE.match(i) for i in items) else "I"
    out: list[tuple[str, Reading | None]] = []
    triples: list[tuple[str, str, str]] = []  # what the items state, read once each
    head: str | None = None
    fragments = 0
    for item in items:
        # a fragment first: "Chrome for work" is no subject "Chrome for" and its verb
        found = None if _opens(item) else _fragment(item, who, head, read)
        if found is None:
            if not _clause(item, speaker):
                return None
            out.append((item, None))
            triples += _triples(read(item))
            m = _COPULA_HEAD.match(item)
            # "I'm 29, single": the copula is shared; "I'm from Austin, Texas": a place
            head = m["head"] if m and not _PREPOSITION.search(item[m.end("head"):]) else None
            continue
        said, reading = found
        fragments += 1
        triples += _triples(reading)
        # the user's words: a shared copula or a label said again, not the frame's "I use"
        stored = said if said in (f"{head} {item}", f"my pronouns are {item}") else \
            f"{label['label']}: {item}" if label else item
        out.append((stored, reading))
    # No two items give one single fact two values (then they were one fact's list), and
    # no fact of the whole is lost ("uninstalled Chrome for good, Firefox only now").
    keys = [t[:2] for t in triples]
    if not fragments or len(keys) != len(set(keys)) or \
            not set(_triples(read(statement))) <= set(triples):
        return None
    return out


def _items(body: str) -> list[str]:
    """The list's items: cut at commas, and at an "and" inside the last one."""
    parts = [p.strip() for p in _COMMA.split(body) if p.strip()]
    if len(parts) > 1 and _AND.search(parts[-1]):
        last = [p.strip() for p in _AND.split(parts[-1]) if p.strip()]
        parts = parts[:-1] + last
    return parts


def _opens(item: str) -> bool:
    """An item that opens with a subject of its own ("I teach ...", "im studying ...")."""
    return opens_with_subject(item) or bool(_COPULA_HEAD.match(item))


def _clause(item: str, speaker: str | None) -> bool:
    """An item that is a statement of its own (it names its subject)."""
    if _opens(item):
        return True
    subject = find_subject(item, speaker)
    return subject.entity is not None and subject.opens(item)


def _fragment(item: str, who: str, head: str | None,
              read: Reader) -> tuple[str, Reading] | None:
    """The statement a fragment shortens and its reading: the first of the statements it may
    shorten that states a fact; None when the item is no fragment or none does."""
    for said in _as_said(item, who, head):
        reading = read(said)
        if said.startswith(head or "\0") and any(f.attribute == "name" for f in reading.facts):
            continue  # a name comes first ("I'm Dan, 41"), never later in the list
        if _triples(reading):
            return said, reading
    return None


def _as_said(item: str, who: str, head: str | None) -> list[str]:
    """The statements a fragment may shorten, most likely first."""
    out = []
    if _PRONOUNS.match(item):
        out.append(f"my pronouns are {item}")
    if head is not None and _BARE.match(item):
        out.append(f"{head} {item}")
    if _ZONE.match(item):
        out.append(f"I'm on {item}")
    if m := _SCHEDULE.match(item):
        out.append(f"{m['what']} is {m['when']}")
    for frame in (_PURPOSE, _PART, _EVERYWHERE):
        m = frame.match(item)
        if m and _named(m["v"]):
            out.append(f"{who} use {item}")
    m = _NOUN_LAST.match(item)
    if m and _named(m["v"]) and (m["role"].lower() in _PARTS or purpose_attribute(m["role"])):
        out.append(f"{who} use {m['v']} for the {m['role']}")
    return out


def _named(value: str) -> bool:
    """A value that names a thing: a capital or digit in it, or a known tool ("fish"); no
    verb in it ("Uninstalled Chrome for good")."""
    if _FUNCTION.search(value) or (re.search(r"(?i:ed|ing)\b", value) and
                                   category_of(value) is None):
        return False
    return bool(re.search(r"[A-Z0-9]", value)) or category_of(value) is not None


def _triples(reading: Reading) -> list[tuple[str, str, str]]:
    return [t for f in reading.facts if (t := f.triple()) is not None]


