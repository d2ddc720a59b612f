"""One's bank, gym, internet provider, pharmacy, supermarket, airline or parcel carrier,
named in passing: "the sort code for my Nationwide account", "the spin classes that come with
my David Lloyd membership", "AT&T fiber got installed today", "The Virgin Media engineer is
coming Thursday", "I get my prescriptions filled at the CVS on Main", "we ship all our Etsy
orders with UPS".

No frame reads these (the statement is about something else), but the provider named as the
holder of one's account or membership, as the one whose line was just put in, or beside the
habit it serves, is the one the speaker has now. Only the speaker's ("my", "our", or a line
installed for them), never someone else's, and never when the statement tells the past,
negates or ends it ("closing my Chase account", "the old Virgin box").
"""

from __future__ import annotations

import re

from recall_core.kit.attributes import USER

from .change_words import DISCARDED, NEGATED, PAST_SAID
from .fact import Fact
from .kinds import named_values
from .lexicon import category_of
from .subjects import Subject

_I = re.IGNORECASE

_NAME = r"(?P<v>(?-i:[A-Z][\w&'.-]*)(?:\s(?-i:[A-Z][\w&'.-]*)){0,2})"
# "my Nationwide account", "our new Monzo joint account", "my David Lloyd membership"
_HELD = re.compile(r"\b(?:my|our)\s+(?:new\s+)?" + _NAME + r"\s+(?:(?:current|savings|joint|"
                   r"checking|business|bank)\s+)?(?:account|membership|debit card|card)\b", _I)
_HELD_KINDS = frozenset({"bank", "gym"})
# "AT&T fiber got installed today", "we had Google Fiber put in", "fiber from Sonic installed
# on friday", "The Virgin Media engineer is coming", "the ACT Fibernet guy came"
_LINE = r"(?:fiber|fibre|fibernet|broadband|internet)"
_FITTED = r"(?:installed|put in|fitted|connected|hooked up)"
_INSTALLED = re.compile(
    r"\b" + _NAME + r"\s+" + _LINE + r"\b(?:\s+\w+){0,3}?\s+(?:got\s+|was\s+|is\s+|being\s+)?"
    + _FITTED + r"|\b(?:had|got)\s+" + _NAME.replace("?P<v>", "?P<w>") + r"\s+(?:" + _LINE +
    r"\s+)?" + _FITTED + r"|\b" + _LINE + r"\s+from\s+" + _NAME.replace("?P<v>", "?P<x>") +
    r"\s+(?:got\s+|was\s+)?" + _FITTED + r"|\b" + _NAME.replace("?P<v>", "?P<y>") +
    r"(?:\s+" + _LINE + r")?\s+(?:engineer|technician|tech|guy|installer)s?\s+(?:came|is coming|"
    r"are coming|coming|installed|fitted|connected)\b", _I)
_NOT_NOW = re.compile(r"\b(?:was|were|old|previous|former|closing|closed|close|cancel|"
                      r"cancelled|canceled|cancelling|leaving|left|" + PAST_SAID + "|" +
                      NEGATED + "|" + DISCARDED + r")\b", _I)


# The shops and carriers one uses by habit, named beside the habit ("I get my prescriptions
# filled at the CVS on Main", "we ship all our Etsy orders with UPS", "Aldi is where I shop
# now", "I always fly Delta"): the one of its kind the speaker uses.
_HABITS = {
    "shipping_carrier": re.compile(r"\b(?:ship|ships|shipping|shipped|parcels?|orders|postage|"
                                   r"labels|collect|collects|collection|pickup)\b", _I),
    "pharmacy": re.compile(r"\b(?:prescriptions?|meds|medication|tablets|pharmacy|chemist|"
                           r"insulin|refills?|blister packs?)\b", _I),
    "grocery_store": re.compile(r"\b(?:grocer(?:y|ies)|food shop|big shop|weekly shop|"
                                r"where (?:i|we) shop|(?:weekly\s+)?\w+ run)\b", _I),
    "airline": re.compile(r"\b(?:fly|flying|flights?|status|airline|air miles|frequent flyer)\b",
                          _I),
}


def _habitual(text: str, me: str) -> list[Fact]:
    found: dict[str, set[str]] = {}
    for _, value, kind in named_values(text):
        if kind in _HABITS:
            found.setdefault(kind, set()).add(value)
    return [Fact(me, kind, next(iter(values))) for kind, values in found.items()
            if len({v.lower() for v in values}) == 1 and _HABITS[kind].search(text)]


def provider_named(text: str, subject: Subject, speaker: str | None) -> list[Fact]:
    """The speaker's bank, gym or internet provider said in passing, or a shop or carrier
    named beside the habit it serves, or nothing."""
    if subject.kind == "other" or _NOT_NOW.search(text):
        return []
    me = speaker.lower() if speaker else USER
    if subject.entity not in (None, me) and subject.kind == "person":
        return []  # "my wife's Starling account" is hers
    held = [(m, kind) for m in _HELD.finditer(text)
            if (kind := category_of(m["v"])) in _HELD_KINDS]
    # (one named, and not as where money leaves: "move money from my Barclays account to
    # my Monzo one" names the old one)
    if len(held) == 1 and not re.search(r"\b(?:from|out of)\s+$", text[:held[0][0].start()], _I):
        return [Fact(me, held[0][1], held[0][0]["v"])]
    if m := _INSTALLED.search(text):
        value = re.sub(r"^the\s+", "", m["v"] or m["w"] or m["x"] or m["y"], flags=_I)
        # a line's provider, by its kind or said with its line ("AT&T fiber", "ACT Fibernet")
        if re.fullmatch(_LINE, value, _I):
            return []  # "Fiber installer came today": no provider named
        if category_of(value) == "internet_provider" or re.search(_LINE, m[0], _I):
            return [Fact(me, "internet_provider", value)]
    return _habitual(text, me)
