"""A value of a known kind said as current: "It's all Discord now", "No more Jenkins, it's
GitHub Actions now", "Ben's on a Mac now".

No frame names the fact and the classifier finds no attribute, but the statement names a
value the lexicon knows the kind of (Discord is a chat tool, a Mac an OS) and says it holds
now. A kind of value that holds one at a time (`chat_tool`, `ci`, `os`, ...) is then the
fact: the value is its current one. Only when the statement says *now* (a change or present
cue), never when it hedges, asks, supposes, negates or tells the past; when it names several
values of the kind ("no more Jenkins, it's GitHub Actions"), the last one is the current one
(what people say after "no more X", "X is gone", "from X to Y"); when it names one value and
a cue that ends it ("Mongo is gone", "we switched from Jenkins"), nothing.
"""

from __future__ import annotations

import functools
import re

from recall_core.kit.attributes import INVENTORY, TEAM, USER, is_many

from .change_words import DISCARDED, NEGATED, NOW, PAST_SAID, SWAPPED
from .cues import UNSURE
from .fact import Fact
from .lexicon import PERSONAL, TOOL_CATEGORIES, WORDS_TOO, category_of, other_device, tool_name
from .subjects import Subject

_I = re.IGNORECASE

_NOW = re.compile(r"\b(?:" + NOW + r"|gone|" + SWAPPED + r")\b", _I)
# ... nor the past or a negation (besides what cues.UNSURE refuses everywhere).
_PAST = re.compile(r"\b(?:was|were|" + PAST_SAID + r")\b", _I)
_DENIED = re.compile(r"\b(?:" + NEGATED + r")\b", _I)
# Cues that end the value they name: with one value named, it is the old one.
_ENDING = re.compile(r"\b(?:anymore|no more|replaced|gone|from|off|left|"
                     r"quit|sold|dead|" + DISCARDED + r")\b", _I)
_WORD = re.compile(r"[\w.+#-]+")
# Words that are never part of a value's name ("a Mac now", "Discord even").
_GLUE = frozenset("""now it it's is are was the a an on in at to for all just even lol so
and but or with from of my our your his her their this that these those new still""".split())


def _everyday(span: str) -> bool:
    """ "this sprint", "go": a name that is also an everyday word, said in lower case."""
    name = tool_name(span)
    return name in WORDS_TOO and re.search(rf"\b{re.escape(name)}\b", span) is not None


# One clause is looked up by several readers in turn (`by_kind`, `owned`, `providers_named`,
# `known`, `earlier`), each lookup a few hundred lexicon probes: kept for the texts of the
# last jobs, bounded.
@functools.lru_cache(maxsize=2048)
def named_values(text: str) -> tuple[tuple[int, str, str], ...]:
    """(position, value, kind) for each span of 1-3 words the lexicon knows the kind of,
    longest first at each position, in order."""
    words = [(m.start(), m.group().strip(".,")) for m in _WORD.finditer(text)]
    out, i = [], 0
    while i < len(words):
        for n in (3, 2, 1):
            names = [w for _, w in words[i:i + n]]
            span = " ".join(names)
            if i + n <= len(words) and not any(w.lower() in _GLUE for w in names[1:]) and \
                    not _everyday(span) and (kind := category_of(span)):
                out.append((words[i][0], span, kind))
                i += n
                break
        else:
            i += 1
    return tuple(out)


def by_kind(text: str, subject: Subject, speaker: str | None) -> list[Fact]:
    """The current value of a one-at-a-time kind the statement names, or nothing."""
    if subject.kind == "other" or not _NOW.search(text) or UNSURE.search(text) \
            or _PAST.search(text) or _DENIED.search(text):
        return []
    found = [(at, v, k) for at, v, k in named_values(text)
             if k in INVENTORY and not is_many(k)]
    if not found or len({k for _, _, k in found}) > 1:
        return []
    if _ENDING.search(text) and len({v.lower() for _, v, _ in found}) < 2:
        return []  # "Mongo is gone", "we switched from Jenkins": the value named is the old one
    _, value, kind = found[-1]
    if subject.entity and subject.kind in ("person", "team", "thing"):
        entity = subject.entity
    else:
        entity = (speaker.lower() if speaker else USER) if kind in PERSONAL else TEAM
    return [Fact(entity, kind, value)]


# The things one owns one of at a time, by model: "my Pixel 6 keeps dropping wifi", "my
# iPhone 11 battery dies by lunchtime", "the camera on my Galaxy S23" say which one it is.
_OWNED_KINDS = frozenset({"phone", "laptop", "car"})
#: "new" before a thing's name is no part of it ("my brand new iPhone 15")
NEW = r"(?:brand\s+)?new\s+"
_MY = re.compile(r"\b(?:my|our)\s+(?:" + NEW + r")?$", _I)
# the words a named span may open with: "my new iPhone 15", "new iPhone 15"
_MY_NEW = re.compile(r"^(?:(?P<my>my|our)\s+)?(?:" + NEW + r")?", _I)
_OWNED_ENDS = re.compile(r"\b(?:anymore|no more|replaced|replacing|replace it|gone|sold|selling|"
                         r"trade[ds]? in|traded|gave away|getting rid|got rid|old|previous|"
                         r"former|broke|broken|stolen|lost|died|dead|" + DISCARDED + r")\b", _I)


def owned(text: str, subject: Subject, speaker: str | None) -> list[Fact]:
    """The speaker's phone, laptop or car, named as theirs ("my Pixel 6 ..."): the one they
    have, said in passing. Never of someone else's ("my wife's iPhone"), nor when the
    statement tells the past, negates having it, or ends or loses the thing. A question or a
    hedge about one's own thing takes it as given ("should I upgrade my iPhone 12?", "... for
    my Honda Jazz?"), as does a complaint about it ("my Pixel 8 won't sync")."""
    if subject.kind == "other" or _PAST.search(text) or _OWNED_ENDS.search(text):
        return []
    found = []
    for at, v, k in named_values(text):
        if (held := re.search(r"['’]s\b", text[at:])) and held.start() <= len(v):
            v = text[at:at + held.start()]  # "my Civic's fuel economy": the Civic
        end = at + len(v)
        lead = _MY_NEW.match(v)
        v = v[lead.end():]
        if k in _OWNED_KINDS and (lead["my"] or _MY.search(text[:at])) \
                and not other_device(text[end:].split()[:1]) \
                and not _DENIED.search(text[:at]):  # "I don't have my Pixel 8 with me"
            found.append((v, k))
    if len({(k, v.lower()) for v, k in found}) != 1:
        return []
    value, kind = found[0]
    me = speaker.lower() if speaker else USER
    # the speaker, their team, or the thing itself as the subject ("My Pixel 6 keeps ...")
    if subject.entity not in (None, me, TEAM) and not (subject.kind == "thing" and (
            subject.entity or "").startswith(value.lower())):
        return []
    return [Fact(me, kind, value)]


def holder(fact: Fact, speaker: str | None) -> Fact:
    """A tool read as the holder of its own kind ("Zsh + oh-my-zsh now." as the shell of
    "zsh + oh-my-zsh", "Github actions runs all our builds now" as the CI of "github
    actions"): the tool is the value, and the fact is the speaker's (a personal kind) or the
    team's, as `by_kind` says for a value named alone."""
    entity, value = (fact.entity or "").lower(), (fact.value or "").lower()
    if fact.attribute not in TOOL_CATEGORIES or not value or entity in (USER, TEAM) or \
            not (entity == value or entity.startswith(value + " ")):
        return fact
    owner = (speaker.lower() if speaker else USER) if fact.attribute in PERSONAL else TEAM
    return Fact(owner, fact.attribute, fact.value, fact.ended, fact.text, fact.check)
