"""A known fact makes its attribute the likelier reading of a statement about its subject.

The attribute classifier (`classifier`) reads a statement no rule reads, and names an
attribute only when it is clearly nearest of all (`MIN_SCORE`, `MIN_MARGIN`): among ~60
attributes, "ride it to the office every day" or "am with Naomi now" rarely are. But when the
namespace already holds a single-valued fact about the statement's subject ("I take the bus
to work": the user's commute), a statement about that subject is far likelier to be about
that fact than about any other: people tell an agent what changed. So, for statements no rule
and no plain guess read (or read only as a tool of no known kind used among others, "I've
switched to green tea"; or in plain words the classifier alone is not asked about, "I changed
my handle to @janedoe"), the known attributes of the subject are weighed with a lower bar:

* the known attribute scores at least `PRIOR_MIN`, is within `PRIOR_LEAD` of the best of all
  attributes, and beats the examples of statements that state nothing (`prototypes.NONE`);
  the memory that states the known fact counts as one more example of its attribute, in the
  namespace's own words (an attribute no prototype was written for, such as a favourite
  drink or a bank, is reached that way);
* one known attribute only (two close ones: unsure, nothing changes);
* the statement says that something holds now or changed ("now", "these days", "again",
  "switched", "started", ...): the lower bar is earned by the change being said, not by the
  subject alone ("I work in Munich" after "I live in Berlin" is no move);
* the statement does not hedge, ask, negate or tell the past (`cues`);
* a value of the attribute's kind is read in the statement (`typed_values`), or, where the
  attribute has no typed reading, the words nearest the known value in the model's space
  (`VALUE_MIN`), never the known value itself, nor the known memory's own words at its
  start ("Driving to work" after "I take the bus to work" names no commute).

When unsure nothing is read: the statement stays a memory without a fact, as before (a
missed supersession is cheaper than a lost fact). The fact model then does the rest: the
new value supersedes the known one because they share the key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from recall_core.contracts import KnownFact
from recall_core.kit.attributes import TEAM, USER, is_many

from .cues import UNSURE
from .fact import Fact
from .known import CURRENT
from .prototypes import PROTOTYPES
from .subjects import RELATIONS, PETS
from .triples import Reading, tools_only
from .typed_values import theirs

#: The known attribute's score (mean cosine to its two nearest examples) must reach this ...
PRIOR_MIN = 0.33
#: ... trail the best attribute of all by at most this ...
PRIOR_LEAD = 0.06
#: ... and beat the examples of statements that state nothing by this.
NONE_MARGIN = 0.02
#: A value read by nearness must be this close to the known value (a word of its kind).
VALUE_MIN = 0.45

# Owners a thing may have other than the speaker ("my sister flat", "our dog bowl").
_OWNERS = RELATIONS | PETS

_I = re.IGNORECASE
NOT = re.compile(r"\b(?:don't|doesn't|didn't|never|not|won't|used to|back then|years ago|"
                  r"wasn't|isn't)\b", _I)
# Wordings that say a value holds now or changed (with known.CURRENT's).
_NOW = re.compile(r"\b(?:again|instead|started|starting|switched|changed|new|since)\b", _I)
_TOKEN = re.compile(r"[A-Za-z][\w'+#.-]*[\w+#]|[A-Za-z]|\d+")
# Words that are never a value on their own (function words, time words, fillers).
_STOP = frozenset("""
i me my we our us you your he she his her they them their it its a an the and or but so to of
in on at for with from by as is are was were be been being am do does did have has had this
that these those now just really still again finally also too very not no never more less any
all some every each about into over after before since until up down out off new old last
first next week month year day today yesterday tomorrow days weeks months years lol haha btw
tbh got get gets go went gone going moved move started start starting switched use used using
work works working live lives than then there here what which who when where how why can
i'm i've it's we're we've that's one two three way thing things stuff lot bit
""".split())


def read_with_known(read: list[list[tuple[str, Reading]]], classifier: Any,
                    known: Sequence[KnownFact]) -> None:
    """Statements no rule or plain guess read, read again with the known facts of their
    subject (in place). Runs in the worker's thread: it encodes."""
    single: dict[str, list[KnownFact]] = {}
    for k in known:
        if not is_many(k.attribute) and (k.attribute in PROTOTYPES or k.text):
            single.setdefault(k.entity, []).append(k)
    if not single:
        return
    for statements in read:
        for clause, reading in statements:
            if (reading.facts and not tools_only(reading.facts)) or not said(reading) \
                    or reading.subject.entity is None:
                continue
            mine = single.get(reading.subject.entity) or _owners(reading.subject, single)
            if not mine or UNSURE.search(clause) or NOT.search(clause) \
                    or not says_change(clause):
                continue
            fact = _read(clause, reading, classifier, mine)
            if fact is not None:
                reading.facts = [fact]


def said(reading: Reading) -> str | None:
    """What the prior reads of a statement: the classifier's text, or for a statement that
    names nothing it would read, its plain words."""
    return reading.predicate or reading.told


def says_change(clause: str) -> bool:
    """The statement says that something holds now or changed (the prior's lower bar)."""
    return bool(CURRENT.search(clause) or _NOW.search(clause))


def _owners(subject: Any, single: dict[str, list[KnownFact]]) -> list[KnownFact]:
    """For a thing that is someone's ("my bus", "our Tuesday deploy"): the known facts of its
    owner (the user for "my"; the team, else the user's household, for "our"). A thing of
    one's own is said of in the words of a fact about oneself ("Our Tuesday deploy went
    smoothly, as usual" after "We deploy on Fridays"); the prior's other bars still apply."""
    words = subject.surface.lower().split()
    # "my sister's flat", "my son's school bus": the thing is someone else's
    if subject.kind != "thing" or not words or "'" in subject.surface \
            or any(w in _OWNERS for w in words[1:]):
        return []
    first = words[0]
    owners = {"my": (USER,), "our": (TEAM, USER)}.get(first, ())
    return next((single[o] for o in owners if o in single), [])


def _read(clause: str, reading: Reading, classifier: Any,
          mine: Sequence[KnownFact]) -> Fact | None:
    predicate = said(reading)
    assert predicate is not None and reading.subject.entity is not None
    scores = dict(classifier.scores(predicate))
    _with_known_texts(scores, clause, classifier, mine)
    ranked = sorted({k.attribute for k in mine}, key=lambda a: -scores.get(a, 0.0))
    attribute = ranked[0]
    score = scores.get(attribute, 0.0)
    if not near(scores, attribute):
        return None
    if len(ranked) > 1 and scores.get(ranked[1], 0.0) > score - PRIOR_LEAD:
        return None  # two known facts fit: unsure which one changed
    old = next(k for k in mine if k.attribute == attribute)
    facts = [f for f in reading.classified(attribute) if not f.ended]
    if facts:
        value = beyond_frame(facts[0].value, old.text)
        if value is None or same(value, old.value):
            return None  # the known value restated: nothing new (the rules refresh it)
        return Fact(old.entity, old.attribute, value)
    value = _nearest(predicate, old.value, classifier)
    value = beyond_frame(value, old.text) if value else None
    return Fact(old.entity, old.attribute, value) if value else None


_LINK = frozenset("to as at in on for of from with into".split())


def beyond_frame(value: str, known_text: str) -> str | None:
    """The value without the words it shares with the known fact's memory at its start:
    those are the fact's frame, not a new value ("Driving to work" after "I take the bus to
    work" names no new commute; "handle to @janedoe" is "@janedoe")."""
    frame = {w.lower().strip(".,!?") for w in known_text.split()}
    words = value.split()
    while words and (words[0].lower() in frame or words[0].lower() in _LINK):
        words.pop(0)
    return " ".join(words) or None


def _with_known_texts(scores: dict[str, float], clause: str, classifier: Any,
                      mine: Sequence[KnownFact]) -> None:
    """The memory that states a known fact is one more example of its attribute, in the
    namespace's own words: "I've switched to green tea" is near "My favourite drink is
    coffee." though no prototype of favourite drinks was written (in place)."""
    told = [k for k in mine if k.text]
    if not told:
        return
    vectors = np.asarray(classifier.encode([clause, *[k.text for k in told]]), dtype=np.float32)
    for k, sim in zip(told, vectors[1:] @ vectors[0]):
        scores[k.attribute] = max(scores.get(k.attribute, 0.0), float(sim))


def near(scores: dict[str, float], attribute: str) -> bool:
    """Whether the classifier's `scores` of a statement place it near `attribute` by the
    lower bar a known fact earns (see the module docstring)."""
    score = scores.get(attribute, 0.0)
    return score >= PRIOR_MIN and score >= max(scores.values()) - PRIOR_LEAD \
        and score >= scores.get("NONE", 0.0) + NONE_MARGIN


def same(a: str, b: str) -> bool:
    a, b = a.lower().strip(), b.lower().strip()
    return a == b or a in b.split() or b in a.split()


def _nearest(predicate: str, known_value: str, classifier: Any) -> str | None:
    """The words of `predicate` nearest `known_value` (one to three words, never the known
    value itself), when near enough to be a value of its kind."""
    tokens = _TOKEN.findall(predicate)
    spans = []
    for n in (1, 2, 3):
        for i in range(len(tokens) - n + 1):
            words = tokens[i:i + n]
            if words[0].lower() in _STOP or words[-1].lower() in _STOP:
                continue
            span = " ".join(words)
            if known_value.lower() in span.lower() or span.lower() in known_value.lower() \
                    or theirs(predicate, span):
                continue
            spans.append(span)
    if not spans:
        return None
    vectors = np.asarray(classifier.encode([known_value, *spans]), dtype=np.float32)
    sims = vectors[1:] @ vectors[0]
    best = int(np.argmax(sims))
    return spans[best] if sims[best] >= VALUE_MIN else None
