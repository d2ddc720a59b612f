"""Every-day facts said in a shape of their own, read from the whole statement (`idioms`):

* the one of its kind the speaker or the team uses, said as a relative clause ("Arc is the
  only browser I can tolerate", "Go is the language we write everything in");
* how one gets to work, said as the trip ("it's a 20 min walk to the office");
* a thing given to the speaker ("work gave me a Dell XPS 15"): theirs, when it is a thing
  one has one of at a time (a laptop, a phone, a car).
"""

from __future__ import annotations

import re

from recall_core.kit.attributes import INVENTORY, TEAM, USER

from . import person_frames
from . import values as V
from .fact import Fact
from .lexicon import category_of, named
from .subjects import attribute_named

_I = re.IGNORECASE

# "Arc is the only browser I can tolerate", "Go is the language we write everything in": the
# one of its kind the speaker (or the team) uses, said as a relative clause
_THE_ONE = re.compile(r"^(?P<v>[\w .+#-]{1,30}?)\s+is\s+(?:now\s+|still\s+)?the\s+(?:only\s+|"
                      r"one\s+|main\s+|default\s+|usual\s+)?(?P<noun>[\w-]{2,20}(?:\s[\w-]{2,20})?)"
                      r"\s+(?:that\s+|which\s+)?(?P<who>i|we)\s+(?P<rel>[\w' ]{2,40}?)(?:\s+now)?$",
                      _I)
# ... not one they refuse, miss, tried or mean to try
_NOT_USED = re.compile(r"\b(?:not|never|hate|hated|dislike|miss|missed|used to|want|wanted|"
                       r"wish|would|will|might|tried|avoid|stand|recommend|suggest|like|love|"
                       r"had|was|were)\b", _I)


def the_one(text: str, speaker: str | None) -> Fact | None:
    if not (m := _THE_ONE.match(text)) or _NOT_USED.search(m["rel"]):
        return None
    attr = attribute_named(m["noun"], None)
    value = V.value(m["v"], V.TOOL, 4)
    if not value or attr not in INVENTORY or INVENTORY[attr].many or \
            category_of(value) not in (None, attr):
        return None
    team = m["who"].lower() == "we"
    if category_of(value) is None and not person_frames.proper(value):
        return None  # "sleep is the only thing I ..."
    return Fact(TEAM if team else (speaker.lower() if speaker else USER), attr, value)


# "it's a 20 min walk to the office", "takes me about 40 minutes by train": how one commutes
_TRIP = re.compile(r"^(?:it is|its|it takes me|takes me|it takes)\s+(?:about\s+|around\s+|only\s+|"
                   r"just\s+|roughly\s+)?(?:a\s+|an\s+)?(?:\d+|\w+)[- ]?(?:min|mins|minute|minutes|"
                   r"hour|hours|hr|hrs)\s+(?:(?P<mode>walk|drive|bike ride|bike|cycle|bus ride|"
                   r"train ride|tube ride|subway ride|ferry ride|commute by \w+)|by (?P<by>bike|"
                   r"car|bus|train|tube|subway|metro|tram|ferry))\s+(?:to|into|in to)\s+"
                   r"(?:work|the office|my office|campus|the lab)\b", _I)
# "work gave me a Dell XPS 15": a thing given to the speaker is theirs
_GIVEN = re.compile(r"\b(?:gave|issued|handed|got|bought|gifted)\s+me\s+(?P<v>(?:a|an|this|"
                    r"the)\s+[^,;.!]+)", _I)


def commute_or_given(text: str, speaker: str | None) -> Fact | None:
    """The commute a trip to work says, or a laptop, phone or car given to the speaker."""
    me = speaker.lower() if speaker else USER
    if m := _TRIP.match(text):
        mode = (m["mode"] or m["by"]).lower().split()
        mode = mode[-1] if mode[0] == "commute" else mode[0]
        return Fact(me, "commute", {"cycle": "bike", "car": "drive"}.get(mode, mode))
    if (m := _GIVEN.search(text)) and (tool := V.value(m["v"], V.TOOL, 5)) and \
            (category := category_of(tool)) in ("laptop", "phone", "car"):
        return Fact(me, category, named(tool))
    return None
