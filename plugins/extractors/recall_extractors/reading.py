"""Reading a text's statements by rule: each statement's subject and facts, a later "he" or
"she" resolved to the person named before, and a statement no rule reads whole read piece by
piece (its asides cut off)."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence

from recall_core.kit.attributes import INVENTORY

from .cues import UNSURE
from .fact import Fact
from .fragment_lists import split_fragment_list
from .statements import opens_with_subject, split_statements
from .subjects import Subject, find_subject
from .triples import Reading, read_statement

log = logging.getLogger("recall.extractors")


def read_all(sentences: Sequence[str], speaker: str | None) -> list[list[tuple[str, Reading]]]:
    """Every sentence's statements with what the rules read in them."""
    out = []
    last_person: str | None = None
    for sentence in sentences:
        found = []
        for whole in split_statements(sentence, speaker):
            # each part is read after the one before has named its person ("he", "she")
            for clause, reading in _parts(whole, speaker, last_person):
                if not reading.facts:
                    reading = by_pieces(clause, reading, speaker, last_person)
                subject = reading.subject
                if subject.kind == "person" and subject.entity and subject.surface.lower() \
                        not in ("i", "he", "she"):
                    last_person = subject.entity
                elif subject.entity is None and (named := _named_first(clause, reading)):
                    last_person = named  # "Tom is our designer. He's based in Oslo."
                found.append((clause, reading))
        out.append(found)
    return out


# "personal email is ...", "my personal laptop is a ThinkPad", "home phone number": a second
# one beside the main (work's) one, a fact of its own, so neither supersedes the other.
_SECOND = "personal|private|side|second|spare"
_HOME_TOO = frozenset({"phone", "phone_number"})  # "home internet" is the internet


@functools.cache  # (inventory names only: a bounded cache)
def _second_of(attribute: str) -> re.Pattern[str] | None:
    """What says a second one of `attribute` ("personal email"), or None when it has none."""
    row = INVENTORY[attribute]
    if row.many or row.about != "person":
        return None
    nouns = {attribute, *row.aliases}
    which = _SECOND + ("|home" if attribute in _HOME_TOO else "")
    return re.compile(r"\b(?P<w>" + which + r")\s+(?:" +
                      "|".join(re.escape(n.replace("_", " ")) for n in nouns) + r")\b",
                      re.IGNORECASE)


def second_one(fact: Fact, clause: str) -> Fact:
    if fact.ended or fact.attribute not in INVENTORY:
        return fact
    pattern = _second_of(fact.attribute)
    m = pattern.search(clause) if pattern is not None else None
    if m is None:
        return fact
    return Fact(fact.entity, f"{m['w'].lower()}_{fact.attribute}", fact.value, fact.ended,
                fact.text, fact.check)


def _parts(whole: str, speaker: str | None,
           last_person: str | None) -> list[tuple[str, Reading]]:
    """A statement's parts with their readings: the items of a list of fragments
    (`fragment_lists`), else the clauses `elided` finds."""
    items = split_fragment_list(whole, lambda s: _read_safely(s, speaker, last_person), speaker)
    if items is None:
        return elided(whole, speaker, last_person)
    return [part for text, reading in items for part in
            ([(text, reading)] if reading is not None else elided(text, speaker, last_person))]


# Where a clause may go on with its subject left out: "my son is 7 and goes to Riverside".
_AND = re.compile(r",?\s+(?:and|but)\s+(?:also\s+|then\s+|now\s+)?", re.IGNORECASE)


# A clause with a copula of its own has its own subject ("... but fish is fine"): the first
# clause's subject does not come back to it ("I fish is fine" was the hobby fishing).
_OWN_COPULA = re.compile(r"^[\w-]+(?:\s[\w-]+)?\s+(?:is|are|was|were)\b", re.IGNORECASE)


def elided(clause: str, speaker: str | None,
           last_person: str | None) -> list[tuple[str, Reading]]:
    """`clause` and its reading, or the two statements it joins with "and"/"but" when the
    second left out its subject ("I knit and do pottery on weekends"; "my son is 7 and goes
    to Riverside Primary"). `statements` cuts before verbs it knows; here the rules
    themselves are the grammar, whatever the verb: the cut is made when the second part, given
    the first part's subject back, states a fact of that subject that the whole did not, and
    no fact of the whole is lost. "I like coffee and tea" stays one ("I tea" states nothing)."""
    whole = _read_safely(clause, speaker, last_person)
    for m in _AND.finditer(clause):
        left, right = clause[:m.start()].strip(), clause[m.end():].strip()
        if len(left.split()) < 2 or len(right.split()) < 2 or opens_with_subject(right) \
                or _OWN_COPULA.match(right):
            continue
        subject = find_subject(left, speaker)
        if subject.entity is None or not subject.surface:
            continue
        second = f"{subject.surface} {right}"
        later = _read_safely(second, speaker, last_person)
        if not later.facts or any(f.entity != subject.entity for f in later.facts) or \
                set(later.facts) <= set(whole.facts):
            continue
        first = _read_safely(left, speaker, last_person)
        if not set(whole.facts) <= set(first.facts) | set(later.facts):
            continue
        return [(left, first), *elided(second, speaker, last_person)]
    return [(clause, whole)]


def _named_first(clause: str, reading: Reading) -> str | None:
    """The one entity of a statement's facts when the statement opens with its name (a frame
    that reads the fact without a subject: "Tom is our designer")."""
    entities = {f.entity for f in reading.facts}
    if len(entities) != 1:
        return None
    entity = entities.pop()
    first = clause.split()[0].lower().strip(",.:'s") if clause.split() else ""
    return entity if entity not in ("user", "team") and first == entity.split()[0] else None


def _read_safely(clause: str, speaker: str | None, last_person: str | None) -> Reading:
    try:
        return read_statement(clause, speaker, last_person)
    except Exception:  # noqa: BLE001 - a rule's bug must not lose the user's text
        log.exception("stub: reading %r failed; stored without a fact", clause)
        return Reading([], Subject(None, "none", clause))


# Where a statement's asides begin: "kitty is my terminal now, ligatures finally work".
_PIECE = re.compile(r",\s+|\s*;\s*|\s+[-\u2013\u2014]\s+|\s+\((?=\w)|\)\s*|"
                    r"\s+(?:so|because|since|but|cause|cos|as)\s+", re.IGNORECASE)


def by_pieces(clause: str, whole: Reading, speaker: str | None,
              last_person: str | None) -> Reading:
    """A statement no rule read as a whole, read piece by piece: the fact sits in one part
    and the rest is an aside ("Had my first 1:1 with my new manager Tom today, seems chill";
    "Sorry for the slow reply, we closed on the house in Denver"). The pieces' facts are the
    statement's (it stays one memory); a statement that hedges, asks or supposes anywhere
    states no fact in any piece."""
    cut = [p.strip() for p in _PIECE.split(clause) if p and p.strip()]
    if len(cut) < 2 or UNSURE.search(clause):
        return whole
    pieces = [p for p in cut if len(p.split()) >= 2]
    facts = [f for piece in pieces for f in _read_safely(piece, speaker, last_person).facts]
    if not facts:
        return whole
    return Reading(facts, whole.subject, whole.rest, whole.cues)
