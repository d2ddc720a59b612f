"""Cutting a value out of the words after a cue: "Globex since March" -> "Globex".

A value ends at the first clause boundary or time phrase; what is left must be a clean value
(not "it", not "great", not a sentence). Lists ("peanuts, shellfish and penicillin") are
split for the many-valued facts, and a correction inside the value ("shellfish, not
peanuts") gives the value and the one it replaces.
"""

from __future__ import annotations

import re

from recall_core.kit.attributes import clean_value

_I = re.IGNORECASE

_TIME = (r"|\s(?:last|this|next|past)\s+(?:year|month|week|summer|winter|spring|fall|autumn|"
         r"night|time|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
         r"sprint|quarter|term|semester|season|release|cycle|review|round|reorg|fortnight|"
         r"january|february|march|april|june|july|august|september|october|november|"
         r"december)\b|"
         r"\s(?:over|during) the\s+(?:summer|winter|spring|fall|autumn|weekend|holidays?|"
         r"break)\b|"
         r"\s(?:yesterday|today|tonight|tomorrow|ago|since|until|starting|from now on)\b|"
         r"\s(?:mon|tues|wednes|thurs|fri|satur|sun)day\s*$|"
         r"\sin\s+(?:19|20)\d\d\b|\s(?:a|one|two|three|four|five|few|a few|several|a couple(?: of)?|\d+)\s+"
         r"(?:years?|months?|weeks?|days?)\b|\s(?:for|over) the (?:last|past)\b|"
         r"\s(?:in|on|since|by|until|from)\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|"
         r"dec)[a-z]*\b|"
         # "moved to Leeds on Saturday", "engaged to Marcus on sunday": a day is no part of it
         r"\s(?:on|since|by|until|from)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|"
         r"sunday|(?:the\s+)?weekend)s?\b")
_WORDS = (
    r"\s[-\u2013\u2014]\s|\s(?:because|coz|cuz|since|but|so that|so|which|who|where|when|"
    # "Spectrum and it keeps dropping": a clause of its own follows
    r"and (?:it|it's|he|she|they|we|i|i'm)|"
    r"while|although|though|unless|if|instead|anymore|any more|now|nowadays|these days|"
    r"at the moment|right now|currently|lately|recently|again|too|as well|also|either|here|"
    r"full[- ]time|part[- ]time|remotely|every|each|daily|most days|mostly|for good|"
    r"most of the time|all the time|thanks|btw|fyi|haha|lol|after all|by the way|"
    # how the speaker comments on the saying ("switching to Emacs apparently"): no part of it
    r"apparently|obviously|honestly|actually|probably|definitely|clearly|of course|tbh|imo|"
    r"fwiw|i think|i guess|i suppose|side by side|"
    r"for everything|for all|for work|at work|at home|these days|entirely|exclusively|"
    r"religiously|altogether|mainly|primarily|like (?:everyone|everybody) else|like most "
    r"(?:people|folks|devs|developers)|like the rest of (?:us|the team))\b") + _TIME
COMMON = r"[,;(]|:(?!\d)|" + _WORDS
#: Where a list of values ends: like COMMON, but commas separate its items.
LIST = r"[;(]|:(?!\d)|" + _WORDS + r"|\s(?:than|over|more than|rather than|instead of)\b" + \
    r"|,?\s(?:basically|literally|anything|whatever|stuff like that|and so on|etc)\b"
TOOL = COMMON + r"|\s(?:for|to|at|in|on|with|and|as|from|over|rather than|than|because|after|before|once|across|throughout|through|via)\b"
# "based in Bristol doing freelance photography": what one does there is no part of the place
_DOING = (r"|\s(?:doing|working|running|studying|teaching|freelancing|building|making|selling|"
          r"writing|looking|trying|waiting|hoping|planning|getting|spending|renting|sharing|"
          r"raising|juggling)\b")
PLACE = COMMON + r"|\s(?:for|with|and|as|from|near|to|because|after|to be)\b" + _DOING
ORG = COMMON + r"|\s(?:as|in|on|with|and|for|from|to|doing|after|near|within|via)\b"
NAME = COMMON + r"|\s(?:and|from|by|at|in|on|i|i'm|im|but|who|is|was)\b"
THING = COMMON + r"|\s(?:because|than|over|more than|rather than|when|instead of)\b"

_VAGUE = {
    "it", "this", "that", "them", "these", "those", "something", "anything", "everything",
    "nothing", "stuff", "things", "one", "same", "what", "which", "there", "here", "him",
    "her", "us", "myself", "yourself", "you", "me", "home", "night", "weekends", "all",
    "both", "either", "neither", "whatever", "lots", "much", "more", "so", "too", "a lot",
    "one of them", "the same", "some", "none", "other", "others", "another one", "him too",
    "a bit", "a little", "that one", "this one", "well", "back", "out", "up", "over",
    "just", "hours", "mine", "now", "again", "here", "there",
}
# What a thing that ended "is": never a value of its own.
# ("history" and "toast" are values too: a major, a breakfast; a name keeps its capital:
# "the Grateful Dead")
_GONE = frozenset({"gone", "dead", "finished", "rusty", "kaput"})
EVALUATIVE = {
    "great", "good", "bad", "nice", "cool", "awesome", "amazing", "terrible", "awful",
    "fine", "ok", "okay", "better", "worse", "best", "worst", "perfect", "horrible", "weird",
    "important", "hard", "easy", "difficult", "done", "ready", "busy", "tired", "here",
    "sure", "glad", "happy", "sorry", "excited", "not sure", "so excited", "so happy",
}


# Words a cut can leave hanging at a value's end: "dark mode in (every editor)".
_DANGLING = re.compile(r"(?:\s+(?:in|on|at|for|with|to|of|and|or|the|a|an|my|our|by|from|"
                       r"into|like|as))+\s*$", _I)


_EMOJI = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]+")


def value(raw: str, stops: str = COMMON, max_words: int = 6) -> str | None:
    """Cut `raw` at the first clause boundary; None when what is left is not a clean value."""
    raw = _EMOJI.sub(" ", raw).strip()  # "senior analyst 🎉"
    head = re.split(stops, " " + raw + " ", maxsplit=1, flags=_I)[0]
    # A clause after a comma opens with a verb in -ed/-ing ("..., started last week"); a
    # capitalised word there is a name in the list ("Java, Spring and Oracle").
    out = clean_value(_DANGLING.sub("", head))
    tokens = out.split()
    if not tokens or len(tokens) > max_words:
        return None
    low = out.lower()
    if low in _VAGUE or low in EVALUATIVE or tokens[0].lower() in {"it", "that", "this",
                                                                    "them", "not", "no"}:
        return None
    if tokens[-1] in _GONE:
        return None  # "my German is (basically) gone": an ending, not a value
    return out


_ITEM_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|as well as|plus)\s+", _I)


def items(raw: str, stops: str = LIST, max_words: int = 4) -> list[str]:
    """The values of a list ("peanuts, shellfish and penicillin"); one value when it is not a
    list. The list ends where a value would (`stops` minus its commas)."""
    head = re.split(stops, " " + raw + " ", maxsplit=1, flags=_I)[0]
    # ", started last week" opens a clause; in a list of activities ("hiking, climbing and
    # squash", "yoga, running, and swimming") a word in -ing that the list goes on after, or
    # ends with, is the next one
    ing = r"(?!\s*(?:,|and\b|or\b|&|$))"
    head = re.split(r"\s+(?:and|but|so)\s+(?:i|we|my|our|he|she|they)\b|,\s+(?:i|we|my|our|he|"
                    r"she|they)\b|,\s+(?:(?-i:[a-z]\w*ed)|(?-i:[a-z]\w*ing)" + ing + r"|"
                    r"no more|not)\b", head, maxsplit=1, flags=_I)[0]
    # "both GCP and Azure", "..., plus Vim": words that open a list or an item, no value's
    head = re.sub(r"^\s*(?:both|either)\s+", "", head, flags=_I)
    parts = [re.sub(r"^\s*plus\s+", "", p, flags=_I) for p in _ITEM_SPLIT.split(head.strip())
             if p.strip()]
    out = []
    for part in parts:
        v = value(part, COMMON, max_words)
        if v is None:
            return []  # one part is not a value: not a list of values
        out.append(v)
    return out


_CORRECTION = re.compile(r"^(?P<new>.+?),?\s+(?:not|rather than|instead of)\s+(?P<old>.+)$|"
                         r"^not\s+(?P<old2>.+?),?\s+(?:but|it's|it is|it was|rather)\s+"
                         r"(?P<new2>.+)$", _I)


def correction(raw: str, stops: str = THING, max_words: int = 5
               ) -> tuple[str, str] | None:
    """("shellfish", "peanuts") for "shellfish, not peanuts" or "not peanuts but shellfish"."""
    m = _CORRECTION.match(raw.strip().rstrip(".!"))
    if not m:
        return None
    new, old = (m["new"], m["old"]) if m["new"] else (m["new2"], m["old2"])
    a, b = value(new, stops, max_words), value(old, stops, max_words)
    return (a, b) if a and b else None
