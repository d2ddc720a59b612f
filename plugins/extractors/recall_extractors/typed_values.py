"""The value of an attribute in a statement no frame read: found by what kind of value the
attribute takes.

When the classifier says a predicate states `employer`, the value is the organisation it
names ("Took a full-time offer at Cyberdyne" -> Cyberdyne); `editor` takes the editor the
lexicon knows ("fish shell for me" -> fish for `shell`), `age` a number, `deploy_day` a
weekday, and so on. A value said as the one replaced ("from Sublime", "instead of poetry",
"left Initech") is never the value. No value of the right kind: no fact.
"""

from __future__ import annotations

import re

from . import values as V
from .change_words import SWAPPED
from .lexicon import CATEGORY_OF, PROVIDERS, TOOL_CATEGORIES, attribute_for, category_of
from .person_frames import AUX, TZ, zone_name
from .subjects import RELATIONS

_I = re.IGNORECASE

_KIND: dict[str, str] = {
    "employer": "org", "school": "org", "location": "place", "hometown": "place",
    "manager": "person", "partner": "person", "name": "person", "age": "number",
    "email": "email", "phone_number": "phone", "wake_time": "time", "bedtime": "time",
    "standup_time": "time", "deploy_day": "day", "sprint_length": "duration",
    "birthday": "date", "answer_language": "proper", "languages_spoken": "proper",
    "diet": "diet", "gym_schedule": "schedule", "work_hours": "hours",
    "release_schedule": "schedule", "timezone": "timezone",
}
_SCHEDULE = re.compile(r"\b((?:first|last|second|third)\s+(?:mon|tues|wednes|thurs|fri|satur|"
                       r"sun)day\s+of\s+(?:every|each|the)\s+month|(?:every|each)\s+(?:other\s+)?(?:\d+\s+|two\s+|three\s+|four\s+)?"
                       r"(?:morning|evening|afternoon|night|day|weekday|weekend|week|month|"
                       r"sprint|quarter|(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?|"
                       r"on\s+(?:the\s+)?(?:weekends?|weekdays?|(?:mon|tues|wednes|thurs|fri|"
                       r"satur|sun)days?)|in the (?:mornings?|evenings?|afternoons?)|"
                       r"at (?:lunch|night|dawn|\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?)|"
                       r"(?:before|after) work|weekly|daily|monthly|"
                       r"nightly|weekends|weekdays|mornings|evenings|"
                       r"(?:mon|tues|wednes|thurs|fri|satur|sun)days)\b", _I)
_HOURS = re.compile(r"\b((?:from\s+)?\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?\s*(?:to|-|until|"
                    r"till|–)\s*\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?|night shifts?|nights|"
                    r"early shifts?|late shifts?|part[- ]time|full[- ]time|four days a week|"
                    r"(?:mon|tues|wednes|thurs|fri)days? to (?:mon|tues|wednes|thurs|fri)days?)",
                    _I)
_REPLACED = re.compile(r"(?:from|instead of|rather than|over|than|not|no more|"
                       r"quit|left|leaving|" + SWAPPED + r"|"
                       r"last day at|out of|ex-|formerly|used to be|was)\s+(?:the\s+|my\s+|"
                       r"our\s+)?$", _I)
_ABOUT = re.compile(r"\b(?:about|regarding|on the topic of)\s+(?:the\s+)?$", _I)
# Another person named in a predicate before the value ("my parents", "a friend", "Sam's").
_RELATION = "(?:" + "|".join(sorted((re.escape(w) for w in RELATIONS), key=len,
                                     reverse=True)) + ")"
_OTHER_PERSON = re.compile(
    r"\b(?:(?:my|our|his|her|their|a|an|the|some)\s+" + _RELATION + r"s?\b|"
    # "bought mum an iPhone 15", "got him a Kindle": given to someone, without "my"
    r"\b(?:bought|buy|buying|got|get|getting|gave|give|giving|ordered|gifted|sent)\s+(?:"
    + _RELATION + r"|him|her|them)\s+(?:a|an|the|some|this|that)\b|"
    r"\b(?!(?:it|that|what|there|here|he|she|who|let)'s\b)[A-Za-z]+'s?\s+(?=\S))", _I)
# A place said of a thing other than a home ("renting a car in Lisbon", "a coworking space
# in Lisbon", "a cafe in Porto"): where that thing is, not where the speaker lives.
_SOMEWHERE = re.compile(r"\b(?:a|an|the|my|our|some)\s+(?:[\w-]+\s+){0,2}(?!(?:flat|apartment|"
                        r"house|home|place|condo|studio|loft|bungalow|cottage|townhouse)\s)"
                        r"[\w-]+\s+(?:in|at|near)\s+$", _I)
# ... or for another person, after it ("picked up a Kindle for my son").
_FOR_ANOTHER = re.compile(r"\s*(?:[\w-]+\s+){0,3}?(?:for|to)\s+(?:my|his|her|their|our|a|an)\s+"
                          + _RELATION + r"s?\b", _I)
# ... or where one travels to ("I commute to Munich", "flying to Tokyo"): not where one lives
# ("went back to Berlin for good" is a move).
_TRAVEL = re.compile(r"\b(?:commut|fl[yi]|flew|travel|driv|drove|go|goes|going|went|head|"
                     r"visit|trip|flight|train|ride|rode)\w*\s+(?:to|into)\s+$", _I)


# ... or where one works ("I work in Leeds city centre", "my office is in Soho"): a home may
# be elsewhere ("Home is Harrogate, 40 minutes on the train").
_AT_WORK = re.compile(r"\b(?:(?:work|works|working|worked)\s+(?:in|near)|(?:office|workplace|"
                      r"job|shift|shifts)\s+(?:is\s+|are\s+)?(?:in|near))\s+$", _I)


def _elsewhere(before: str) -> bool:
    """A place said after these words is where a thing is, where one goes or where one
    works, not a home."""
    return bool(_SOMEWHERE.search(before) or _TRAVEL.search(before) or _AT_WORK.search(before))


_GONE = re.compile(r"^\s*(?:is gone|'s gone|is out|'s out|got too|was too|is dead|died|"
                   r"replaced|was)\b", _I)
_PROPER = re.compile(r"(?<![\w@.])(?:[A-Z][\w&.'+-]*|\d+[A-Za-z][\w-]*)(?:\s+(?:of|de|la|du|"
                     r"del|do|da|van|von|and|&|the|[A-Z][\w&.'+-]*|\d[\w.-]*))*")
_SKIP_WORDS = frozenset("""
i i'm im i've i'd i'll my we our the a an it this that monday tuesday wednesday thursday
friday saturday sunday january february march april may june july august september october
november december today tomorrow yesterday ok okay lol yes no so and but also now then
""".split())
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?\d[\d\s().-]{6,}\d")
_NUMBER = re.compile(r"\b(\d{1,3})(?:st|nd|rd|th)?\b")
_TIME = re.compile(r"\b(\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?|noon|midnight)(?![\d%])", _I)
_DAY = re.compile(r"\b((?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b", _I)
_DURATION = re.compile(r"\b((?:one|two|three|four|five|six|\d+)[- ]weeks?)\b", _I)
_DATE = re.compile(r"\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+"
                   r"\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|"
                   r"mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*)\b", _I)
_DIET = re.compile(r"\b(vegetarian|vegan|pescatarian|pescetarian|keto|paleo|gluten[- ]free|"
                   r"dairy[- ]free|plant[- ]based|carnivore|kosher|halal|low[- ]carb|"
                   r"flexitarian|omnivore|intermittent fasting|whole30|mediterranean)\b", _I)
_LEAD_VERB = re.compile(r"^" + AUX + r"(?:\w+(?:ed|ing|s)?\s+)?(?:(?:up|out|into|in|on|to|"
                        r"for|with|at|a|an|the|my|our|some|more|back)\s+)*", _I)


# "set up his new iPhone", "on my brother's Windows laptop": someone else's, said right before.
_THEIRS = re.compile(r"\b(?:his|her|their|someone's|somebody's|(?!(?:it|that|what|there|here|"
                     r"who|he|she|let|where|how)'s)[a-z]+'s|[\w-]+s')\s+(?:[\w-]+\s+){0,2}$", _I)


def theirs(text: str, value: str) -> bool:
    """The value is named as someone else's in `text`."""
    at = text.lower().find(value.lower())
    return at > 0 and bool(_THEIRS.search(text[:at]))


# A verb of food before a name: "eating fish again" names no shell, whatever a lexicon of
# tools holds under that name ("ordered" is not one: people order phones).
_EATEN = re.compile(r"\b(?:eat|eats|eating|ate|eaten|cook|cooks|cooking|cooked|grill|grilled|"
                    r"bake|bakes|baking|baked|fry|fried|drink|drinks|drinking|drank)"
                    r"\s+(?:(?:a|an|the|some|more|less|lots of|a lot of|real|fresh)\s+)?$", _I)


def eaten(text: str, value: str) -> bool:
    """The value is named as something eaten or drunk in `text`."""
    at = text.lower().find(value.lower())
    return at > 0 and bool(_EATEN.search(text[:at]))


def _kept(text: str, start: int, end: int) -> bool:
    """A mention is the value unless it is said as what was replaced ("from X" only when
    a "to" follows: "alerts come from New Relic" names the value), as a topic ("a book
    about Lisbon"), or beside another person, whose it may be ("visiting my parents in
    Hamburg", "borrowed my dad's Tesla", "got my mom an iPhone", "helping a friend move to
    Munich", "a Kindle for my son"): when unsure whose, no fact."""
    if _ABOUT.search(text[:start]) or _OTHER_PERSON.search(text[:start]) \
            or _FOR_ANOTHER.match(text[end:]) or _THEIRS.search(text[:start]):
        return False
    before = _REPLACED.search(text[:start])
    if before and before.group(0).lower().startswith("from") and \
            not re.search(r"\b(?:to|into|for)\b", text[end:], _I):
        before = None
    return not before and not _GONE.match(text[end:])


def _mentions(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [m.group(1) if m.groups() else m.group(0) for m in pattern.finditer(text)
            if _kept(text, m.start(), m.end())]


def _proper(text: str) -> list[str]:
    out = []
    for m in _PROPER.finditer(text):
        span = m.group(0).strip(" .,'")
        words = span.split()
        while words and words[0].lower() in _SKIP_WORDS:
            words = words[1:]
        if not words or m.start() == 0 and len(words) == 1 and words[0].lower() in _VERBISH:
            continue
        if _kept(text, m.start(), m.end()):
            out.append(" ".join(words))
    return out


_VERSION = re.compile(r"v?\d+(?:\.\d+)*")
_VERBISH = frozenset("""
took got started starting moved switched joined left quit bought sold traded dropped found
finally just back been went made had new deleted cut adopted got lost retired
""".split())


def _categorised(text: str, attribute: str, person: bool) -> list[str]:
    """Names the lexicon files under `attribute` ("VS Code" for editor), in order."""
    words = re.findall(r"[\w.+#/!-]+", text)
    found: list[tuple[int, str]] = []
    lower = [w.lower().strip(".,!") for w in words]
    i = 0
    while i < len(words):
        for n in (3, 2, 1):
            phrase = " ".join(lower[i:i + n])
            if phrase in CATEGORY_OF or (n == 1 and category_of(phrase)):
                name = " ".join(w.strip(".,!") for w in words[i:i + n])
                if i + n < len(words) and _VERSION.fullmatch(words[i + n].strip(".,!")):
                    name += " " + words[i + n].strip(".,!")  # "Postgres 15", "Python 3.12"
                if attribute_for(name, person=person) == attribute or \
                        category_of(name) == attribute:
                    pos = text.find(words[i])
                    if _kept(text, pos, pos + len(name)):
                        found.append((pos, name))
                i += n - 1
                break
        i += 1
    return [name for _, name in found]


def typed(attribute: str) -> bool:
    """Whether the attribute takes a value of a fixed kind (a time, a day, a number...)."""
    return attribute in _KIND and _KIND[attribute] not in ("org", "place", "person", "proper")


# (a unit, or nothing after the number: "a 2019 Mazda 3" names a car)
_MEASURE = re.compile(r"^(?:about\s+|around\s+|like\s+|over\s+|under\s+)?\d[\d.,]*\s*(?:(?:%|x|k|"
                      r"ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|gb|mb|tb)\b|$)", _I)


def measure(value: str) -> bool:
    """A number with its unit ("25 min", "about 3x"): what is said of a thing, not its name."""
    return bool(_MEASURE.match(value))


_ZONE_LEAD = re.compile(r"^(?:(?:is|am|are|'s|'m|on|in|now|still|mostly)\s+)*", re.I)
_ZONE = re.compile(r"(?:" + TZ + r")(?:\s*[+-]\s*\d{1,2}(?::\d\d)?)?")
# a zone named by its city alone ("my timezone is Lisbon"): the whole rest is the name
_ZONE_CITY = re.compile(r"(?P<v>[A-Z][\w-]+(?:\s[A-Z][\w-]+){0,2})(?:\s+now)?[.!]?$")


def _zone(text: str) -> list[str]:
    """A time zone ("CET", "UTC+2", "Pacific time", "Europe/Lisbon"), never any name the
    classifier took for one ("I'm on Aetna through work" is no zone)."""
    rest = _ZONE_LEAD.sub("", text)
    if m := _ZONE.search(rest):
        return [zone_name(m[0].strip())]
    m = _ZONE_CITY.match(rest)
    return [m["v"]] if m else []


def value_for(attribute: str, predicate: str, person: bool) -> list[str]:
    """The value(s) of `attribute` in `predicate`, by the attribute's kind of value."""
    kind = _KIND.get(attribute)
    text = predicate.strip()
    if kind == "email":
        return _EMAIL.findall(text)[:1]
    if kind == "phone":
        return [p.strip() for p in _PHONE.findall(text)][-1:]
    if kind == "number":
        return [n for n in _mentions(text, _NUMBER) if 0 < int(n) < 125][-1:]
    if kind == "time":
        return _mentions(text, _TIME)[-1:]
    if kind == "day":
        return _mentions(text, _DAY)[:1]
    if kind == "duration":
        return _mentions(text, _DURATION)[:1]
    if kind == "date":
        return _mentions(text, _DATE)[:1]
    if kind == "diet":
        return _mentions(text, _DIET)[:1]
    if kind == "schedule":
        return _mentions(text, _SCHEDULE)[:1]
    if kind == "hours":
        return _mentions(text, _HOURS)[:1]
    if kind == "timezone":
        return _zone(text)
    if kind in ("org", "place", "person", "proper"):
        named = re.search(r"\b(?:called|named)\s+([A-Z][\w&.'-]*(?:\s[A-Z][\w&.'-]*)*)", text)
        found = [named[1]] if named else _proper(text)
        if kind == "place":
            found = [f for f in found if not _elsewhere(text[:text.find(f)])]
        if kind == "org" and not found:
            m = re.search(r"\b(?:at|for|by|with)\s+(the\s+[\w -]{3,40})", text, _I)
            found = [v for v in [V.value(m[1], V.ORG, 5)] if v] if m else []
        return found[:1]
    named = _categorised(text, attribute, person)
    if named:
        return named[:1]
    if attribute in CATEGORY_VALUES:
        return [p for p in _proper(text) if category_of(p) is None][:1]
    rest = _LEAD_VERB.sub("", text, count=1)
    v = V.value(rest, V.THING, 5)
    if v and attribute in TOOL_CATEGORIES - PROVIDERS and measure(v):
        return []  # "builds are at 25 min": a measure of the tool, never its name
    return [v] if v else []


#: Attributes whose values are named things (a tool, a service): a capitalised name
#: the lexicon does not know is still such a value ("Gruvbox", "Penpot").
CATEGORY_VALUES = frozenset(set(CATEGORY_OF.values()) | {"package_manager", "uses"})
