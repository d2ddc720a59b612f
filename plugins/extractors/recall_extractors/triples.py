"""The facts one statement states: subject -> entity, frame -> attribute and value, cues ->
whether a value is added, replaced or ended.

* Questions, wishes and plans about the future ("I might move to Berlin", "I'm thinking of
  joining Globex") state no fact: a wrong supersession loses a true memory.
* A negation or an ending ("I don't use Docker anymore", "I stopped playing tennis", "I'm no
  longer allergic to peanuts", "I used to have a cat") ends that value of a many-valued fact
  (`recall_core.attributes.ENDED`). A single-valued fact is only ever replaced by a new
  value: "I don't live in Rome anymore" names no successor and, said after the successor,
  would wrongly end it, so it states no fact.
* "I don't like X" is a dislike; "I hate X now" also ends the like, and the other way round.
* "also" / "too" add to a many-valued fact; on a single-valued one ("I also work at Globex")
  they mean a second value the fact cannot hold, so no fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recall_core.attributes import (ENDED, INVENTORY, TEAM, USER, canonical_attribute,
                                    is_many, normalise_triple, value_key)

from . import many_frames, person_frames, tool_frames, typed_values
from . import values as V
from .keys import FAVORITE_TOOLS
from .lexicon import PERSONAL, attribute_for, category_of, purpose_attribute
from .sentences import fold
from .subjects import PETS, THINGS, Subject, expand, find_subject, strip_lead

_I = re.IGNORECASE


@dataclass(frozen=True)
class Fact:
    entity: str
    attribute: str
    value: str
    ended: bool = False
    #: the memory's text when it is not the statement's ("I work as a data engineer" for
    #: the role in "I work at Northwind as a data engineer": a later employer then
    #: supersedes a text that does not name the old one)
    text: str | None = None
    #: "place": a place only a move verb suggests ("moved to Red Hat"), for the classifier
    #: to check when it is installed
    check: str | None = None

    def triple(self) -> tuple[str, str, str] | None:
        """The canonical triple (`recall_core.attributes.normalise_triple`)."""
        if self.ended:
            return normalise_triple(self.entity, f"{self.attribute}:{value_key(self.value)}",
                                    ENDED)
        return normalise_triple(self.entity, self.attribute, self.value)


@dataclass
class Cues:
    negated: bool = False
    ended: bool = False
    past: bool = False
    additive: bool = False
    change: bool = False
    future: bool = False
    #: a thought, a wish, a maybe: never a fact
    hedged: bool = False


_HYPOTHETICAL = re.compile(
    r"^(?:might|may|could|would(?! rather)|should|want to|wanna|hope to|wish|need to|"
    r"have to|am thinking (?:about|of)|was thinking (?:about|of)|am considering|consider|"
    r"considered|am trying to|try to|would like to|would love to|am hoping to|dream of|"
    r"can not wait to|am looking (?:for|at|into)|am interviewing|applied|am applying|"
    r"almost|nearly|never|if)\b", _I)
_FUTURE = re.compile(r"^(?:will|am going to|are going to|is going to|am about to|plan to|"
                     r"am planning to|are planning to|intend to|am (?:moving|starting|"
                     r"joining|relocating) (?:to |at )?\w+ (?:next|in|on|soon))\b", _I)
_NEGATION = re.compile(r"^(?:(?P<aux>do|does|did|am|is|are|was|were|have|has|had|will|would|"
                       r"can|could)\s+)?(?:not|no longer|never)\s+(?:really\s+|even\s+|"
                       r"actually\s+|currently\s+)?", _I)
_STOPPED = re.compile(r"^(?:have\s+|has\s+|just\s+|finally\s+|recently\s+)*(?P<verb>cut out|cut|axed|stopped|"
                      r"quit|gave up(?: on)?|given up(?: on)?|dropped|ditched|got rid of|"
                      r"gave away|rehomed|re-homed|sold|am done with|broke up with|"
                      r"deleted|cut out|cancelled|canceled|uninstalled|removed|killed|"
                      r"unsubscribed from|no more|grew out of|outgrew|gave)\s+", _I)
_USED_TO = re.compile(r"^(?:used to|was|were|had)\s+", _I)
_PAST = re.compile(r"^(?:was|were|had|had been|did|used to|used(?! to)|tried)\b|\b(?:until "
                   r"(?:19|20)\d\d|back (?:then|when|in (?:19|20)\d\d|in (?:college|school|"
                   r"university|uni|the day|high school))|previously|formerly|in the past|"
                   r"years ago|when i was|at the time|in my last job|before that|once upon|"
                   r"in college|in high school|as a kid|growing up)\b", _I)
# Passives said in the past tense of what is still true ("I was born in Lagos").
_STILL_TRUE = re.compile(r"^(?:was|were)\s+(?:just\s+|recently\s+|finally\s+)?(?:born|raised|"
                         r"promoted|hired|transferred|diagnosed|named|adopted|moved|migrated|"
                         r"switched|changed|upgraded|replaced|rewritten|ported|converted|"
                         r"pushed|bumped|shifted|merged|put)\b", _I)
# "too" adds a value only at the end of a clause ("I like tea too"), not in "too far".
_ADDITIVE = re.compile(r"\b(?:also|as well|in addition|additionally|another|besides)\b|"
                       r"\btoo\b(?=\s*(?:[.,!?;)]|$))", _I)
_CHANGE = re.compile(r"\b(?:now|these days|nowadays|anymore|any more|no longer|switched|"
                     r"changed my mind|lately|recently|since)\b", _I)
_ENDING = re.compile(r"\b(?:anymore|any more|no longer|not now|these days)\b", _I)
_GERUND = {"using": "use", "playing": "play", "speaking": "speak", "learning": "am learning",
           "eating": "eat", "drinking": "drink", "doing": "do", "going": "go",
           "liking": "like", "running": "run", "coding in": "code in", "taking": "take"}


# Said anywhere in a statement, these make it a thought, not a fact ("I've been thinking
# about going vegan", "not sure I'll stay at Acme").
_HEDGE = re.compile(r"\b(?:thinking (?:about|of)|considering|wondering (?:if|whether|about)|"
                    r"not sure (?:if|whether|about|i)|tempted to|debating (?:whether|if)?|"
                    r"might|maybe|perhaps|would like to|hoping to|hope to|plan(?:ning)? to|"
                    r"want(?:s)? to|if i|in case|someday|one day|eventually)\b", _I)


_PETLIKE = re.compile(r"^(?:re-?homed|gave away|gave|sold)$")


def _ended_object(verb: str, body: str) -> str | None:
    """What an ending ends, as the predicate that would state it ("stopped using Docker" ->
    "use Docker"; "rehomed Oreo" -> "have a pet named Oreo"; "cut out Diet Coke" -> "like
    Diet Coke"), or None when it names nothing a fact holds."""
    low = body.lower()
    for gerund, base in _GERUND.items():
        if low.startswith(gerund + " "):
            return base + body[len(gerund):]
    if m := re.match(r"(\w+ing)\b(?!\s+(?:a|an|the|my|our|his|her|some|any|it|them)\b)", body,
                     _I):
        return f"do {m[1]}"  # "stopped painting for now": a hobby
    obj = re.sub(r"^(?:the|my|our|his|her|a|an|on)\s+", "", body, flags=_I)
    first = V.value(obj, V.TOOL, 4)
    if first is None:
        return None
    if m := re.match(r"(?P<kind>[\w ]+?)\s+allergy\b", obj, _I):
        return f"am allergic to {m['kind']}"
    if _PETLIKE.match(verb) and (person_frames.proper(first) or first.lower() in PETS):
        if verb == "gave" and not re.search(r"\b(?:to|away)\b", body, _I):
            return None
        return f"have a pet named {first}" if person_frames.proper(first) else f"have a {first}"
    if first.lower() in many_frames.HOBBY_WORDS:
        return f"play {first}"  # "gave up squash", "sold my guitar": the hobby
    if verb in ("gave", "sold", "rehomed", "re-homed", "gave away"):
        return None  # "I sold the old car": a one-at-a-time thing, only ever replaced
    if first.lower() in _LANGUAGES:
        return f"speak {first}"
    if category_of(first) or (person_frames.proper(first) and verb not in ("cut out",)):
        # A tool said to be gone ends its `uses` value (tools used side by side are kept
        # per tool); a one-at-a-time tool is only ever replaced.
        return f"use {first} too"
    if verb in ("cut out", "gave up", "given up", "quit", "stopped", "no more") and \
            not re.match(r"(?:the|my|our|his|her)\s", body, _I):
        return f"like {first}"  # "cut out Diet Coke", "gave up coffee" ("quit the cafe": a job)
    return None


def read_cues(rest: str) -> tuple[str, Cues]:
    """The predicate without its negation / ending words, and what they said."""
    cues = Cues(additive=bool(_ADDITIVE.search(rest)), change=bool(_CHANGE.search(rest)))
    if _HEDGE.search(rest):
        cues.hedged = True
    body = re.sub(r"^(?:really|just|also|now|still|actually|honestly|definitely|totally|"
                  r"currently|recently|finally|officially)\s+", "", rest, flags=_I)
    if _HYPOTHETICAL.match(body) or re.match(r"^(?:am|are|is)\s+(?:thinking|considering|"
                                             r"planning|hoping)\b", body, _I):
        cues.future = True
        return body, cues
    if _FUTURE.match(body):
        cues.future = True
    if tool_frames.REPLACE.match(body):
        return body, cues  # "We dropped Datadog for Grafana": a replacement, read whole
    if (m := _STOPPED.match(body)) and (ended := _ended_object(m["verb"].lower(),
                                                              body[m.end():])):
        cues.ended = True
        cues.additive = cues.additive or ended.endswith(" too")
        return ended, cues
    if re.match(r"^(?:can|could)\s+not\s+(?:stand|bear)\b", body, _I):
        return body, cues  # "I can't stand cilantro": a dislike, not a negation
    if m := _NEGATION.match(body):
        cues.negated = True
        cues.ended = bool(_ENDING.search(body)) or "no longer" in m[0].lower()
        body = body[m.end():]
        if (m["aux"] or "").lower() in ("am", "is", "are", "was", "were"):
            return "am " + body, cues  # "I'm no longer allergic to X": the copula stays
        if cues.ended and re.match(r"(?:eat|drink)\s", body, _I):
            return "like " + body.split(None, 1)[1], cues  # "can't eat anchovies anymore"
        return body, cues
    if _PAST.search(body) and not _STILL_TRUE.match(body):
        cues.past = True  # "We were on Oracle until 2019": history, not the current value
    if m := _USED_TO.match(body):
        if m[0].lower().startswith("used to") or re.match(r"^(?:was|were)\s+allergic", body,
                                                             _I):
            cues.past = cues.ended = True
            rest_ = body[m.end():]
            return ("am " + rest_ if rest_.lower().startswith("allergic") else rest_), cues
    return body, cues


# "We deploy on Fridays, is that a bad idea?": a statement with a question tagged on.
_TAG_QUESTION = re.compile(r",\s*(?:is|isn't|are|aren't|was|wasn't|does|doesn't|do|don't|right|"
                           r"ok|okay|no|yeah|correct|can you|could you|any)\b[^,.!?]*\?$", _I)
_CALLED = re.compile(r"\b(?:everyone|everybody|people|friends|my friends|most people|they|"
                     r"folks|colleagues|my colleagues)\s+(?:just\s+)?calls?\s+me\s+(?P<v>.+)", _I)
_PRONOUNS = re.compile(r"\b(?P<v>(?:he|she|they|xe|ze|fae|it)/(?:him|her|them|hir|zir|faer|its|"
                       r"his|hers|theirs|they|she|he))\b", _I)


def imperative(text: str) -> Fact | None:
    """Subject-less requests that state a fact about the user ("Call me Bob")."""
    if (m := _CALLED.search(text)) and (v := V.value(m["v"], V.NAME, 3)) and \
            person_frames.proper(v):
        return Fact(USER, "name", v)
    if (m := _PRONOUNS.search(text)) and re.search(r"\b(?:use|pronouns|go by|refer to me)\b",
                                                   text, _I):
        return Fact(USER, "pronouns", m["v"])
    if m := re.match(r"^(?:please\s+)?(?:just\s+)?(?:call|address)\s+me\s+(?:as\s+)?(?P<v>.+)",
                     text, _I):
        v = V.value(m["v"], V.NAME, 3)
        if v and person_frames.proper(v):
            return Fact(USER, "name", v)
    if m := re.match(r"^(?:please\s+)?(?:always\s+|only\s+)?(?:answer|reply|respond|write|talk)"
                     r"(?:\s+to me)?\s+in\s+(?P<v>[A-Z][a-z]+)\b", text):
        if category_of(m["v"]) is None:
            return Fact(USER, "answer_language", m["v"])
    return None


_REVERSE = re.compile(
    r"^(?P<v>.+?)\s+(?:is|are|has become|became)\s+(?:now\s+|currently\s+|still\s+|"
    r"officially\s+|finally\s+)?(?P<who>my|our|[A-Z][a-z]+'s)\s+(?:new\s+|current\s+|main\s+|"
    r"primary\s+|go-to\s+|default\s+|daily\s+|usual\s+|only\s+)?(?P<noun>[\w -]+?)"
    r"(?:\s+now|\s+these days|\s+nowadays|\s+at the moment|\s+for now)?[.!]?$", _I)
_RELATION_ATTRIBUTE = {"wife": "partner", "husband": "partner", "partner": "partner",
                       "spouse": "partner", "boyfriend": "partner", "girlfriend": "partner",
                       "fiance": "partner", "fiancee": "partner", "boss": "manager",
                       "manager": "manager"}
_COPULA = re.compile(r"^(?:has been|have been|is|are|became|changed to|is now|are now|"
                     r"just changed to|has changed to|switched to|moved to)\s+(?:now\s+|still\s+|"
                     r"currently\s+|officially\s+|actually\s+|finally\s+)?(?P<v>.+)$", _I)


def _attribute_noun(noun: str, value: str | None) -> str | None:
    """The attribute "my <noun> is <value>" states, or None (then <noun> is a thing)."""
    attr = canonical_attribute(noun)
    if noun.lower() in THINGS:
        return None  # "our frontend is Angular": the frontend is the subject
    if attr.startswith("favorite_") and canonical_attribute(attr[9:]) in FAVORITE_TOOLS:
        return canonical_attribute(attr[9:])
    if attr in INVENTORY or attr.startswith("favorite_"):
        return attr
    words = noun.split()
    if value is None or re.match(r"^(?:\w+(?:ed|en|ing)|built|made|run|kept|set|led|done|"
                                 r"in|on|at|from|so|very|really|pretty|kind|such|too|not|no|"
                                 r"always|never)\b", value, _I):
        return None  # "our backend is written in Go": the backend is the subject
    if 1 <= len(words) <= 2 and not set(map(str.lower, words)) & {"life", "day", "week",
                                                                  "point", "plan", "idea"}:
        return attr  # "my shoe size is 42": a fact of its own, single-valued
    return None


def _reverse(text: str, speaker: str | None) -> Fact | None:
    """ "VS Code is my editor now", "Tomás is my manager", "Anna is my wife"."""
    m = _REVERSE.match(text)
    if not m:
        return None
    value = V.value(m["v"], V.COMMON, 5)
    if not value or value.lower() in ("it", "that", "this", "he", "she", "they", "which"):
        return None
    who = m["who"].lower()
    owner = (TEAM if who == "our" else (speaker.lower() if speaker else USER)) \
        if who in ("my", "our") else who[:-2]
    noun = m["noun"].lower()
    if noun in _RELATION_ATTRIBUTE:
        return Fact(owner, _RELATION_ATTRIBUTE[noun], value) if person_frames.proper(value) \
            else None
    attr = _attribute_noun(noun, None) or ""
    if attr in INVENTORY and not INVENTORY[attr].many or attr.startswith("favorite_"):
        return Fact(owner, attr, value)
    if person_frames.role(noun) and person_frames.proper(value) and len(value.split()) <= 2:
        return Fact(value.lower(), "occupation", noun)  # "Dana is our designer"
    return None


def _possessive(subject: Subject, rest: str, cues: Cues) -> list[Fact] | None:
    """ "my employer is X", "our CI runs on X", "my dog's name is X". None: read on."""
    noun = subject.noun or ""
    m = _COPULA.match(rest)
    if subject.kind == "pet" and noun.lower() == "name":
        v = V.value(m["v"], V.NAME, 3) if m else None
        return [Fact(USER, "pets", v)] if v and person_frames.proper(v) else []
    if noun.lower() in ("work", "job", "day job", "workplace") and m and \
            re.match(r"(?:at|with|for)\s", m["v"], _I):
        found = typed_values.value_for("employer", m["v"], True)
        return [Fact(subject.entity or USER, "employer", found[0])] if found else []
    attr = _attribute_noun(noun, m["v"] if m else None)
    if attr is None and m and (tool := V.value(m["v"], V.TOOL, 4)) and \
            category_of(tool) in PERSONAL and subject.kind == "person":
        return [Fact(subject.entity or USER, category_of(tool) or "uses", tool)]  # "daily driver"
    if attr is None:
        return None
    if m:
        if cues.negated or cues.past:
            return []
        if is_many(attr):
            return [Fact(subject.entity or USER, attr, v) for v in V.items(m["v"], V.LIST, 4)]
        if typed_values.typed(attr):
            found = typed_values.value_for(attr, m["v"], subject.kind != "team")
            return [Fact(subject.entity or USER, attr, found[0])] if found else []
        v = V.value(re.sub(r"^(?:on|in|at|with|through)\s+", "", m["v"], flags=_I), V.COMMON, 8)
        if v is None or v.split()[0].lower() in ("so", "very", "really", "pretty", "kind"):
            return []
        return [Fact(subject.entity or USER, attr, v)]
    reading = tool_frames.read(rest, person=False, additive=cues.additive)
    if reading and reading.attribute == attr:
        return [Fact(subject.entity or USER, attr, reading.values[0])]
    return None


def _relation_copula(subject: Subject, rest: str, speaker: str | None) -> Fact | None:
    """ "My wife is Anna" -> the owner's partner; "My boss is Dana" -> the owner's manager."""
    relation = (subject.entity or "").split("'s ")[-1]
    m = _COPULA.match(rest)
    if relation not in _RELATION_ATTRIBUTE or not m:
        return None
    v = V.value(m["v"], V.NAME, 3)
    if not v or not person_frames.proper(v):
        return None
    owner = speaker.lower() if speaker else USER
    return Fact(owner, _RELATION_ATTRIBUTE[relation], v)


@dataclass
class Reading:
    """What one statement says: its facts, and for a statement no rule read, what the
    attribute classifier needs (`predicate`) and how to shape its answer."""

    facts: list[Fact]
    subject: Subject
    rest: str = ""
    cues: Cues | None = None
    #: the text the classifier reads, when the statement may state a fact no rule found
    predicate: str | None = None

    def classified(self, attribute: str) -> list[Fact]:
        """Facts for the attribute the classifier found (none without a value of its kind)."""
        assert self.cues is not None and self.subject.entity is not None
        person = self.subject.kind in ("person", "pet")
        if attribute in INVENTORY and (INVENTORY[attribute].about == "thing") == person \
                and attribute not in ("uses",):
            if not person:
                return []  # "the app" has no employer
            attribute = "uses"  # a person's database is a tool they use
        found = typed_values.value_for(attribute, self.rest, person)
        return _shape(self.subject.entity, attribute, found, [], self.cues) if found else []


def statement_facts(clause: str, speaker: str | None = None,
                    last_person: str | None = None) -> tuple[list[Fact], Subject]:
    """The facts `clause` states by rule, and its subject (for a later "he"/"she")."""
    reading = read_statement(clause, speaker, last_person)
    return reading.facts, reading.subject


def read_statement(clause: str, speaker: str | None = None,
                   last_person: str | None = None) -> Reading:
    """The statement's facts by rule; when none, whether the classifier may find one."""
    text = expand(strip_lead(_colon_nominal(_TAG_QUESTION.sub("", fold(clause)))))
    none = Subject(None, "none", text)
    if language := _answer_language(text):  # requests are often questions ("Can you ...?")
        return Reading([Fact(speaker.lower() if speaker else USER, "answer_language",
                             language)], none)
    if not text or text.rstrip().endswith("?"):
        return Reading([], none)
    if fact := imperative(text):
        return Reading([_as_speaker(fact, speaker)], none)
    if found := _patterned(text, speaker, last_person):
        return Reading(found, none)
    if fact := _replaced_by(text.rstrip(".! "), speaker):
        return Reading([fact], none)
    if fact := _reverse(text.rstrip(".! "), speaker):
        return Reading([fact], none)
    subject = find_subject(text, speaker, last_person)
    if subject.entity is None:
        return Reading([], subject)
    rest, cues = read_cues(subject.rest)
    predicate = None if cues.future or cues.hedged or len(rest.split()) < 2 else \
        (f"{subject.noun} {rest}" if subject.noun else rest)
    if subject.noun:
        found = _possessive(subject, rest, cues)
        if found is not None:
            return Reading([] if cues.future or cues.hedged else found, subject)
        attr = canonical_attribute(subject.noun)
        if attr in INVENTORY and _LINKING.match(rest):
            # "Our alerts come from New Relic", "Login goes through Okta": the noun names
            # the attribute, the predicate its value.
            found = typed_values.value_for(attr, rest, subject.kind != "team")
            facts = [] if cues.future or cues.hedged or not found else \
                _shape(subject.entity, attr, found, [], cues)
            if facts and attr == "release_schedule" and _DAY_ONLY.match(found[0]):
                facts = _shape(subject.entity, "deploy_day", found, [], cues)
            return Reading(facts, subject)
        if attr in INVENTORY:
            return Reading([], subject, rest, cues, predicate)  # the classifier may read it
        subject = Subject(attr.replace("_", " "), "thing", rest, surface=subject.surface)
    if subject.kind == "person" and not subject.noun and (
            fact := _relation_copula(subject, rest, speaker)):
        return Reading([fact], subject)
    facts = _household(_read(subject, rest, cues), subject, speaker)
    worth = predicate is not None and worth_classifying(predicate)
    return Reading(facts, subject, rest, cues, None if facts or not worth else predicate)


# Words that name a kind of value though nothing in the statement is capitalised.
_VALUE_WORDS = re.compile(
    r"\b(?:vegan|vegetarian|pescatarian|keto|paleo|gluten|dairy|meat|fasting|married|engaged|"
    r"divorced|single|allergic|allergy|intolerant|bus|train|tram|subway|tube|metro|bike|"
    r"cycle|commute|drive|walk|gym|shift|shifts|hours|major|degree|studying|barista|"
    r"nurse|teacher|engineer|developer|designer|manager|retired|promotion|promoted|"
    r"dark mode|light mode|theme|branch|branches|sprint|sprints|standup|deploy|deploys|"
    r"release|releases|weekly|monthly|daily|remote|remotely|office|every|mornings?|"
    r"evenings?|weekends?|weekdays|weights|lift|workouts?|lunch|from home|wfh)\b", _I)


_ANOTHER_CLAUSE = re.compile(r"(?:[,;]|\band\b|\bbut\b)\s+(?:and\s+)?(?:it|he|she|they|this|that|"
                             r"which|there)\b", _I)


def worth_classifying(predicate: str) -> bool:
    """Whether a statement no rule read may still name a value: a name, a number, a tool
    the lexicon knows, or a word of a kind of value. Most talk ("that's so sweet of you")
    names none, and is not worth the model's time (a statement costs about as much as a
    memory's embedding)."""
    words = predicate.split()
    if _ANOTHER_CLAUSE.search(predicate):
        return False  # "lives in tools/, and it runs on Fridays": whose value is which?
    if any(c.isdigit() for c in predicate) or _VALUE_WORDS.search(predicate):
        return True
    if any(w[:1].isupper() and w not in ("I", "I'm") for w in words[1:]):
        return True
    return any(category_of(w.strip(".,!?")) for w in words)


# Verbs that tie a noun to its value ("CI is on X", "Login goes through X", "Deploys moved
# to X"), unlike events ("The deploy broke on Friday").
_LINKING = re.compile(r"^(?:(?:now|still|also|all|mostly)\s+)?(?:is|are|has been|have been|"
                      r"(?:was|were|got|has been|have been|is being)\s+\w+ed\b|moved|move|goes|"
                      r"go|runs|run|happens?|comes?|lives?|sits?|stays?|switched|changed|"
                      r"shifted|now|start|starts|is now|are now|live|lives)\b", _I)


_DAY_ONLY = re.compile(r"^(?:on\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)days?$", _I)


def _without(subject: Subject, rest: str, org: str) -> str:
    """The statement without its organisation ("I work at X as a Y" -> "I work as a Y")."""
    cut = re.sub(r"\s+(?:at|for|with|by)\s+(?:the\s+)?" + re.escape(org) + r"\b", "", rest,
                 count=1)
    return f"{subject.surface} {cut}".strip() if subject.surface else cut


# What "we" share at home, not as a team: "We got married", "We adopted a second dog".
_HOUSEHOLD = frozenset({"relationship_status", "partner", "pets", "children", "location",
                        "car"})


def _household(facts: list[Fact], subject: Subject, speaker: str | None) -> list[Fact]:
    if subject.entity != TEAM or subject.surface.lower() != "we":
        return facts
    me = speaker.lower() if speaker and speaker.lower() not in ("user", "me") else USER
    return [Fact(me, f.attribute, f.value, f.ended) if f.attribute in _HOUSEHOLD else f
            for f in facts]


_COLON = re.compile(r"^(?i:my\s+|our\s+)?(?i:new\s+|current\s+)?(?P<noun>[A-Za-z][\w '-]{1,30}?)"
                    r"(?i:\s+(?:as of|starting|from|since)\s+[\w ]{1,20}?)?\s*:\s+(?P<v>\S.*)$")


def _colon_nominal(text: str) -> str:
    """ "New favorite movie: Past Lives" is "my favorite movie is Past Lives"."""
    m = _COLON.match(text)
    if m and (m["noun"].lower().startswith("favo") or _attribute_noun(m["noun"], m["v"])
              in INVENTORY):
        return f"my {m['noun']} is {m['v']}"
    return text


# "As a 28 year old I ...", "My son had his 7th birthday party", "Mom turned 59"
_AGE_SAID = re.compile(r"\bas an? (?P<n>\d{1,3})[- ]year[- ]old\b|\b(?:had|celebrated|is having|"
                       r"just had)\s+(?:his|her|my|their)\s+(?P<n2>\d{1,3})(?:st|nd|rd|th)\s+"
                       r"birthday\b", _I)
_WAKE = re.compile(r"\b(?:(?:wake|get|am|i'm|waking)\s+up|^up|sleep(?:ing)? in|up)\s+(?:at|by|"
                   r"around|until|till)\s+(?P<t>\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?)", _I)
_HERE_IN = re.compile(r"\b(?:here in|out here in|living here in|back home in)\s+(?P<v>[A-Z]\w+"
                      r"(?:\s[A-Z]\w+)?)")
# "Rex passed away", "RIP Nibbles the hamster": a pet of the speaker's that is gone.
_PASSED = re.compile(r"^(?P<v>[A-Z][a-z]+)\s+(?:passed away|died|passed|was put down|"
                     r"crossed the rainbow bridge)\b|\bRIP\s+(?P<w>[A-Z][a-z]+)\b")
_GROWN_ON = re.compile(r"^(?P<v>[\w ]{2,30}?)\s+(?:have|has)\s+grown on me\b", _I)
_LANGUAGE_GONE = re.compile(r"^my\s+(?P<v>[A-Z][a-z]+)\s+is\s+(?:now\s+)?(?:mostly\s+|basically\s+|"
                            r"completely\s+|pretty much\s+|all but\s+)?(?:gone|long gone|rusty|"
                            r"lost)\b", _I)
# "IT made us switch to Firefox"
_MADE_SWITCH = re.compile(r"\b(?:made|makes|forced|had)\s+(?P<who>me|us)\s+(?:to\s+)?(?:switch|move|"
                          r"change|migrate|go)\s+(?:over\s+)?to\s+(?P<v>[^,;.!]+)", _I)
_WHERE_I_LIVE = re.compile(r"\b(?P<v>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?),?\s+where\s+(?:i|we)\s+"
                           r"(?:live|am based|are based)\b")
_IS_HOME = re.compile(r"^(?P<v>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)\s+is\s+(?:my\s+|our\s+)?home"
                      r"(?:\s+now|\s+these days|\s+base)?[.!]*$")
# "zsh user here", "I'm an Emacs person"
_TOOL_USER = re.compile(r"(?:^|\bam an?\s+)(?P<v>[\w.+#-]+(?:\s[\w.+#-]+)?)\s+(?:user|person|guy|"
                        r"girl|fan|convert)\b", _I)
# "Obsidian holds all my notes"
_HOLDS_MY = re.compile(r"^(?P<v>[A-Z][\w.+#-]*(?:\s[A-Z][\w.+#-]*)?)\s+(?:holds|has|stores|keeps|"
                       r"manages|is where i keep)\s+(?:all\s+)?(?:of\s+)?my\s+(?P<what>notes|"
                       r"passwords)\b", _I)
# "I changed my major, it's architecture now"
_CHANGED_MY = re.compile(r"\b(?:changed|switched|updated|moved|swapped)\s+my\s+(?P<noun>[\w ]{2,20}?)"
                         r",?\s+(?:and\s+)?(?:now\s+)?(?:it's|it is|it is now|now it's)\s+"
                         r"(?:now\s+)?(?P<v>[^,;.!]+)", _I)
_NEW_HOME = re.compile(r"\b(?:new|our|my)\s+(?:own\s+|new\s+)?(?:flat|apartment|place|house|home|"
                       r"condo|room|studio)\s+in\s+(?P<v>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)")
_MANAGES_US = re.compile(r"^(?P<v>[A-Z][a-z]+)\s+is\s+(?:now\s+)?(?:managing|leading|running|"
                         r"heading)\s+(?:our|my|the)\s+team\b")
_GOT_MARRIED = re.compile(r"^(?:[A-Z][a-z]+ and I|I and [A-Z][a-z]+|we)\s+(?:just\s+|finally\s+)?"
                          r"got\s+(?P<v>married|engaged|divorced)\b", _I)
# "Dark mode everywhere now", "fish shell for me": a tool said on its own
_TOOL_NOW = re.compile(r"^(?P<v>[\w.+#-]+(?:\s[\w.+#-]+)?)\s+(?:everywhere|all the way|for me|"
                       r"these days|now|from now on|only)\b", _I)
# "so I guess pescatarian now": a diet said on its own
_DIET_ALONE = re.compile(r"^(?:a\s+|fully\s+)?(?P<v>vegetarian|vegan|pescatarian|pescetarian|"
                         r"flexitarian|omnivore|keto|paleo)(?:\s+now|\s+these days|\s+again)?"
                         r"[.!]*$", _I)
_FORGOT = re.compile(r"\b(?:forgot|forgotten|lost)\s+(?:most of\s+|all of\s+|all\s+)?(?:my\s+)?"
                     r"(?P<v>[A-Z][a-z]+)\b")
_WORK_STARTS = re.compile(r"^(?:my\s+)?(?:work|workday|shift)\s+(?:starts|begins|is)\s+(?:at|"
                          r"around|from)\s+(?P<t>\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?(?:\s*"
                          r"(?:to|-|until)\s*\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?)?)", _I)
_EVERYTHING_ON = re.compile(r"^everything(?:'s| is| runs| lives)?\s+(?:(?:tested|built|written|"
                            r"deployed|hosted|running)\s+)?(?:on|in|with|to)\s+(?P<v>[^,;.!]+)", _I)
_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE_CUE = re.compile(r"\b(?:number|cell|phone|mobile|call me|text me|whatsapp|reach me)\b",
                        _I)
_FAVORITE = re.compile(r"\bfavou?rite\s+(?P<noun>[a-z][\w -]{1,30}?)\s*(?:is|:|,|=|-|now is|"
                       r"these days is|has to be|would be|right now is)\s+(?P<v>[^,;.!?]+)", _I)


_REPLACED_BY = re.compile(r"^(?P<new>[\w .+#-]{2,30}?)\s+(?:has\s+)?(?:replaced|took over from|"
                          r"is replacing|beat out|won over)\s+(?P<old>[\w .+#-]{2,30}?)"
                          r"(?:\s+for\s+(?P<who>me|us|the team))?(?:\s+now)?$", _I)
_WHERE_I = re.compile(r"^(?P<v>[\w .+#-]{2,30}?)\s+is\s+(?:now\s+)?(?:where|what|how)\s+"
                      r"(?P<who>i|we)\s+(?P<rest>.+?)(?:\s+now)?$", _I)


def _replaced_by(text: str, speaker: str | None) -> Fact | None:
    """ "Ghostty replaced iTerm for me"; "Notion is where I take notes"; "uv is what we use
    now": a named tool in the subject's place."""
    me = speaker.lower() if speaker else USER
    if m := _REPLACED_BY.match(text):
        new, old = m["new"].strip(), m["old"].strip()
        category = category_of(new) or category_of(old)
        if category and person_frames.proper(new) or category_of(new):
            team = (m["who"] or "").lower() in ("us", "the team")
            return Fact(TEAM if team else me, attribute_for(new, person=not team) if
                        category_of(new) else category, new)
    if m := _WHERE_I.match(text):
        v = m["v"].strip()
        team = m["who"].lower() == "we"
        if category_of(v):
            return Fact(TEAM if team else me, attribute_for(v, person=not team), v)
        found = tool_frames.read(f"use {v} for {m['rest']}", person=not team, additive=False)
        if found and found.attribute not in ("uses", "*"):
            return Fact(TEAM if team else me, found.attribute, v)
    return None


_LANGUAGES = frozenset("""
english spanish french german portuguese dutch italian japanese chinese mandarin cantonese
korean russian polish swedish norwegian danish finnish greek turkish arabic hebrew hindi
bengali urdu vietnamese thai indonesian malay tagalog ukrainian czech hungarian romanian
catalan basque galician irish welsh swahili persian farsi
""".split())
_ANSWERS = re.compile(r"\b(?P<v>[A-Z][a-z]+)\b(?=[^.?!]{0,40}\b(?i:answers?|repl(?:y|ies)|"
                      r"responses?)\b)|\b(?i:answers?|repl(?:y|ies)|responses?|respond|"
                      r"answer me|reply to me|talk to me|write to me)\b[^.?!]{0,20}?\bin\s+"
                      r"(?P<w>[A-Z][a-z]+)\b")


def _answer_language(text: str) -> str | None:
    """ "Answer me in Spanish", "Can you switch to Portuguese for your answers?", "English is
    fine for answers": the language the user wants answers in."""
    if re.search(r"\b(?:not|don't|do not|never|no longer)\b", text, _I):
        return None
    for m in _ANSWERS.finditer(text):
        v = m["v"] or m["w"]
        if v and v.lower() in _LANGUAGES:
            return v
    return None


def _patterned(text: str, speaker: str | None, last_person: str | None) -> list[Fact]:
    """Facts whose value has a shape of its own: an email address, a phone number, a
    favourite ("my favorite band is X", "found a new favorite coffee place, Sey")."""
    if re.search(r"\b(?:not|no longer|old|previous|former|closing|closed|stopped)\b", text,
                 _I) and not re.search(r"\b(?:now|new|from now on|instead)\b", text, _I):
        return []
    subject = find_subject(text, speaker, last_person)
    owner = subject.entity if subject.kind in ("person",) and subject.entity else \
        (speaker.lower() if speaker else USER)
    if m := _AGE_SAID.search(text):
        return [Fact(owner, "age", m["n"] or m["n2"])]
    if m := _PASSED.search(text):
        return [Fact(speaker.lower() if speaker else USER, "pets", m["v"] or m["w"], ended=True)]
    if m := _GROWN_ON.match(text):
        return [Fact(owner, "dislikes", m["v"], ended=True)]
    if (m := _LANGUAGE_GONE.match(text) or _FORGOT.search(text)) and \
            m["v"].lower() in _LANGUAGES:
        return [Fact(speaker.lower() if speaker else USER, "languages_spoken", m["v"],
                     ended=True)]
    if (m := _MADE_SWITCH.search(text)) and (tool := V.value(m["v"], V.TOOL, 4)) and \
            (category := category_of(tool)):
        me = speaker.lower() if speaker else USER
        who = me if category in PERSONAL or m["who"].lower() == "me" else TEAM
        return [Fact(who, attribute_for(tool, person=who != TEAM), tool)]
    if (m := _WHERE_I_LIVE.search(text) or _IS_HOME.match(text)) and person_frames.place(m["v"]):
        return [Fact(speaker.lower() if speaker else USER, "location", m["v"])]
    if (m := _TOOL_USER.search(text)) and category_of(m["v"]) in PERSONAL:
        return [Fact(owner, category_of(m["v"]) or "uses", m["v"])]
    if (m := _HOLDS_MY.match(text)) and (attr := purpose_attribute(m["what"])) and \
            (category_of(m["v"]) in (attr, None)) and attr in PERSONAL:
        return [Fact(speaker.lower() if speaker else USER, attr, m["v"])]
    if (m := _CHANGED_MY.search(text)) and (attr := _attribute_noun(m["noun"], m["v"])) in \
            INVENTORY and (v := V.value(m["v"], V.THING, 4)):
        return [Fact(owner, attr, v)]
    if m := _NEW_HOME.search(text):
        if person_frames.place(m["v"]):
            return [Fact(speaker.lower() if speaker else USER, "location", m["v"])]
    if m := _MANAGES_US.match(text):
        return [Fact(speaker.lower() if speaker else USER, "manager", m["v"])]
    if m := _GOT_MARRIED.match(text):
        return [Fact(speaker.lower() if speaker else USER, "relationship_status",
                     m["v"].lower())]
    if (m := _TOOL_NOW.match(text)) and category_of(m["v"]) in PERSONAL:
        return [Fact(owner, category_of(m["v"]) or "uses", m["v"])]
    if m := _DIET_ALONE.match(text):
        return [Fact(speaker.lower() if speaker else USER, "diet", m["v"])]
    if m := _WORK_STARTS.match(text):
        return [Fact(owner, "work_hours", m["t"].strip())]
    if (m := _EVERYTHING_ON.search(text)) and (tool := V.value(m["v"], V.TOOL, 4)) and \
            (category := category_of(tool)):
        team = category not in PERSONAL
        return [Fact(TEAM if team else owner, attribute_for(tool, person=not team), tool)]
    if _PAST.search(subject.rest) and not _STILL_TRUE.match(subject.rest):
        return []
    if (m := _WAKE.search(text)) and subject.kind in ("person", "none"):
        return [Fact(owner, "wake_time", m["t"].strip())]
    if (m := _HERE_IN.search(text)) and person_frames.place(m["v"]):
        return [Fact(speaker.lower() if speaker else USER, "location", m["v"])]
    if m := _EMAIL_RE.search(text):
        return [Fact(owner, "email", m[0])]
    if _PHONE_CUE.search(text) and (phone := typed_values.value_for("phone_number", text,
                                                                    True)):
        if sum(c.isdigit() for c in phone[0]) >= 7:
            return [Fact(owner, "phone_number", phone[0])]
    if m := _FAVORITE.search(text):
        v = V.value(m["v"], V.COMMON, 6)
        noun = re.sub(r"^(?:new|current|all-time|all time)\s+", "", m["noun"].strip(), flags=_I)
        if v and not re.match(r"^(?:is|was|to|a|the)$", v, _I):
            attr = canonical_attribute("favorite " + noun)
            if canonical_attribute(attr[9:]) in FAVORITE_TOOLS:
                attr = canonical_attribute(attr[9:])  # "my favourite editor is vim": the editor
            return [Fact(owner, attr, v)]
    return []


def _as_speaker(fact: Fact, speaker: str | None) -> Fact:
    if speaker and fact.entity == USER and speaker.lower() not in ("user", "me"):
        return Fact(speaker.lower(), fact.attribute, fact.value, fact.ended)
    return fact


def _read(subject: Subject, rest: str, cues: Cues) -> list[Fact]:
    entity = subject.entity or USER
    person = subject.kind in ("person", "pet")
    if cues.hedged:
        return []
    if cues.future and not cues.ended:
        # Plans are facts only for a team's choices ("we're going to use Postgres").
        if subject.kind == "person" or re.match(r"^(?:might|may|could|would|should|wish|if|"
                                                r"almost|nearly|never)\b", rest, _I):
            return []
    if subject.kind in ("person", "team") and (found := person_frames.read(rest)):
        attr, vals = found
        if attr == "learning" and category_of(vals[0]) in PERSONAL:
            attr = category_of(vals[0]) or attr  # "Learning Colemak": the keyboard layout
        facts = _shape(entity, attr, vals, [], cues)
        if attr == "location" and person_frames.MOVED.match(rest):
            facts = [Fact(f.entity, f.attribute, f.value, f.ended, f.text, "place")
                     for f in facts]
        if attr == "employer" and facts and (job := person_frames.role_too(rest)):
            facts.append(Fact(entity, "occupation", job, text=_without(subject, rest,
                                                                        vals[0])))
        return facts
    household = person or subject.surface.lower() == "we"  # "we adopted a dog"
    if subject.kind in ("person", "team") and (found := many_frames.read(rest, household)):
        attr, vals = found
        return _shape(entity, attr, vals, [], cues)
    reading = tool_frames.read(rest, person=person, additive=cues.additive)
    if reading is None:
        return []
    if reading.about:
        entity = reading.about  # "we migrated the API to FastAPI": the API's framework
    if reading.attribute == "*":
        return [f for v in reading.values for f in _shape(
            entity, attribute_for(v, person=person, additive=cues.additive), [v], [], cues)]
    return _shape(entity, reading.attribute, reading.values, reading.replaced, cues)


def _shape(entity: str, attr: str, vals: list[str], replaced: list[str], cues: Cues
           ) -> list[Fact]:
    """Facts from a frame's reading, by the attribute's cardinality and the cues."""
    many = is_many(attr)
    if cues.negated or cues.ended or cues.past:
        if attr == "likes" and cues.negated and not cues.ended:
            return [Fact(entity, "dislikes", v) for v in vals]  # "I don't like X"
        if many and (cues.ended or cues.past or attr not in ("likes", "dislikes")):
            return [Fact(entity, attr, v, ended=True) for v in vals]
        return []
    if not many:
        if cues.additive and attr not in ("uses",) and not attr.startswith("preference:"):
            return []
        return [Fact(entity, attr, vals[0])]
    out = [Fact(entity, attr, v) for v in vals]
    out += [Fact(entity, attr, r, ended=True) for r in replaced]
    if cues.change and attr in ("likes", "dislikes"):
        other = "dislikes" if attr == "likes" else "likes"
        out += [Fact(entity, other, v, ended=True) for v in vals]
    return out
