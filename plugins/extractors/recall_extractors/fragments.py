"""Keeping extracted memories self-contained: speakers and fragments.

A memory is read later, alone, by someone who did not see the conversation. "It was so
powerful." or "Yes, last week." means nothing on its own, and "I went to the group" in a
transcript does not say who went. So:

* `split_speaker`: a transcript line "Caroline: I went ..." has a speaker, carried into
  every memory the line gives (and made the entity of its first-person triples).
* `group_fragments`: a sentence that cannot stand alone (short, or opening with a word that
  points back: "it", "that", "yes", "so", ...) stays with the sentence before it, unless it
  states a triple of its own (then it is a memory in its own right).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from recall_core.kit import split_speaker as _split_speaker

from .sentences import words

# Labels that open a note ("Correction: my birthday is ...") and name no speaker, on top of
# those recall_core.kit's rule already knows.
_LABELS = frozenset("""
correction corrections reorg news update updates heads psa btw lol ok also edit note reminder
fun fact big news good news sad news quick update quick note side note context background
tldr rant vent idea aside fact facts
""".split())


def split_speaker(text: str) -> tuple[str | None, str]:
    """(speaker, the rest) of a transcript line (recall_core.kit's rule), except where
    the "speaker" is a label that opens a note ("Correction: ...", "Reorg: ...")."""
    speaker, body = _split_speaker(text)
    if speaker is not None and speaker.lower() in _LABELS:
        return None, text
    return speaker, body


# A lowercase "word:" (or two) opening a text.
_LOWER_LABEL = re.compile(r"^\s*(?P<label>[a-z][\w.'-]*(?: [a-z][\w.'-]*)?)\s*:\s")


def lower_speaker(text: str) -> tuple[str | None, str]:
    """(speaker, the rest) of a line whose speaker is typed without a capital ("gina: i work
    at a clothing store"), read as the same line with the capital would be; (None, text) for
    a label ("update: ...", "skills: ...") or no "word:" at all. The transcript rule wants
    the capital (search asks speakers by name); the extractor reads the line either way, so
    two people's lowercase lines are never one person's facts."""
    m = _LOWER_LABEL.match(text)
    if m is None:
        return None, text
    at = m.start("label")
    speaker, body = split_speaker(text[:at] + text[at].upper() + text[at + 1:])
    return (m["label"], body) if speaker is not None else (None, text)


# Words that open a sentence which points back at the one before.
_ANAPHORIC = set("""
it it's its that that's this these those they they're them their there there's he he's him
his she she's her so and but or also too yes yeah yep no nope which then though although
plus anyway same
""".split())
#: A sentence of fewer words than this rarely stands alone ("Last Saturday.", "So fun!").
MIN_WORDS = 5
#: A group stops growing past this many words (memories stay short enough to rank well).
MAX_WORDS = 60


def stands_alone(sentence: str) -> bool:
    tokens = words(sentence)
    return len(tokens) >= MIN_WORDS and tokens[0] not in _ANAPHORIC


def group_fragments(sentences: Sequence[tuple[str, Any]]) -> list[list[tuple[str, Any]]]:
    """Group (sentence, triple) pairs: a fragment without a triple joins the group before it.
    A first sentence that is a fragment opens the group that the next sentence joins."""
    groups: list[list[tuple[str, Any]]] = []
    size = 0
    for sentence, triple in sentences:
        n = len(words(sentence))
        opens = not groups or triple is not None or size + n > MAX_WORDS
        if not opens and stands_alone(sentence):
            # A full sentence starts its own memory, unless the group so far is only a
            # fragment itself ("Yes! I went there yesterday.").
            opens = all(stands_alone(s) or t is not None for s, t in groups[-1])
        if opens:
            groups.append([(sentence, triple)])
            size = n
        else:
            groups[-1].append((sentence, triple))
            size += n
    return groups
