"""The facts one statement states: subject -> entity (`subjects`), frame -> attribute and
value (`person_frames`, `many_frames`, `tool_frames`, or the classifier's guess with
`typed_values`), words around it -> whether a value is added, replaced or ended (`cues`).

* "I don't like X" is a dislike; "I hate X now" also ends the like, and the other way round.
* "also" / "too" add to a many-valued fact; on a single-valued one ("I also work at Globex")
  they mean a second value the fact cannot hold, so no fact.
* A single-valued fact is only ever replaced by a new value: "I don't live in Rome anymore"
  names no successor and, said after the successor, would wrongly end it: no fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from recall_core.kit.attributes import (INVENTORY, TEAM, USER, base_attribute, canonical_attribute,
                                        is_many)

from . import idioms, many_frames, person_frames, tool_frames, typed_values
from . import values as V
from .cues import ROUTINES, Cues, read_cues
from .fact import Fact
from .lexicon import PERSONAL, PROVIDERS, TOOL_CATEGORIES, attribute_for, category_of
from .roles import lower_name, name_fact
from .sentences import fold
from .subjects import (RELATIONS, ROLE_OF, Subject, attribute_named, expand, find_subject,
                       strip_lead)

_I = re.IGNORECASE

__all__ = ["Fact", "Reading", "read_statement", "statement_facts", "worth_classifying"]


_REVERSE = re.compile(
    r"^(?P<v>.+?)\s+(?:is|are|has become|became)\s+(?:now\s+|currently\s+|still\s+|"
    r"officially\s+|finally\s+)?(?P<who>my|our|[A-Z][a-z]+'s)\s+(?:new\s+|current\s+|main\s+|"
    r"primary\s+|go-to\s+|default\s+|daily\s+|usual\s+|only\s+)?(?P<noun>[\w -]+?)"
    r"(?:\s+now|\s+these days|\s+nowadays|\s+at the moment|\s+for now)?"
    # what the value is for, or since when, says nothing of which fact ("vim is my editor
    # for basically everything")
    r"(?:\s+(?:for|since|at|on|in|when|whenever)\s+[^.!?]*)?[.!]?$", _I)
_COPULA = re.compile(r"^(?:has been|have been|is|are|became|changed to|is now|are now|"
                     r"just changed to|has changed to|switched to|moved to)\s+(?:now\s+|still\s+|"
                     r"currently\s+|officially\s+|actually\s+|finally\s+)?(?P<v>.+)$", _I)


def _reverse(text: str, speaker: str | None) -> Fact | None:
    """ "VS Code is my editor now", "Tomás is my manager", "Anna is my wife"."""
    m = _REVERSE.match(text)
    if not m or (m["who"][0].isupper() and re.match(r"(?:my|our|your|his|her|their)\s", m["v"],
                                                      _I)):
        # "My uni is King's College now": a name with 's is the value, not an owner
        return None
    value = V.value(m["v"], V.COMMON, 5)
    if not value or value.lower() in ("it", "that", "this", "he", "she", "they", "which"):
        return None
    who = m["who"].lower()
    owner = (TEAM if who == "our" else (speaker.lower() if speaker else USER)) \
        if who in ("my", "our") else who[:-2]
    noun = m["noun"].lower()
    if noun in ROLE_OF:
        return name_fact(owner, ROLE_OF[noun], value) if person_frames.proper(value) \
            or (value == m["v"].strip() and lower_name(value)) else None
    attr = attribute_named(noun, None) or ""
    if attr in INVENTORY and not INVENTORY[attr].many or attr.startswith("favorite_"):
        return Fact(owner, attr, value)
    if person_frames.role(noun) and person_frames.proper(value) and len(value.split()) <= 2 \
            and category_of(value) is None:  # "Debian is my daily driver": a tool, no person
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
    attr = attribute_named(noun, m["v"] if m else None)
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
        if name := _called(m["v"]):
            return [Fact(subject.entity or USER, attr, name)]
        # ("my email is on Fastmail with my own domain": a provider's name ends as an org's)
        v = V.value(re.sub(r"^(?:on|in|at|with|through)\s+", "", m["v"], flags=_I),
                    V.ORG if re.match(r"(?:on|with|through)\s+[A-Z]", m["v"]) else V.COMMON, 8)
        if v is None or v.split()[0].lower() in ("so", "very", "really", "pretty", "kind") \
                or (attr in TOOL_CATEGORIES - PROVIDERS and typed_values.measure(v)):
            return []  # ("builds are at 25 min": a measure of the tool, never its name)
        return [Fact(subject.entity or USER, attr, v)]
    reading = tool_frames.read(rest, person=False, additive=cues.additive)
    if reading and reading.attribute == attr:
        return [Fact(subject.entity or USER, attr, reading.values[0])]
    return None


_NO_FACT = Fact("", "", "")  # read, and states no fact


def _called(complement: str) -> str | None:
    """The name in "a management company called Greystar", "a little place called Ironhouse":
    what is described is that name."""
    m = re.match(r"(?:a|an|some|this)\s+(?:[\w-]+\s+){0,3}?(?:called|named)\s+"
                 r"(?P<n>(?-i:[A-Z][\w&'.-]*(?:\s[A-Z][\w&'.-]*)*))", complement, _I)
    return m["n"].rstrip(".") if m else None


def _relation_copula(subject: Subject, rest: str, speaker: str | None) -> Fact | None:
    """ "My wife is Anna" -> the owner's partner; "My boss is Dana" -> the owner's manager."""
    relation = (subject.entity or "").split("'s ")[-1]
    m = _COPULA.match(rest)
    if relation not in RELATIONS or not m:
        return None
    if relation in ROLE_OF and (name := _called(m["v"])):
        return name_fact(speaker.lower() if speaker else USER, ROLE_OF[relation], name)
    if re.match(r"(?:a|an|the|some|this|that)\s", m["v"], _I):
        return None  # "my husband's a Fedora guy": a description, not his name
    v = V.value(m["v"], V.NAME, 3)
    # typed without capitals, a name is the whole complement ("my boss is leah", not "my
    # boss is based in New York")
    whole = bool(v) and re.sub(r"(?:\s+now)?[\s.!]*$", "", m["v"]).lower() == v.lower()
    if not v or not (person_frames.proper(v) or (relation in ROLE_OF and whole
                                                 and lower_name(v))):
        return None
    if relation not in ROLE_OF:
        # "My brother is Tom": a name of someone the owner may have several of (two
        # brothers, many friends), so no fact; before, it was read as the brother's partner
        named = re.match(r"(?:is|are)\s", rest, _I) and v[:1].isupper()
        return _NO_FACT if named else None
    owner = speaker.lower() if speaker else USER
    return name_fact(owner, ROLE_OF[relation], v)


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
    #: the same text however plain its words, for a statement no rule read: a known fact of
    #: its subject may be what it changes ("I'm on lates from next week onwards"; `prior`)
    told: str | None = None

    def classified(self, attribute: str) -> list[Fact]:
        """Facts for the attribute the classifier found (none without a value of its kind)."""
        assert self.cues is not None and self.subject.entity is not None
        person = self.subject.kind in ("person", "pet")
        if attribute in INVENTORY and (INVENTORY[attribute].about == "thing") == person \
                and attribute not in ("uses",):
            if not person:
                return []  # "the app" has no employer
            attribute = "uses"  # a person's database is a tool they use
        if attribute in ("bedtime", "wake_time") and not _SLEEP_WORDS.search(self.rest):
            return []  # "she finishes at 5:30": a time, but of no sleep
        found = typed_values.value_for(attribute, self.rest, person)
        if found and attribute in PERSONAL and typed_values.eaten(self.rest, found[0]):
            return []  # "I eat fish": food, never the fish shell
        return _shape(self.subject.entity, attribute, found, [], self.cues) if found else []


_SLEEP_WORDS = re.compile(r"\b(?:bed|beds|bedtime|sleep|sleeps|sleeping|slept|asleep|wake|wakes|"
                          r"waking|woke|up|rise|rises|lights out|turn in|turns in|crash|crashes|"
                          r"alarm|nap)\b", re.IGNORECASE)


def statement_facts(clause: str, speaker: str | None = None,
                    last_person: str | None = None) -> tuple[list[Fact], Subject]:
    """The facts `clause` states by rule, and its subject (for a later "he"/"she")."""
    reading = read_statement(clause, speaker, last_person)
    return reading.facts, reading.subject


def read_statement(clause: str, speaker: str | None = None,
                   last_person: str | None = None) -> Reading:
    """The statement's facts by rule; when none, whether the classifier may find one."""
    text = expand(strip_lead(idioms.bare_service(idioms.colon_nominal(
        idioms.TAG_QUESTION.sub("", fold(clause))))))
    none = Subject(None, "none", text)
    if language := idioms.answer_language(text):  # requests are often questions ("Can you ...?")
        return Reading([Fact(speaker.lower() if speaker else USER, "answer_language",
                             language)], none)
    if not text or text.rstrip().endswith("?"):
        # a request that names, in passing, where one lives ("any playgrounds near us in Boise?")
        return Reading([f] if text and (f := idioms.here_in(text, speaker)) else [], none)
    if fact := idioms.imperative(text):
        return Reading([_as_speaker(fact, speaker)], none)
    if found := idioms.patterned(text, speaker, last_person):
        if (said := idioms.named_relation_rest(text)) is not None:
            # "my husband Raj is an accountant": Raj is the partner, and an accountant
            of = read_statement(f"{said[0]} {said[1]}", speaker, last_person)
            if of.facts:
                found = [replace(f, text=said[2]) for f in found]
            return Reading([*found, *of.facts], of.subject)
        return Reading(found, none)
    if fact := idioms.replaced_by(text.rstrip(".! "), speaker):
        return Reading([fact], none)
    if fact := _reverse(text.rstrip(".! "), speaker):
        return Reading([fact], none)
    subject = find_subject(text, speaker, last_person)
    if subject.entity is None:
        return Reading([], subject)
    rest, cues = read_cues(subject.rest)
    # (a negation that ends nothing states nothing: "I haven't switched to VS Code")
    predicate = None if cues.future or cues.hedged or len(rest.split()) < 2 or \
        (cues.negated and not cues.ended) else \
        (f"{subject.noun} {rest}" if subject.noun else rest)
    if subject.noun:
        found = _possessive(subject, rest, cues)
        if found is not None:
            return Reading([] if cues.future or cues.hedged else
                           _household(found, subject, speaker), subject)
        attr = canonical_attribute(subject.noun)
        if attr in INVENTORY and _LINKING.match(rest):
            # "Our alerts come from New Relic", "Login goes through Okta": the noun names
            # the attribute, the predicate its value.
            found = typed_values.value_for(attr, rest, subject.kind != "team")
            facts = [] if cues.future or cues.hedged or not found else \
                _household(_shape(subject.entity, attr, found, [], cues), subject, speaker)
            if facts and attr == "release_schedule" and _DAY_ONLY.match(found[0]):
                facts = _shape(subject.entity, "deploy_day", found, [], cues)
            return Reading(facts, subject)
        if attr in INVENTORY:
            return Reading([], subject, rest, cues, predicate)  # the classifier may read it
        # "our stuff is all on AWS": all of the owner's things are the owner's, else the noun
        # is a thing of its own ("our billing is on Stripe")
        subject = Subject(subject.entity, subject.kind, rest, surface=subject.surface) \
            if subject.noun.lower() in _ALL_OF_OURS else \
            Subject(attr.replace("_", " "), "thing", rest, surface=subject.surface)
    fact = _relation_copula(subject, rest, speaker) \
        if subject.kind == "person" and not subject.noun else None
    if fact is not None and fact.check != "lower name":
        return Reading([] if fact is _NO_FACT else [fact], subject)
    facts = _household(_read(subject, rest, cues), subject, speaker)
    if fact is not None and not facts:
        # a name typed without capitals only where no other reading is found ("my partner is
        # vegan" is her diet)
        return Reading([fact], subject)
    tools = tools_only(facts)
    worth = predicate is not None and (worth_classifying(predicate) or tools)
    return Reading(facts, subject, rest, cues,
                   predicate if worth and (not facts or tools) else None,
                   None if facts else predicate)


def tools_only(facts: list[Fact]) -> bool:
    """Only tools used among others, none of a known category ("I've switched to green tea"
    -> uses:green_tea): a known fact may be what the statement changes (`prior`)."""
    return bool(facts) and all(base_attribute(f.attribute) == "uses" and not f.ended
                               and category_of(f.value) is None for f in facts)


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
                        "car", *PROVIDERS})
# What "our <noun>" names of a household rather than a team ("our internet provider is Sonic
# now", "our bank is Chase", "our car is a Subaru") after the speaker said it of themselves
# ("internet is Comcast"): one key for both. ("our office", "our database" stay the team's.)
_OURS_AT_HOME = frozenset({"car", *PROVIDERS})


# Names for all of a team's systems at once: their facts are the team's ("Our services are
# written in Java", "we migrated the whole stack over to CockroachDB" are the team's language
# and database, which "we write everything in Kotlin" then changes).
_ALL_OF_OURS = frozenset({"services", "all services", "all our services", "stack", "whole stack",
                          "tech stack", "entire stack", "codebase", "code base", "code",
                          "infra", "infrastructure", "systems", "everything", "apps", "stuff",
                          "things"})


def _household(facts: list[Fact], subject: Subject, speaker: str | None) -> list[Fact]:
    facts = [replace(f, entity=TEAM) if f.entity in _ALL_OF_OURS else f for f in facts]
    surface = subject.surface.lower()
    if subject.entity != TEAM or surface != "we" and not surface.startswith("our "):
        return facts
    home = _HOUSEHOLD if surface == "we" else _OURS_AT_HOME
    me = speaker.lower() if speaker and speaker.lower() not in ("user", "me") else USER
    # (dataclasses.replace keeps the fact's text and the check a classifier still owes it)
    return [replace(f, entity=me) if f.attribute in home else f for f in facts]


def _as_speaker(fact: Fact, speaker: str | None) -> Fact:
    if speaker and fact.entity == USER and speaker.lower() not in ("user", "me"):
        return replace(fact, entity=speaker.lower())
    return fact


_PLACES_AND_ORGS = frozenset({"location", "employer", "school", "hometown"})


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
    found = person_frames.read(rest) if subject.kind in ("person", "team") else None
    if found and found[0] in _PLACES_AND_ORGS and person_frames.MOVED.match(rest) \
            and category_of(found[1][0]):
        found = None  # "We moved to MySQL": a tool, not a place or an employer
    if found:
        attr, vals = found
        if attr == "learning" and category_of(vals[0]) in PERSONAL:
            attr = category_of(vals[0]) or attr  # "Learning Colemak": the keyboard layout
        facts = _shape(entity, attr, vals, [], cues)
        if attr == "location" and any(person_frames.lower_place(v) for v in vals):
            # a place typed without capitals, when no other reading is found: the classifier's
            # model decides (stub.py)
            token = person_frames.LOWER_PLACES.set(False)
            try:
                other = _read(subject, rest, cues)
            finally:
                person_frames.LOWER_PLACES.reset(token)
            if other:
                return other
            facts = [Fact(f.entity, f.attribute, f.value, f.ended, f.text, "lower place")
                     for f in facts]
        elif attr == "location" and person_frames.MOVED.match(rest):
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
    if cues.once and attr in ROUTINES:
        return []  # "took an uber to work today": an exception, not the commute
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
