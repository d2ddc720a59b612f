"""The rule-based extractor: deterministic, offline, the default without an API key.

A text becomes the statements it makes (`statements`: "I live in Berlin and I prefer tea"
is two), each its own memory with its own fact: who it is about (`subjects`), which fact of
the inventory it states however it is phrased (`person_frames`, `many_frames`,
`tool_frames`), and whether it adds, replaces or ends a value (`triples`). Chit-chat ("thanks!",
"lol ok") yields nothing; statements that state no fact are kept as memories all the same,
and two of them from one sentence stay one memory, as the sentence said them.

Memories are self-contained (`fragments`): a sentence that cannot stand alone ("It was so
powerful.", "Yes, last week.") stays with the statement before it, and a transcript line's
speaker ("Caroline: ...") is carried into every memory of the line and is the entity of its
first-person facts.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from recall_core import ExtractedMemory, Extractor, Memory
from recall_core.contracts import ExtractionError, KnownFact, KnownStatement

from .fragments import group_fragments, lower_speaker, split_speaker
from .kinds import by_kind, holder, owned
from .providers_named import provider_named
from .devices_given import device_given
from .known import apply_known, join_endings
from .single_endings import ends_single
from .lexicon import TOOL_CATEGORIES
from .sentences import cased, is_chitchat, split_sentences, words
from .settings import StubSettings
from .classifier import load as load_classifier
from .earlier import Earlier
from .prior import read_with_known, says_change
from .statements import opens_with_subject
from .reading import read_all, second_one
from .triples import Fact, Reading
from .typed_values import eaten

log = logging.getLogger("recall.extractors")

_AUTO: Any = object()


_I = re.IGNORECASE

# Strong taste words: these decide "preference" before anything else.
_PREFERENCE = re.compile(
    r"\b(?:prefer\w*|preference|favou?rites?|rather|fan of|can't stand|cannot stand|go-to)\b|"
    r"\b(?:i|we)\s+(?:\w+\s+)?(?:like|love|enjoy|hate|dislike|detest|adore)\b", _I)
_DECISION = re.compile(
    r"\b(?:decided|decide|decision|chose|chosen|choose|settled on|agreed (?:to|on|that)|opted|"
    r"going with|go with|went with|from now on|the plan is|plan(?:ning)? to|we'll|we will|let's|"
    r"(?:we|i)(?:'re| are|'m| am) going to|picked|selected|approved|resolved to|"
    r"committed to|(?:we|i) should)\b", _I)
_SEQUENCE = re.compile(
    r"(?:^|[,;:]\s*|\band\s+)(?:first(?:ly)?|then|next|finally|afterwards|lastly|after that)\b|"
    r"\bstep\s*\d|\bsteps?\b|->|=>|\b(?:make sure|ensure|remember to|don't forget|do not forget|"
    r"in order to|how to)\b|\bbefore (?:you|we|pushing|deploying|merging|committing|running|"
    r"releasing|starting)\b|^to (?:deploy|build|run|install|release|set up|setup|configure|test|"
    r"start|restart|debug|fix|update|upgrade|publish|reset|rotate|migrate|create|add|get)\b", _I)
_ALWAYS = re.compile(r"\b(?:always|never)\b", _I)
_HABIT = re.compile(r"\b(?:i|we)\s+(?:\w+\s+)?(?:always|never|usually|typically)\b|^please\b", _I)
_IMPERATIVES = set("""
run use install open click call set add create check restart deploy build type go navigate
copy paste execute push pull merge commit tag update upgrade delete remove select press enter
start stop edit avoid ensure keep put configure export source cd pip npm git docker kubectl
make ssh login wait verify test rebase squash bump don't never always clone fetch apply
rollback roll revert drop back restore mount ping curl
""".split())

_EMPHASIS = re.compile(
    r"\b(?:important|importantly|critical|crucial|must|remember|don't forget|do not forget|"
    r"essential|mandatory|urgent|asap|under no circumstances)\b", _I)
_MILD_EMPHASIS = re.compile(r"\b(?:always|never|make sure|do not|don't|note that|required)\b", _I)
_HEDGE = re.compile(r"\b(?:maybe|might|perhaps|probably|possibly|not sure|i think|i guess|"
                    r"i suppose|kind of|sort of|somewhat|i believe)\b", _I)
_SPECIFIC = re.compile(r"\d|https?://|`|/\w+/|\w+\.\w{2,4}\b")

_BASE_IMPORTANCE = {"decision": 0.65, "preference": 0.6, "procedure": 0.6, "fact": 0.45}


_IDENTITY = {"name", "employer", "occupation", "location", "hometown", "birthday", "email",
             "age", "diet", "pronouns", "timezone", "partner", "manager", "school",
             "relationship_status", "phone_number"}
_TASTES = ("likes", "dislikes", "favorite_", "theme", "answer_language", "preference:")


def kind_of(fact: Fact | None) -> str | None:
    """What a fact is about, for the type and importance heuristics."""
    if fact is None:
        return None
    if fact.attribute in _IDENTITY:
        return "identity"
    if fact.attribute.startswith(_TASTES) and not fact.ended:
        return "preference"
    return "fact"


def classify(sentence: str, fact: Fact | None = None) -> str:
    """preference | decision | procedure | fact, by cue phrases (first tier that matches)."""
    kind = kind_of(fact)
    if _PREFERENCE.search(sentence) or kind == "preference":
        return "preference"
    if _DECISION.search(sentence):
        return "decision"
    if kind == "identity":
        return "fact"  # "call me Bob" is who the user is, not an instruction
    # An imperative opening is a step ("Run the migrations"); a "please" request is a wish
    # about how things should be done ("Please keep answers short").
    first = (words(sentence)[:1] or [""])[0]
    habit = _HABIT.search(sentence)
    if (_SEQUENCE.search(sentence) or first in _IMPERATIVES
            or (_ALWAYS.search(sentence) and not habit)):
        return "procedure"
    if habit:
        return "preference"
    return "fact"


def importance(sentence: str, kind: str, fact: Fact | None = None) -> float:
    """A 0..1 guess: type base, + structure, + emphasis and specifics, - hedges and questions."""
    score = _BASE_IMPORTANCE[kind]
    if fact is not None:
        score += 0.1
        if kind_of(fact) == "identity":
            score += 0.15 if fact.attribute != "name" else 0.25
    if _EMPHASIS.search(sentence):
        score += 0.2
    elif _MILD_EMPHASIS.search(sentence):
        score += 0.1
    if sentence.rstrip().endswith("!"):
        score += 0.05
    if _SPECIFIC.search(sentence):
        score += 0.05
    if _HEDGE.search(sentence):
        score -= 0.15
    if sentence.rstrip().endswith("?"):
        score -= 0.2
    if fact is None and len(words(sentence)) < 4:
        score -= 0.05
    return round(min(0.95, max(0.05, score)), 2)


def memory(text: str, fact: Fact | None = None, classified: str | None = None
           ) -> ExtractedMemory:
    """One memory: `classified` (default: the text) is what the type and importance are read
    from, `text` what is stored (the statement with its fragments and speaker)."""
    read = classified or text
    kind = classify(read, fact)
    triple = fact.triple() if fact is not None else None
    return ExtractedMemory(
        text=text, type=kind,  # type: ignore[arg-type]
        importance=importance(read, kind, fact if triple else None),
        entity=triple[0] if triple else None, attribute=triple[1] if triple else None,
        value=triple[2] if triple else None)


# A request cut from a sentence is an instruction of its own ("..., and please keep it short",
# "..., and keep answers short please").
_REQUEST = re.compile(r"^(?:please|pls|plz)\b|\b(?:please|pls|plz)[.!]*$", re.IGNORECASE)


@dataclass
class Unit:
    """A statement (or a sentence stating no fact), with the facts it states."""

    text: str
    facts: list[Fact] = field(default_factory=list)
    #: a clause cut from a sentence that opens with its own subject: never a fragment of the
    #: statement before it ("..., and I'm diabetic")
    alone: bool = False


def classify_unread(read: list[list[tuple[str, Reading]]], classifier: Any,
                    known: Sequence[KnownFact] = ()) -> None:
    """Statements no rule read: the attribute classifier's guess, shaped into facts, then
    read again with the known facts of their subject (`prior`); and a place only a move verb
    suggests, checked ("moved to Red Hat" is a new employer)."""
    for statements in read:
        for _, reading in statements:
            if not reading.facts and reading.predicate:
                guess = classifier.guess(reading.predicate)
                if guess is not None:
                    reading.facts = reading.classified(guess.attribute)
    read_with_known(read, classifier, known)
    for statements in read:
        for _, reading in statements:
            reading.facts = [Fact(f.entity, "employer", f.value, f.ended, f.text)
                             if f.check == "place" and classifier.name_kind(f.value) == "org"
                             else f for f in reading.facts]
            # "moved to rotterdam": a place when the model reads the name as one
            reading.facts = [Fact(f.entity, f.attribute, f.value.title(), f.ended, f.text)
                             if f.check == "lower place" else f for f in reading.facts
                             if f.check != "lower place" or classifier.place_like(f.value)]
            # "my manager is leah": a name when the model reads the word as one
            reading.facts = [f for f in reading.facts
                             if f.check != "lower name" or classifier.person_like(f.value)]


def unchecked(read: list[list[tuple[str, Reading]]]) -> None:
    """Without the classifier's model, a place typed without capitals is no place."""
    for statements in read:
        for _, reading in statements:
            reading.facts = [f for f in reading.facts
                             if f.check not in ("lower place", "lower name")]


def needs_classifier(read: list[list[tuple[str, Reading]]],
                     known: Sequence[KnownFact] = ()) -> bool:
    return any(r.predicate or any(f.check for f in r.facts)
               or (known and not r.facts and r.told and says_change(clause))
               for statements in read for clause, r in statements)


# A clause told in the past tense: part of a story.
_TOLD_PAST = re.compile(r"^(?:(?:just|then|finally|already|also|even)\s+)?(?:had|was|were|went|"
                        r"did|made|got|took|saw|came|met|found|ran|gave|told|said|felt|thought|"
                        r"bought|spent|left|sat|ate|drank|won|lost|wrote|read|heard|brought|"
                        r"began|kept|slept|[a-z]+ed)\b", re.IGNORECASE)


def units_of(sentences: Sequence[str], read: list[list[tuple[str, Reading]]]) -> list[Unit]:
    """Statements with their facts, in order. Statements stating no fact are joined to the
    one before when it states none either, and a sentence stating none stays whole; a
    present statement opening with its own subject stays apart (see below)."""
    out: list[Unit] = []
    for sentence, statements in zip(sentences, read):
        found = [Unit(clause, [f for f in r.facts if f.triple() is not None],
                      alone=len(statements) > 1 and (r.subject.entity is not None
                                                     or bool(_REQUEST.search(clause))
                                                     or opens_with_subject(clause)))
                 for clause, r in statements]
        side_by_side(found, sentence)
        # A statement stating no fact joins the one before when that states none either, and
        # a sentence stating none stays whole: a story is one memory ("We had a barbecue and
        # the kids played all day"). But a statement in the present that opens with its own
        # subject is its own ("I catch the 7:10 train and my wife drops the kids at school").
        story = any(_TOLD_PAST.match(r.subject.rest or clause) for clause, r in statements)
        own = [not story and r.subject.opens(clause) for clause, r in statements]
        if not any(u.facts for u in found) and sum(own) < 2:
            out.append(Unit(sentence))
            continue
        keyless_before = False
        for unit, alone in zip(found, own):
            if not unit.facts and keyless_before and not alone:
                out[-1].text = f"{out[-1].text} {unit.text}"
            else:
                out.append(unit)
            keyless_before = not unit.facts
    return out


_CHANGE_SAID = re.compile(r"\b(?:switched|moved|migrated|replaced|instead|now|no longer|"
                          r"anymore|dropped|from)\b", re.IGNORECASE)


def side_by_side(units: list[Unit], sentence: str) -> None:
    """Two tools of one kind in one sentence with no change said ("We use Sentry for errors
    and Grafana for dashboards") are used side by side: each is a `uses` value, so neither
    supersedes the other."""
    if _CHANGE_SAID.search(sentence):
        return
    values: dict[tuple[str, str], set[str]] = {}
    for unit in units:
        for f in unit.facts:
            if not f.ended and f.attribute in TOOL_CATEGORIES:
                values.setdefault((f.entity, f.attribute), set()).add(f.value.lower())
    shared = {key for key, vals in values.items() if len(vals) > 1}
    for unit in units:
        unit.facts = [Fact(f.entity, "uses", f.value, f.ended, f.text)
                      if (f.entity, f.attribute) in shared else f for f in unit.facts]


_LIST_GLUE = re.compile(r"^\s*(?:,|,?\s*and|&|\+)\s*$", re.IGNORECASE)


def _listed(text: str, facts: list[Fact], fact: Fact) -> list[str]:
    """The values listed in the statement with `fact`'s: those of its attribute, or every
    value when they stand side by side as one list ("I use 1Password and Obsidian": two
    tools of two kinds, each its own memory)."""
    same = [f.value for f in facts if not f.ended and f.attribute == fact.attribute]
    values = [f.value for f in facts if not f.ended]
    at = [text.lower().find(v.lower()) for v in values]  # a value may be cased as it is read
    if len(values) < 2 or len(values) == len(same) or min(at) < 0 or at != sorted(at):
        return same
    gaps = [text[at[i] + len(values[i]):at[i + 1]] for i in range(len(values) - 1)]
    return values if all(_LIST_GLUE.match(g) for g in gaps) else same


_ITEM_HEAD = re.compile(r"\b(?:a|an|one|two|three|four|five|six|some|\d+)\s", re.IGNORECASE)
_GLUE_IN = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*", re.IGNORECASE)


def _phrase_item(text: str, values: list[str], value: str) -> str | None:
    """Items that are phrases, not bare values ("a dog called Pepper and two rabbits", "a cat,
    a hamster and some goldfish"): the statement with the whole phrase of one item ("We have
    two rabbits"), not stitched from parts of two ("a dog called rabbits"). None when the
    items are bare values (or the phrases cannot be told apart)."""
    low = text.lower()
    at = [low.find(v.lower()) for v in values]
    if min(at) < 0 or at != sorted(at):
        return None
    # each value to the end of its word ("rabbit" in "rabbits")
    ends = [a + len(v) + len(re.match(r"\w*", text[a + len(v):])[0]) for a, v in zip(at, values)]
    gaps = [text[ends[i]:at[i + 1]] for i in range(len(values) - 1)]
    if all(_LIST_GLUE.match(g) for g in gaps) and ends[-1] == at[-1] + len(values[-1]):
        return None
    heads = [m for m in _ITEM_HEAD.finditer(text[:at[0]])]
    if not heads:
        return None
    starts = [heads[-1].start()]
    for i, gap in enumerate(gaps):
        glue = list(_GLUE_IN.finditer(gap))
        if not glue:
            return None
        starts.append(ends[i] + glue[-1].end())
    k = next((i for i, v in enumerate(values) if v.lower() == value.lower()), None)
    if k is None:
        return None
    return text[:starts[0]] + text[starts[k]:ends[k]] + text[ends[-1]:]


def _item_text(text: str, values: list[str], value: str) -> str:
    """ "I'm allergic to peanuts and shellfish" -> "I'm allergic to shellfish": the list in a
    statement replaced by one of its items, so each item is a memory of its own."""
    low = text.lower()  # a value may be cased as it is read ("French" in "i speak french")
    first, last = low.find(values[0].lower()), low.rfind(values[-1].lower())
    if len(values) < 2 or first < 0 or last < first:
        return text
    if (phrased := _phrase_item(text, values, value)) is not None:
        return phrased
    at = low.find(value.lower())
    said = text[at:at + len(value)] if at >= 0 else value  # the item as it was typed
    return text[:first] + said + text[last + len(values[-1]):]


class StubExtractor(Extractor):
    """Rule-based extractor: no network, same input -> same output."""

    name = "stub"
    prompt_version = "rules-v3"
    reads_known = True
    reads_statements = True

    def __init__(self, settings: StubSettings | None = None, classifier: Any = _AUTO):
        self.settings = settings or StubSettings()
        if classifier is _AUTO:
            classifier = load_classifier() if self.settings.classifier == "auto" else None
        #: reads the statements no rule reads (`classifier`); None: rules alone
        self.classifier = classifier
        self._earlier = Earlier()

    async def extract(self, text: str, topic: str = "", known: Sequence[KnownFact] = (),
                      statements: Sequence[KnownStatement] = ()) -> list[ExtractedMemory]:
        speaker, body = split_speaker(text)
        if speaker is None:
            speaker, body = lower_speaker(text)  # "gina: i work at ..." is Gina's, as "Gina:"
        seen: set[str] = set()
        kept = []
        for sentence in split_sentences(body):
            key = " ".join(words(sentence))
            if is_chitchat(sentence) or key in seen:  # a sentence said twice is one memory
                continue
            seen.add(key)
            kept.append(cased(sentence))
        read = read_all(kept, speaker)
        if self.classifier is not None and needs_classifier(read, known):
            try:
                await asyncio.to_thread(classify_unread, read, self.classifier, known)
            except Exception as exc:  # noqa: BLE001 - the model is loaded at first use
                # As when it cannot load at start: the rules read alone from now on, said once.
                log.warning("stub: the attribute classifier could not run (%s: %s); "
                            "statements are read by rules alone", type(exc).__name__, exc)
                self.classifier = None
        if self.classifier is None:
            unchecked(read)
        for clauses in read:
            for clause, reading in clauses:
                if not reading.facts:
                    reading.facts = by_kind(clause, reading.subject, speaker) \
                        or owned(clause, reading.subject, speaker) \
                        or provider_named(clause, reading.subject, speaker) \
                        or device_given(clause, speaker)
                reading.facts = [holder(f, speaker) for f in reading.facts]
                # whichever reading named it, a tool said as food is none ("eating fish")
                reading.facts = [f for f in reading.facts if f.attribute not in TOOL_CATEGORIES
                                 or not f.value or not eaten(clause, f.value)]
        apply_known(kept, read, known, speaker)
        ends_single(kept, read, known, speaker)
        for clauses in read:  # "personal email", "my personal laptop": a second one's own key
            for clause, reading in clauses:
                reading.facts = [second_one(f, clause) for f in reading.facts]
        units = join_endings(units_of(kept, read), known)
        out: list[ExtractedMemory] = []
        for group in group_fragments([(u.text, u.facts or (u.alone or None)) for u in units]):
            head, facts = next(((s, f) for s, f in group if isinstance(f, list)), group[0])
            joined = " ".join(s for s, _ in group)
            stored = f"{speaker}: {joined}" if speaker else joined
            if not isinstance(facts, list) or not facts:
                out.append(memory(stored))
                continue
            for fact in facts:
                listed = _listed(stored, facts, fact)
                own = _item_text(stored, listed, fact.value) if not fact.ended else stored
                if fact.text and len(group) == 1:
                    own = f"{speaker}: {fact.text}" if speaker else fact.text
                # Classified on the whole group (cue phrases may sit in any of its sentences).
                out.append(memory(own, fact, joined))
        if statements and self.classifier is not None and any(m.entity for m in out):
            try:
                await asyncio.to_thread(self._earlier.mark, out, known, statements,
                                        self.classifier)
            except Exception as exc:  # noqa: BLE001 - as for classify_unread above
                log.warning("stub: the attribute classifier could not run (%s: %s); "
                            "statements are read by rules alone", type(exc).__name__, exc)
                self.classifier = None
        return out

    async def merge(self, memories: Sequence[Memory], topic: str = "") -> ExtractedMemory:
        return merge_memories(memories)


def _ends(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else text + "."


def merge_memories(memories: Sequence[Memory]) -> ExtractedMemory:
    """Deterministic merge of a cluster.

    * Triples: when the memories share one (entity, attribute), the newest value wins and the
      texts that state an older value are dropped (they are no longer true). Different keys:
      no triple.
    * Text: the most important memory (newest on ties) first, then every other text that adds
      words not yet said, oldest first. Near-duplicates collapse to one.
    * Type: the most common; importance: the highest.
    """
    if not memories:
        raise ExtractionError("merge() needs at least one memory; got an empty cluster.",
                              retryable=False)
    ordered = sorted(memories, key=lambda m: (m.created_at, m.id))
    keyed = [m for m in ordered if m.entity and m.attribute and m.value is not None]
    keys = {(m.entity, m.attribute) for m in keyed}
    triple: tuple[str, str, str] | None = None
    kept = list(ordered)
    if len(keys) == 1:
        newest = keyed[-1]
        triple = (newest.entity, newest.attribute, newest.value)  # type: ignore[assignment]
        kept = [m for m in ordered if m.value is None or m.value == newest.value
                or (m.entity, m.attribute) not in keys]

    primary = max(kept, key=lambda m: (m.importance, m.created_at, m.id))
    parts = [primary]
    said = set(words(primary.text))
    for m in kept:
        if m is primary:
            continue
        new_words = set(words(m.text)) - said
        if new_words:
            parts.append(m)
            said |= new_words

    counts = Counter(m.type for m in kept)
    best = max(counts.values())
    kind = primary.type if counts[primary.type] == best else sorted(
        t for t, c in counts.items() if c == best)[0]
    return ExtractedMemory(
        text=" ".join(_ends(m.text) for m in parts) if len(parts) > 1 else primary.text,
        type=kind,
        importance=max(m.importance for m in memories),
        entity=triple[0] if triple else None,
        attribute=triple[1] if triple else None,
        value=triple[2] if triple else None,
    )
