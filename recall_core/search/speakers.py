"""Who says a memory: the speaker of a transcript line ("Caroline: I went to the group").

One rule for the whole product: the stub extractor carries a line's speaker into every memory
the line gives (recall_extractors.fragments), and search ranks the named person's own lines
above lines that only address them (search.apply_speakers) and asks the embedding ranker
about the rest of the query (`focused_query`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..kit.text import STOP_WORDS, words
from ..kit.transcripts import speaker_of, split_speaker

__all__ = ["focused_query", "named_in", "named_speakers", "speaker_of", "split_speaker"]


def named_in(speaker: str, query_words: set[str]) -> bool:
    """Whether the query names this speaker: any word of the name ("Jane" of "Dr. Jane Doe")
    that is not a stop word ("Will" is not a name here) is one of the query's words."""
    return any(w in query_words for w in words(speaker) if w not in STOP_WORDS and len(w) > 1)


def named_speakers(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers the query names, when it names some but not all of them (naming every
    speaker, or none, says nothing about who answers)."""
    qwords = set(words(query))
    named = {s: named_in(s, qwords) for s in set(speakers)}
    if not any(named.values()) or all(named.values()):
        return set()
    return {s for s, yes in named.items() if yes}


def focused_query(query: str, named: Iterable[str]) -> str | None:
    """The query without the names of these speakers ("What has Melanie painted?" -> "What has
    painted?"), or None when nothing is named or no content word would remain.

    For an embedding model a person's name dominates a short question: its nearest lines are
    those that mention the name ("Thanks, Melanie!"), not those about what was asked. Who
    said it is then the speaker step's job (search.apply_speakers)."""
    name_words = {w for s in named for w in words(s) if w not in STOP_WORDS and len(w) > 1}
    if not name_words:
        return None
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(name_words)) + r")(?:'s|’s)?\b",
                         re.IGNORECASE)
    rest = " ".join(pattern.sub(" ", query).split())
    if not any(w not in STOP_WORDS for w in words(rest)):
        return None
    return rest
