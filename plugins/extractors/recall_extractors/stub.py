"""The rule-based extractor: deterministic, offline, the default without an API key.

Every sentence with content becomes a memory (chit-chat like "thanks!" or "lol ok" yields
nothing), typed by cue phrases, scored by simple importance heuristics, and given an
(entity, attribute, value) triple when it matches one of the first-person rules in `patterns`.

Memories are self-contained (`fragments`): a sentence that cannot stand alone ("It was so
powerful.", "Yes, last week.") stays with the sentence before it, and a transcript line's
speaker ("Caroline: ...") is carried into every memory of the line and is the entity of its
first-person triples.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from recall_core import ExtractedMemory, Extractor, Memory
from recall_core.contracts import ExtractionError

from .fragments import group_fragments, split_speaker
from .patterns import Triple, find_triple
from .sentences import is_chitchat, split_sentences, words
from .settings import StubSettings
from .vocabulary import USER

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


def classify(sentence: str, triple: Triple | None = None) -> str:
    """preference | decision | procedure | fact, by cue phrases (first tier that matches)."""
    if _PREFERENCE.search(sentence) or (triple is not None and triple.kind == "preference"):
        return "preference"
    if _DECISION.search(sentence):
        return "decision"
    if triple is not None and triple.kind == "identity":
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


def importance(sentence: str, kind: str, triple: Triple | None = None) -> float:
    """A 0..1 guess: type base, + structure, + emphasis and specifics, - hedges and questions."""
    score = _BASE_IMPORTANCE[kind]
    if triple is not None:
        score += 0.1
        if triple.kind == "identity":
            score += 0.15 if triple.attribute != "name" else 0.25
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
    if triple is None and len(words(sentence)) < 4:
        score -= 0.05
    return round(min(0.95, max(0.05, score)), 2)


def extract_sentence(sentence: str, triple: Triple | None = None, speaker: str | None = None,
                     text: str | None = None) -> ExtractedMemory:
    """One memory: `sentence` is what is classified; `text` (default: the sentence) is what
    is stored, e.g. the sentence with its fragments and speaker."""
    triple = triple if triple is not None else find_triple(sentence)
    kind = classify(sentence, triple)
    entity = triple.entity if triple else None
    if triple is not None and speaker is not None and entity == USER:
        entity = speaker.lower()  # "Caroline: I live in Boston" is about Caroline
    return ExtractedMemory(
        text=text or sentence,
        type=kind,  # type: ignore[arg-type]
        importance=importance(sentence, kind, triple),
        entity=entity,
        attribute=triple.attribute if triple else None,
        value=triple.value if triple else None,
    )


class StubExtractor(Extractor):
    """Rule-based extractor: no network, same input -> same output."""

    name = "stub"
    prompt_version = "rules-v1"

    def __init__(self, settings: StubSettings | None = None):
        self.settings = settings or StubSettings()

    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        out: list[ExtractedMemory] = []
        seen: set[str] = set()
        speaker, body = split_speaker(text)
        kept = []
        for sentence in split_sentences(body):
            if is_chitchat(sentence):
                continue
            key = " ".join(words(sentence))
            if key in seen:  # the same sentence twice in one text is one memory
                continue
            seen.add(key)
            kept.append((sentence, find_triple(sentence)))
        for group in group_fragments(kept):
            head, triple = next(((s, t) for s, t in group if t is not None), group[0])
            joined = " ".join(s for s, _ in group)
            stored = f"{speaker}: {joined}" if speaker else joined
            # Classified on the whole group (cue phrases may sit in any of its sentences),
            # with the triple of the sentence that states one.
            out.append(extract_sentence(joined if triple is None else head, triple, speaker, stored))
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
