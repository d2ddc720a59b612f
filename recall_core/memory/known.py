"""What is already known, for an extractor that reads it (`Extractor.reads_known`).

Before a text is extracted, the namespace's current facts about the subjects the text may be
about are read, so that "I just started a new job at Globex" can take the key of the stored
`user.employer = Acme` instead of a key of its own. The read is bounded twice: the newest
`READ` current facts of the namespace (one indexed query, whatever the namespace's size),
then only those whose entity the text may be about (the user, the team, the line's speaker,
an entity one of whose words the text says, a value the text names, or, when the text says
"we" or "our", the team's things), at most `KEEP` of them, newest first.

An extractor that also reads statements (`Extractor.reads_statements`) gets the newest
`READ_STATEMENTS` current memories that state no fact, so that "Datadog is our monitoring now"
can say it replaces "We monitor with Nagios", a statement no rule keyed when it was stored
(one more indexed read, newest first, whatever the namespace's size).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..contracts import Extractor, KnownFact, KnownStatement, Storage
from ..kit.attributes import TEAM, USER
from ..kit.mentions import names, names_value, of_a_thing, said
from ..kit.transcripts import speaker_of

#: current facts read from storage per extraction (newest first)
READ = 300
#: facts handed to the extractor at most
KEEP = 40
#: newest current memories read for the keyless statements among them
READ_STATEMENTS = 60

# "we" / "our": the speaker's team, which owns its things ("our app runs on MySQL", then "we
# finished migrating to Postgres" says nothing of the app by name, but is its database).
_OURS = re.compile(r"\b(?:we|our|ours|us|we're|we've|we'd|we'll)\b", re.IGNORECASE)


def reads_known(extractor: object) -> bool:
    return bool(getattr(extractor, "reads_known", False))


def reads_statements(extractor: object) -> bool:
    return reads_known(extractor) and bool(getattr(extractor, "reads_statements", False))


def relevant(facts: Sequence[KnownFact], text: str, keep: int = KEEP) -> list[KnownFact]:
    """The facts whose entity `text` may be about, in the order given, at most `keep`."""
    words = said(text)
    speaker = (speaker_of(text) or "").lower()
    ours = bool(_OURS.search(text))
    out = []
    for f in facts:
        if f.entity in (USER, TEAM) or f.entity == speaker or names(f.entity, words) or \
                names_value(f.value, words) or (  # "Flask is gone"
                ours and of_a_thing(f.attribute)):
            out.append(f)
            if len(out) >= keep:
                break
    return out


async def known_facts(storage: Storage, namespace: str, text: str) -> list[KnownFact]:
    rows = await storage.current_facts(namespace, READ)
    facts = [KnownFact(m.entity, m.attribute, m.value, m.text) for m in rows
             if m.entity and m.attribute and m.value is not None]
    return relevant(facts, text)


async def extract_with_known(storage: Storage, extractor: Extractor, namespace: str,
                             text: str, topic: str) -> list:
    """`extractor.extract`, given the known facts when it reads them."""
    if not reads_known(extractor):
        return await extractor.extract(text, topic)
    known = await known_facts(storage, namespace, text)
    if not reads_statements(extractor):
        return await extractor.extract(text, topic, known=known)  # type: ignore[call-arg]
    statements = await known_statements(storage, namespace)
    return await extractor.extract(text, topic, known=known,  # type: ignore[call-arg]
                                   statements=statements)


async def known_statements(storage: Storage, namespace: str) -> list[KnownStatement]:
    rows, _ = await storage.list_memories(namespace, READ_STATEMENTS, 0)
    return [KnownStatement(m.id, m.text) for m in rows if m.key is None]
