"""First-person triple rules of the stub extractor.

Each rule reads one sentence and may return a `Triple`. The rules are tried in order and the
first that matches wins; a negated or past-tense statement ("I don't use vim anymore", "I used
to live in Rome") never produces the positive triple. Keys follow `vocabulary`: entity `user`
or `team`, a category attribute for exclusive tools, `uses:<tool>` for the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .vocabulary import (TEAM, USER, canonical_key, category_of, clean_value,
                         purpose_attribute, uses_attribute)

_I = re.IGNORECASE


@dataclass(frozen=True)
class Triple:
    entity: str
    attribute: str
    value: str
    #: what the sentence is about, for the importance heuristic ("identity", "tool", ...)
    kind: str = "fact"


_TIME = (r"|\s(?:last|this|next)\s+(?:year|month|week|summer|winter|spring|fall|autumn|night|"
         r"time)\b|\s(?:yesterday|today|tonight|tomorrow|ago)\b|\sin\s+(?:19|20)\d\d\b|"
         r"\s(?:a|one|two|three|four|five|few|a few|several|\d+)\s+(?:years?|months?|weeks?|"
         r"days?)\b")

# -- value trimming ---------------------------------------------------------------------------

_COMMON_STOPS = (
    r"[,;:(]|\s[-\u2013\u2014]\s|\s(?:because|since|but|so that|which|who|where|when|while|"
    r"although|though|unless|if|instead|anymore|any more|now|nowadays|these days|"
    r"at the moment|right now|currently|lately|recently|again|too|as well|also|"
    r"full[- ]time|part[- ]time|remotely|every|each|daily|most days|mostly|"
    r"most of the time|all the time|thanks|btw|haha|lol)\b"
) + _TIME
_TOOL_STOPS = _COMMON_STOPS + r"|\s(?:for|to|at|in|on|with|and|as|from|over|rather than|than)\b"
_PLACE_STOPS = _COMMON_STOPS + r"|\s(?:for|with|and|as|from|near|to)\b"
_ORG_STOPS = _COMMON_STOPS + r"|\s(?:as|in|on|with|and|for|from|to|doing)\b"
_PREFER_STOPS = (r"[,;:(]|\s[-\u2013\u2014]\s|\s(?:because|since|but|when|while|if|unless|over|"
                 r"rather than|than|instead of|to|for)\b")
_NAME_STOPS = _COMMON_STOPS + r"|\s(?:and|from|by|at|in|i|i'm|im|but)\b"

_VAGUE = {
    "it", "this", "that", "them", "these", "those", "something", "anything", "everything",
    "nothing", "stuff", "things", "one", "same", "what", "which", "there", "here", "him",
    "her", "us", "myself", "yourself", "you", "me", "home", "night", "weekends", "all",
    "both", "either", "neither", "whatever", "lots", "much", "more",
}
_EVALUATIVE = {
    "great", "good", "bad", "nice", "cool", "awesome", "amazing", "terrible", "awful",
    "fine", "ok", "okay", "better", "worse", "best", "worst", "perfect", "horrible", "weird",
    "important", "hard", "easy", "difficult", "done", "ready", "busy", "tired", "here",
}


def _value(raw: str, stops: str, max_words: int) -> str | None:
    """Cut `raw` at the first clause boundary; None when what is left is not a clean value."""
    head = re.split(stops, " " + raw + " ", maxsplit=1, flags=_I)[0]
    value = clean_value(head)
    tokens = value.split()
    if not tokens or len(tokens) > max_words:
        return None
    if value.lower() in _VAGUE or tokens[0].lower() in {"it", "that", "this", "them"}:
        return None
    return value


# -- sentence-level guards --------------------------------------------------------------------

_ADDITIVE = re.compile(r"\b(?:also|too|as well|in addition|additionally|alongside|besides)\b", _I)
_ADVERBS = (r"really|also|now|still|just|mostly|mainly|usually|always|generally|typically|"
            r"normally|primarily|recently|finally|actually|currently|personally|only|"
            r"exclusively|definitely|basically|honestly|already|eventually|officially|happily|"
            r"then|all|both|pretty much|full[- ]time|part[- ]time|remotely|originally")
# What may sit between a subject and its verb: contractions, auxiliaries, adverbs and the
# intent phrases that make "we decided to use X" a statement about X. Never a negation, so a
# negated verb ("I don't use", "I used to live") cannot match a rule.
_GLUE = (r"(?:'ll|'ve|'m|'re|'s)?(?:\s+(?:am|are|is|have|has|been|will|shall|" + _ADVERBS +
         r"|(?:have\s+|'ve\s+)?decided\s+to|agreed\s+to|chose\s+to|going\s+to|"
         r"planning\s+to|plan\s+to))*\s+")
_SUBJ = r"\b(?P<subj>i|we|my team|our team|the team|our company|my company)"


def _entity(subj: str) -> str:
    return USER if subj.lower() == "i" else TEAM


# -- rules ------------------------------------------------------------------------------------

_NAME = re.compile(r"\b(?:my name is|my name's|call me|i go by|people call me|"
                   r"i(?:'m| am) called)\s+(?P<v>.+)", _I)
_PET = re.compile(r"\bi (?:have|own|got) (?:a|an|two|three|\d+) (?P<a>[a-z][\w -]{0,30}?)\s+"
                  r"(?:named|called)\s+(?P<v>.+)", _I)
_EMPLOYER = re.compile(
    r"\bi" + _GLUE + r"(?:work|works|working|employed|started working|got a job)"
    r"(?:\s+(?:remotely|full[- ]time|part[- ]time|currently|now|still))*"
    r"(?:\s+as\s+(?:a|an)\s+[\w -]{1,40}?)?\s+(?:at|for|by|with)\s+(?P<v>.+)", _I)
_JOINED = re.compile(r"\bi" + _GLUE + r"joined\s+(?P<v>.+)", _I)
_ROLE_AT = re.compile(r"\bi(?:'m| am)\s+(?:a|an|the)\s+(?P<role>[\w -]{2,40}?)\s+at\s+"
                      r"(?P<v>.+)", _I)
_OCCUPATION = re.compile(r"\bi" + _GLUE + r"work(?:s|ing)?\s+as\s+(?:a|an)\s+(?P<v>.+)", _I)
_LOCATION = re.compile(
    r"\bi" + _GLUE + r"(?:live|living|reside|residing|based|located|staying)\s+(?:in|near)\s+"
    r"(?P<v>.+)", _I)
_HOMETOWN = re.compile(r"\bi" + _GLUE + r"from\s+(?P<v>.+)", _I)
_BORN = re.compile(r"\bi was born in\s+(?P<v>.+)", _I)
_AGE = re.compile(r"\bi(?:'m| am)\s+(?P<v>\d{1,3})\s+(?:years?|yrs?)\s+old\b", _I)
_DIET = re.compile(r"\bi" + _GLUE + r"(?:a\s+)?(?P<v>vegetarian|vegan|pescatarian|"
                   r"pescetarian|gluten[- ]free|lactose[- ]intolerant|kosher|halal)\b", _I)
_SWITCH = re.compile(
    _SUBJ + _GLUE + r"(?P<verb>switched|switching|moved|moving|migrated|migrating|changed|"
    r"transitioned|relocated)\s+(?:over\s+|back\s+)?(?:from\s+(?P<from>.+?)\s+)?to\s+(?P<v>.+)", _I)
_CHOSE = re.compile(
    _SUBJ + _GLUE + r"(?:go with|going with|went with|chose|picked|selected|settled on|"
    r"opted for)\s+(?P<v>.+)", _I)
_USES = re.compile(
    _SUBJ + _GLUE + r"(?P<verb>use|uses|using|rely on|relies on|relying on|"
    r"run|runs|running|code in|coding in|program in|programming in|develop in|write in)\s+"
    r"(?P<v>.+)", _I)
_PREFER_PAIR = re.compile(
    r"\b(?:i|we)(?:" + _GLUE + r"(?:prefer|would rather|like)|'d\s+rather)\s+"
    r"(?:to use\s+|using\s+|use\s+)?(?P<v>.+?)\s+"
    r"(?:over|to|rather than|instead of|than|more than|better than)\s+(?P<other>.+)", _I)
_PREFER = re.compile(r"\b(?:i|we)" + _GLUE + r"prefer(?:s)?\s+(?:to use\s+|using\s+|to\s+)?"
                     r"(?P<v>.+)", _I)
_OPINION = re.compile(
    r"\bi" + _GLUE + r"(?:(?P<neg>hate|dislike|detest|can't stand|cannot stand|don't like|"
    r"do not like|don't enjoy|do not enjoy|(?:am )?not a fan of)|"
    r"(?P<pos>like|love|enjoy|adore|(?:am )?a (?:big |huge )?fan of))"
    r"\s+(?P<v>.+)", _I)
_POSSESSIVE = re.compile(r"\b(?P<subj>my|our)\s+(?P<a>[a-z][\w' -]{0,40}?)\s+(?:is|are)\s+"
                         r"(?P<v>.+)", _I)

_ATTRIBUTE_ALIASES = {
    "job": "occupation", "role": "occupation", "title": "occupation",
    "job_title": "occupation", "position": "occupation", "profession": "occupation",
    "occupation": "occupation", "employer": "employer", "company": "employer",
    "workplace": "employer", "birthday": "birthday", "date_of_birth": "birthday",
    "dob": "birthday", "email": "email", "email_address": "email", "e-mail": "email",
    "e_mail": "email", "time_zone": "timezone", "timezone": "timezone",
    "first_name": "name", "full_name": "name", "home_town": "hometown",
    "hometown": "hometown", "city": "location", "home": "location",
}
_IDENTITY = {"name", "employer", "occupation", "location", "hometown", "birthday", "email",
             "age", "birth_year", "birthplace", "diet", "pronouns", "timezone"}
_POSSESSIVE_SKIP_FIRST = {
    "not", "no", "so", "very", "really", "too", "quite", "pretty", "kinda", "kind", "getting",
    "being", "going", "still", "also", "always", "never", "currently", "now", "in", "on",
    "at", "about", "that", "this", "it", "like", "just", "a", "an", "the", "totally",
}


def _triple(entity: str, attribute: str, value: str | None, kind: str = "fact") -> Triple | None:
    if value is None or not attribute:
        return None
    if attribute in _IDENTITY:
        kind = "identity"
    return Triple(entity, attribute, value, kind)


def _name(s: str) -> Triple | None:
    m = _NAME.search(s)
    value = m and _value(m["v"], _NAME_STOPS, 4)
    if (not value or value.split()[0].lower() in _POSSESSIVE_SKIP_FIRST
            or value.lower() in _EVALUATIVE):
        return None  # "my name is not important"
    return _triple(USER, "name", value)


def _pet(s: str) -> Triple | None:
    m = _PET.search(s)
    return m and _triple(USER, canonical_key(m["a"]) + "_name", _value(m["v"], _NAME_STOPS, 4))


def _employer(s: str) -> Triple | None:
    if m := _EMPLOYER.search(s) or _ROLE_AT.search(s):
        return _triple(USER, "employer", _value(m["v"], _ORG_STOPS, 6))
    if m := _JOINED.search(s):
        # "I joined Google": a company only when it is a proper noun ("I joined the gym")
        value = _value(m["v"], _ORG_STOPS, 4)
        if value and value[0].isupper():
            return _triple(USER, "employer", value)
    return None


def _occupation(s: str) -> Triple | None:
    m = _OCCUPATION.search(s)
    return m and _triple(USER, "occupation", _value(m["v"], _ORG_STOPS, 5))


def _location(s: str) -> Triple | None:
    if m := _LOCATION.search(s):
        return _triple(USER, "location", _value(m["v"], _PLACE_STOPS, 6))
    if m := _HOMETOWN.search(s):
        return _triple(USER, "hometown", _value(m["v"], _PLACE_STOPS, 6))
    if m := _BORN.search(s):
        value = _value(m["v"], _PLACE_STOPS, 6)
        attr = "birth_year" if value and re.fullmatch(r"\d{4}", value) else "birthplace"
        return _triple(USER, attr, value)
    return None


def _age_diet(s: str) -> Triple | None:
    if m := _AGE.search(s):
        return _triple(USER, "age", m["v"])
    if m := _DIET.search(s):
        return _triple(USER, "diet", m["v"])
    return None


def _tool_triple(subj: str, raw: str, sentence: str, kind: str = "tool",
                 fallback: str | None = None) -> Triple | None:
    """`<subj> uses <raw>`: purpose ("for CI") wins, then the tool's category, then a
    per-tool key. `fallback` is a category to use when the tool itself is unknown."""
    value = _value(raw, _TOOL_STOPS, 5)
    if value is None:
        return None
    purpose = re.search(r"\sfor\s+(?P<p>.+)", " " + raw, _I)
    if purpose:
        p = _value(purpose["p"], _TOOL_STOPS, 4)
        if p and p.lower().split()[0] not in {"now", "a", "years", "ages", "months", "weeks",
                                              "days", "work", "fun", "me"}:
            return _triple(_entity(subj), purpose_attribute(p), value, kind)
    additive = bool(_ADDITIVE.search(sentence))
    attribute = uses_attribute(value, additive=additive)
    if fallback and attribute.startswith("uses:") and not additive:
        attribute = fallback
    return _triple(_entity(subj), attribute, value, kind)


def _switch(s: str) -> Triple | None:
    m = _SWITCH.search(s)
    if not m:
        return None
    raw, verb = m["v"], m["verb"].lower()
    if verb.startswith(("moved", "moving", "relocated")) and category_of(
            _value(raw, _TOOL_STOPS, 5) or "") is None:
        # "I moved to Berlin": a place, if it looks like a proper noun.
        value = _value(raw, _PLACE_STOPS, 6)
        if value and value[0].isupper() and m["subj"].lower() == "i":
            return _triple(USER, "location", value)
        if value and value[0].isupper() and verb.startswith("relocated"):
            return _triple(TEAM, "location", value)
    previous = m["from"] and category_of(_value(m["from"], _TOOL_STOPS, 5) or "")
    return _tool_triple(m["subj"], raw, s, fallback=previous or None)


def _chose(s: str) -> Triple | None:
    m = _CHOSE.search(s)
    return m and _tool_triple(m["subj"], m["v"], s)


def _uses(s: str) -> Triple | None:
    m = _USES.search(s)
    if not m:
        return None
    tool = _value(m["v"], _TOOL_STOPS, 5) or ""
    if m["verb"].lower().startswith("run") and category_of(tool) is None:
        return None  # "I run marathons": only known tools ("I run Arch") count
    return _tool_triple(m["subj"], m["v"], s)


def _prefer(s: str) -> Triple | None:
    if m := _PREFER_PAIR.search(s):
        value, other = _value(m["v"], _TOOL_STOPS, 5), _value(m["other"], _TOOL_STOPS, 5)
        if value and other:
            pair = sorted([canonical_key(value), canonical_key(other)])
            category = category_of(value)
            if category and category == category_of(other):
                return _triple(USER, category, value, "preference")
            return _triple(USER, "preference:" + "_vs_".join(pair), value, "preference")
    if m := _PREFER.search(s):
        value = _value(m["v"], _PREFER_STOPS, 6)
        if value:
            attr = category_of(value) or "prefers:" + canonical_key(value)
            return _triple(USER, attr, value, "preference")
    return None


def _opinion(s: str) -> Triple | None:
    m = _OPINION.search(s)
    if not m or re.search(r"\b(?:would|'d)\s+(?:really\s+)?(?:like|love)\b", s, _I):
        return None  # "I'd like X" is a request, not a taste
    raw = re.sub(r"^(?:to use|using|to|it when|when)\s+", "", m["v"], flags=_I)
    target = _value(raw, _TOOL_STOPS, 5)
    if target is None:
        return None
    sentiment = "dislikes" if m["neg"] else "likes"
    return _triple(USER, "opinion:" + canonical_key(target), sentiment, "preference")


def _possessive(s: str) -> Triple | None:
    m = _POSSESSIVE.search(s)
    if not m or len(m["a"].split()) > 4:
        return None
    value = _value(m["v"], _COMMON_STOPS, 8)
    if value is None:
        return None
    first = value.split()[0].lower()
    if first in _POSSESSIVE_SKIP_FIRST or value.lower() in _EVALUATIVE:
        return None
    attr = canonical_key(m["a"])
    attr = _ATTRIBUTE_ALIASES.get(attr, attr)
    entity = USER if m["subj"].lower() == "my" else TEAM
    return _triple(entity, attr, value, "preference" if attr.startswith("favorite") else "fact")


def _negated_use(s: str) -> Triple | None:
    """ "I don't use Docker anymore": the per-tool key gets value "no" so the positive memory
    is superseded. For an exclusive category the replacement is unknown: no triple."""
    m = re.search(_SUBJ + r"\s+(?:(?:don't|do not|no longer|stopped|quit|never)\s+)"
                  r"(?:use|using|run|running)\s+(?P<v>.+)", s, _I)
    if not m:
        return None
    value = _value(m["v"], _TOOL_STOPS, 5)
    if value is None or category_of(value):
        return None
    return _triple(_entity(m["subj"]), uses_attribute(value, additive=True), "no", "tool")


_RULES: tuple[Callable[[str], Triple | None], ...] = (
    _negated_use, _name, _pet, _age_diet, _location, _employer, _occupation, _switch, _chose,
    _prefer, _opinion, _uses, _possessive,
)


def find_triple(sentence: str) -> Triple | None:
    """The triple a sentence states about the speaker (or the team), if any.

    Negations need no global guard: every rule requires the verb right after its subject
    (adverbs aside), so "I don't use vim", "I used to live in Rome" or "I'm not based in Oslo"
    match nothing, and "my name is not X" is refused by the possessive rule.
    """
    s = sentence.replace("\u2019", "'").replace("\u2018", "'")
    for rule in _RULES:
        triple = rule(s)
        if triple is not None:
            return triple
    return None
