"""A phone, laptop or operating system that is someone's now, said by how it came to them:
"My grandson set me up with an iPhone SE", "We got Zoe a Galaxy A15 for her 13th", "put
Fedora on the work laptop over the weekend", "went full Fedora".

The statement's subject is the giver (or the speaker, installing), so no frame reads it as
the holder's fact; the lexicon knows the thing's kind, and the words say whose it now is.
Never when the statement tells the past, negates it, or the thing is an accessory ("a Pixel
case").
"""

from __future__ import annotations

import re

from recall_core.kit.attributes import USER

from .change_words import NEGATED, PAST_SAID
from .fact import Fact
from .lexicon import category_of, other_device
from .subjects import person_named
from . import values as V

_I = re.IGNORECASE

_DEVICES = frozenset({"phone", "laptop"})
# "set me up with an iPhone SE", "IT gave me a MacBook Pro"
_SET_ME_UP = re.compile(r"\b(?:set|sets|setting)\s+(?:me|us)\s+up\s+with\s+|\b(?:gave|got|"
                        r"bought|handed|sent)\s+me\s+(?=(?:a|an|my|the|this)\s)", _I)
# "got Zoe a Galaxy A15", "bought my mum an iPhone"
_GOT_THEM = re.compile(r"\b(?:got|bought|gave|gotten)\s+(?P<who>(?-i:[A-Z][a-z]+)|(?:my|our)\s+"
                       r"[a-z]+|grandma|grandpa|granny|nan|nana|mum|mom|dad)\s+(?=(?:a|an)\s)",
                       _I)
# "put Fedora on the work laptop", "installed Windows 11 on it", "went full Fedora"
_PUT_ON = re.compile(r"\b(?:put|installed|loaded)\s+(?P<v>[\w.]+(?:\s[\d.]+)?)\s+on\s+"
                     r"(?:it|my|the|our|this)\b|\bwent\s+full\s+(?P<w>[\w.]+)", _I)
_NOT_NOW = re.compile(r"\b(?:was|were|" + PAST_SAID + "|" + NEGATED + r")\b", _I)


def _device(after: str) -> tuple[str, str] | None:
    v = V.value(after, V.TOOL, 4)
    if not v:
        return None
    v = re.sub(r"^(?:a|an|the|my|this)\s+", "", v, flags=_I)
    kind = category_of(v)
    return (v, kind) if kind in _DEVICES and not other_device(after[len(v):].split()[:1]) \
        else None


def device_given(text: str, speaker: str | None) -> list[Fact]:
    """The device or OS the statement says someone now has, or nothing."""
    me = speaker.lower() if speaker else USER
    # (what is said before the thing and of it: "because snaps were driving me nuts" after
    # it is no past of its)
    if (m := _SET_ME_UP.search(text)) and (found := _device(text[m.end():])) and \
            not _NOT_NOW.search(text[:m.end()]):
        return [Fact(me, found[1], found[0])]
    if (m := _GOT_THEM.search(text)) and (found := _device(text[m.end():])) and \
            not _NOT_NOW.search(text[:m.end()]):
        if who := person_named(m["who"]):
            return [Fact(who, found[1], found[0])]
    if (m := _PUT_ON.search(text)) and category_of(v := m["v"] or m["w"]) == "os" and \
            not _NOT_NOW.search(text[:m.end()]):
        return [Fact(me, "os", v)]
    return []
