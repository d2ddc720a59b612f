"""A known single value ended without a successor: "I left Deloitte last month", "we shut
Keycloak down", "Sarah sold the Mini".

The fact model lets a one-valued fact end like a value of a many-valued one: a newer
statement of its key with the value `ENDED` ("no longer") supersedes the old value, so the
agent is no longer told "works at Deloitte" while history keeps when it held. The rules read
such a statement under a key of their own guess (`uses:deloitte`, `pets:mini`) or not at
all; what decides the key is the value it names: a known single value of the statement's
subject, named in the same aside as a word that ends it.

When a statement of the text gives that fact a new value, the change is read there
(`known.said_against`, `known.align`), not here. When unsure (two known facts named, a hedge,
a question, a negation, "still") nothing ends: a missed ending is cheaper than a lost fact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from recall_core.contracts import KnownFact
from recall_core.kit.attributes import ENDED, is_ended, is_many

from .change_words import DISCARDED
from .cues import UNSURE
from .fact import Fact
from .known import ASIDE, in_scope, mentions, said_words
from .triples import Reading

_I = re.IGNORECASE

# Words that end the one value they name. Stricter than `known._ENDS` ("over", "moved" and
# "switched" alone name the new value as often as the old one).
LEAVES = re.compile(
    r"\b(?:left|leaving|quit|quitting|shut (?:\w+ )?down|shutting (?:\w+ )?down|sold|selling|"
    r"giving up(?: on)?|no longer|" + DISCARDED + r"|moved (?:away )?(?:from|out of)|"
    r"switched (?:away )?from|swapped out|"
    r"done with|last day at|broke up with|split (?:up )?(?:with|from)|divorced)\b", _I)
_NOT = re.compile(r"\b(?:don't|doesn't|didn't|never|not|won't|wasn't|isn't|haven't|hasn't|"
                  r"can't|couldn't|might|may|if|when|before|will|going to|gonna|thinking|"
                  r"considering|plan(?:ning)?|want(?:s|ed)? to|should)\b", _I)
_STILL = re.compile(r"\b(?:still|keep|kept|also|too|again)\b", _I)


def ends_single(sentences: Sequence[str], read: list[list[tuple[str, Reading]]],
                known: Sequence[KnownFact], speaker: str | None) -> None:
    """Every sentence's statements (in place) with the ending of the known single value one
    of its asides names with a word that ends it."""
    # keys the text gives a new value (in any sentence: "Quit Initech. I'm at Hooli now.")
    given = {t[:2] for statements in read for _, r in statements for f in r.facts
             if not f.ended and (t := f.triple()) is not None and not is_ended(t[2])}
    for sentence, statements in zip(sentences, read):
        _ends(sentence, statements, known, speaker, given)


def _ends(sentence: str, statements: list[tuple[str, Reading]], known: Sequence[KnownFact],
          speaker: str | None, given: set[tuple[str, str]]) -> None:
    if not statements or UNSURE.search(sentence) or sentence.rstrip().endswith("?"):
        return
    said = said_words(sentence)
    for aside in ASIDE.split(sentence):
        # a negation holds in its own aside: "Sold the Mazda, I don't have a car anymore"
        if not LEAVES.search(aside) or _STILL.search(aside) or _NOT.search(aside):
            continue
        clause, reading = next(((c, r) for c, r in statements if aside.strip() in c),
                               statements[0])
        named = [k for k in known if not is_many(k.attribute) and not is_ended(k.value)
                 and mentions(aside, k.value) and in_scope(k, reading, said, speaker)]
        if len({(k.entity, k.attribute) for k in named}) != 1:
            continue
        k = named[0]
        if (k.entity, k.attribute) in given:
            continue  # the text gives the fact its new value: a change, read elsewhere
        # the rules' own reading of the ending ("uses:deloitte" ended) names the same value
        reading.facts = [f for f in reading.facts
                         if not (f.ended and (mentions(f.value, k.value)
                                              or mentions(k.value, f.value)))]
        reading.facts.append(Fact(k.entity, k.attribute, ENDED))
