"""Which earlier statement, stored without a fact, a new value replaces.

"We monitor with Nagios." was stored as a memory without a fact: no rule keyed it, and the
attribute classifier alone was not sure enough (`classifier.MIN_SCORE`). When "Datadog is our
monitoring now" later gives (team, monitoring) a value, the old statement is read again
knowing what to look for: the same subject, a predicate the classifier places near that
attribute (`prior`'s bar: the attribute is as good as the best and beats statements that
state nothing), a value of the attribute's kind other than the new one, and no hedge,
question, negation or past. Then the new memory `replaces` it and the fact model ends it as
it ends a superseded value (`recall_core.memory.writes.replaced_statements`).

Only the newest such statement is named, and none when the new fact's key is already known
(the known fact is what it supersedes). Readings and the classifier's scores of a statement
are kept by its id, so each stored statement is read once per process, not once per job.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from recall_core import ExtractedMemory
from recall_core.contracts import KnownFact, KnownStatement
from recall_core.kit.attributes import TEAM, USER, is_many
from recall_core.kit.mentions import names, one_side, said
from recall_core.kit.transcripts import speaker_of

from . import prior
from .cues import UNSURE
from .kinds import named_values
from .known import kind, mentions
from .lexicon import TOOL_CATEGORIES
from .prototypes import PROTOTYPES
from .reading import read_all
from .sentences import split_sentences
from .triples import Reading

#: statement readings kept (by memory id)
CACHE = 4096


class Earlier:
    """Reads stored statements once each and finds the one a new value replaces."""

    def __init__(self) -> None:
        self._readings: OrderedDict[str, list[tuple[str, Reading]]] = OrderedDict()
        self._scores: OrderedDict[str, dict[str, float]] = OrderedDict()

    def mark(self, out: Sequence[ExtractedMemory], known: Sequence[KnownFact],
             statements: Sequence[KnownStatement], classifier: Any) -> None:
        """Set `replaces` on the memories of `out` whose single-valued fact a statement
        stated before (in place). Runs in the worker's thread: it may encode."""
        keys = {(k.entity, k.attribute) for k in known}
        for em in out:
            if not (em.entity and em.attribute and em.value) or is_many(em.attribute) \
                    or (em.entity, em.attribute) in keys:
                continue
            new_kind = kind(em.value)
            new_kind = new_kind if new_kind in TOOL_CATEGORIES else None
            for s in statements:  # newest first
                if s.text.strip() == em.text.strip():
                    continue
                if self._states(s, em, new_kind, classifier):
                    em.replaces = [s.id]
                    break

    def _states(self, s: KnownStatement, em: ExtractedMemory, new_kind: str | None,
                classifier: Any) -> bool:
        for clause, reading in self._read(s):
            if UNSURE.search(clause) or prior.NOT.search(clause):
                continue
            if new_kind is not None and _names_its_kind(clause, reading, em, new_kind):
                return True
            if reading.subject.entity != em.entity or not reading.predicate \
                    or em.attribute not in PROTOTYPES:
                continue
            values = [f.value for f in reading.classified(em.attribute) if not f.ended]
            if not values or any(prior.same(v, em.value or "") for v in values):
                continue
            scores = self._scored(s.id, reading.predicate, classifier)
            if prior.near(scores, em.attribute):
                return True
        return False

    def _read(self, s: KnownStatement) -> list[tuple[str, Reading]]:
        if (found := self._readings.get(s.id)) is not None:
            self._readings.move_to_end(s.id)
            return found
        speaker = speaker_of(s.text)
        body = s.text.split(":", 1)[1].strip() if speaker else s.text
        found = [pair for statements in read_all(split_sentences(body), speaker)
                 for pair in statements]
        _keep(self._readings, s.id, found)
        return found

    def _scored(self, sid: str, predicate: str, classifier: Any) -> dict[str, float]:
        key = f"{sid}\x00{predicate}"
        if (found := self._scores.get(key)) is not None:
            return found
        found = dict(classifier.scores(predicate))
        _keep(self._scores, key, found)
        return found


def _names_its_kind(clause: str, reading: Reading, em: ExtractedMemory, new_kind: str) -> bool:
    """The statement names another value of the new value's kind (`new_kind`, a tool's, held
    one at a time), for the same subject: "The bookings app I built for the salon uses MySQL"
    before "bookings app's on Postgres"; "Our team basically lives in Slack" before
    "everything's on Microsoft Teams" (the speaker and the team are one side). No classifier
    needed: the kind says the fact."""
    if not one_side(reading.subject.entity, em.entity) and not (
            em.entity not in (USER, TEAM) and names(em.entity, said(clause))):
        return False
    value = em.value or ""
    return any(kd == new_kind and not mentions(v, value) and not mentions(value, v)
               for _, v, kd in named_values(clause))


def _keep(cache: OrderedDict, key: str, value: Any) -> None:
    cache[key] = value
    while len(cache) > CACHE:
        cache.popitem(last=False)
