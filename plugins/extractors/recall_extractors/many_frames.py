"""Frames of the many-valued facts: likes, dislikes, languages spoken, allergies, pets,
hobbies, skills, children.

A person holds several of each at once, so a statement adds one value per item it lists
("I'm allergic to peanuts and shellfish" -> two) and never replaces another; only an ending
("I'm no longer allergic to peanuts", handled by `triples`) ends one. The frames read a
predicate from its start, as `person_frames` does, and return (attribute, values).
"""

from __future__ import annotations

import re

from . import values as V
from .lexicon import category_of
from .person_frames import AUX, proper
from .subjects import PETS, RELATIONS

_I = re.IGNORECASE

_LIKE = (r"like|likes|love|loves|enjoy|enjoys|adore|adores|am (?:really |totally )?into|"
         r"is (?:really )?into|am (?:a )?(?:big |huge |massive )?fan of|is a (?:big |huge )?fan of|"
         r"am obsessed with|am crazy about|am hooked on|can not get enough of|"
         r"have fallen in love with|fell in love with|have grown to love|dig|prefer|prefers|"
         r"drink a lot of|drink lots of|eat a lot of|eat lots of|live on|live off")
_DISLIKE = (r"hate|hates|dislike|dislikes|detest|detests|loathe|loathes|can not stand|"
            r"cannot stand|am not (?:a |really a |much of a )?fan of|am not (?:really )?into|"
            r"do not like|does not like|do not enjoy|does not enjoy|do not care for|"
            r"can not bear|am sick of|am tired of|have gone off")
_SPEAK = (r"speak|speaks|can speak|am fluent in|is fluent in|am conversational in|"
          r"am a native speaker of|also speak|speak some|speak a little|grew up speaking")
# "I code in Rust" is what they use (tool_frames: `uses`, as "I stopped coding in Rust" is);
# knowing is a skill.
_SKILL = (r"know|knows|am proficient in|am good at|am great at|am an expert in|am experienced "
          r"(?:in|with)|am fluent in|have experience (?:in|with)|am skilled in|write")
_PLAY = (r"play|plays|am playing|started playing|took up|have taken up|picked up|do|does|"
         r"practice|practise|go|goes|have been doing|have been playing|got into|am learning to")
HOBBY_WORDS = _HOBBY_WORDS = set("""
yoga pilates climbing bouldering running jogging swimming cycling hiking surfing skiing
snowboarding skating karate judo boxing kickboxing fencing archery crossfit tennis squash
badminton football soccer basketball volleyball baseball golf rugby cricket hockey chess
poker guitar piano violin drums cello bass ukulele saxophone flute trumpet pottery
knitting crochet painting drawing sketching photography gardening baking cooking woodworking
birdwatching fishing sailing rowing kayaking canoeing dancing salsa tango ballet meditation
triathlons marathons ultimate frisbee pickleball padel table tennis ping pong dnd d&d
video games board games water polo sudoku calligraphy embroidery sewing scuba diving
""".split()) | {"ultimate frisbee", "table tennis", "ping pong", "video games", "board games",
                "water polo", "scuba diving", "rock climbing", "trail running"}


def _frame(verbs: str) -> re.Pattern[str]:
    return re.compile(r"^" + AUX + r"(?:" + verbs + r")\s+(?P<v>.+)$", _I)


_FAN = re.compile(r"^" + AUX + r"(?:am|is|are)\s+(?:a|an)\s+(?:huge|big|massive|die-hard|"
                  r"lifelong|longtime)?\s*(?P<v>(?-i:[A-Z][\w&.' -]{1,30}?))\s+(?:fan|supporter)\b",
                  _I)
_HOBBY_VERB = re.compile(r"^" + AUX + r"(?P<v>knit|paint|draw|sketch|bake|swim|climb|boulder|surf|"
                         r"ski|snowboard|garden|hike|sew|crochet|dance|sing|meditate|journal|"
                         r"skate|fence|row|sail|fish|golf|bowl|kayak|quilt|woodwork|birdwatch)"
                         r"\b(?!\s+(?:a|an|the|my|our|his|her|some|it|them)\b)", _I)
_GERUND = {"swim": "swimming", "ski": "skiing", "skate": "skating", "dance": "dancing",
           "knit": "knitting", "jog": "jogging", "row": "rowing", "sew": "sewing",
           "bake": "baking", "hike": "hiking", "meditate": "meditating",
           "snowboard": "snowboarding", "journal": "journaling"}
_HOW_WELL = re.compile(r"(?:^|(?<=,\s)|(?<=\band\s)|(?<=\bor\s))(?:a (?:bit|little) of|a little|"
                       r"some|basic|conversational|fluent|broken|rusty|decent|passable|"
                       r"schoolboy|schoolgirl|survival)\s+", _I)
_LIKES = _frame(_LIKE)
_DISLIKES = _frame(_DISLIKE)
_SPEAKS = _frame(_SPEAK)
_NATIVE = re.compile(r"^" + AUX + r"(?:am|is) a native (?P<v>[A-Z]\w+) speaker\b", _I)
_SKILLS = _frame(_SKILL)
_PLAYS = _frame(_PLAY)
_ALLERGIC = re.compile(r"^" + AUX + r"(?:am|is|are|got|became)\s+(?:severely\s+|very\s+|"
                       r"mildly\s+|deathly\s+|seriously\s+|slightly\s+|also\s+|now\s+)?"
                       r"allergic\s+to\s+(?P<v>.+)$", _I)
_INTOLERANT = re.compile(r"^" + AUX + r"(?:am|is|are)\s+(?:severely\s+|very\s+|also\s+)?"
                        r"(?P<v>\w+)[- ]intolerant\b", _I)
_ALLERGY = re.compile(r"^" + AUX + r"(?:have|has|got|developed)\s+(?:a|an)\s+(?:severe\s+|"
                      r"mild\s+|serious\s+|bad\s+|slight\s+|new\s+)?(?P<v>[\w -]+?)\s+allergy\b",
                      _I)
_PET = re.compile(r"^" + AUX + r"(?:have|has|got|adopted|rescued|own|owns|bought|"
                  r"brought home|took in|welcomed)\s+(?:a|an|another|one|two|three|\d+|a new|"
                  r"our|my)\s+(?:(?:new|little|rescue|rescued|retired|baby|old|second|third|young|senior|"
                  r"golden|black|white|grey|gray|ginger|tiny|big)"
                  r"\s+)*(?P<kind>[a-z]+(?:\s+pig)?)(?:s)?(?:\s+(?:named|called)\s+(?P<v>(?-i:[A-Z]"
                  r"[\w-]*(?:\s+[A-Z][\w-]*)?))|,\s+(?P<names>(?-i:[A-Z][\w-]*(?:(?:,\s*|,?\s+"
                  r"and\s+)[A-Z][\w-]*)*))\b)?", _I)
_CHILD = re.compile(r"^" + AUX + r"(?:have|has|had)\s+(?:a|an|one|two|three|\d+|a new|"
                    r"another)\s+(?:baby\s+|little\s+|newborn\s+)?(?:son|daughter|kid|child|"
                    r"boy|girl)s?\s+(?:named|called)\s+(?P<v>[A-Z][\w-]*)", _I)


def _more_named(rest: str) -> list[str]:
    """ "... and a daughter named Ava", "..., and a goldfish": more of the same list."""
    out = []
    # (", a hamster and some goldfish", "and two rabbits": a count or a comma too)
    for m in re.finditer(r"(?:,\s*(?:and\s+)?|\band\s+)(?:a|an|one|another|two|three|four|five|"
                         r"\d+|some)\s+(?P<kind>[a-z ]{2,20}?)(?:\s+(?:named|called)\s+"
                         r"(?P<name>[A-Z][\w-]*)|(?=[.!,;]|\s+and\b|$))", rest):
        kind = m["kind"].strip()
        kind = kind if kind in PETS or kind[:-1] not in PETS else kind[:-1]
        if m["name"]:
            out.append(m["name"])
        elif kind in PETS:
            out.append(kind)
    return out


def _hobby_head(item: str) -> str | None:
    """The hobby an item starts with ("chess online a lot" -> "chess"), or None."""
    words = item.split()
    for n in (2, 1):
        if " ".join(words[:n]).lower() in _HOBBY_WORDS:
            return " ".join(words[:n])
    return None


_OWN_LIFE = re.compile(r"(?:my|his|her|their|our|your)\s+(?:new\s+|old\s+|current\s+)?"
                       r"(?P<noun>[a-z]+)\b(?:\s*[.!,]|\s+(?:so|too|very|a lot|to bits)\b|$)", _I)
_LIFE = frozenset("""job work school team boss manager office house flat apartment home life
city town neighbourhood neighborhood company colleagues coworkers neighbours neighbors
family friends""".split())


def _likes(raw: str) -> list[str]:
    raw = re.sub(r"^(?:to\s+|it when\s+|when\s+|using\s+|to use\s+)", "", raw, flags=_I)
    if (m := _OWN_LIFE.match(raw)) and (m["noun"].lower() in RELATIONS
                                        or m["noun"].lower() in _LIFE):
        # "I love my wife", "my son loves his new school": one's own people and life are no
        # taste (a taste is for a kind of thing: hiking, jazz, "my coffee black")
        return []
    return V.items(raw, V.LIST + r"|\s(?:for|in|on|at|with)\s", 4)


def read(predicate: str, person: bool = True) -> tuple[str, list[str]] | None:
    """(attribute, values) of the many-valued fact the predicate states, or None."""
    p = predicate
    if re.match(r"^(?:would|'d)\s+(?:really\s+)?(?:like|love)\b", p, _I):
        return None  # "I'd like a summary" is a request, not a taste
    if m := _ALLERGIC.match(p):
        found = V.items(m["v"], V.LIST, 3)
        return ("allergies", found) if found else None
    if m := _ALLERGY.match(p):
        return "allergies", [m["v"]]
    if m := _INTOLERANT.match(p):
        return "allergies", [m["v"]]
    if m := _NATIVE.match(p):
        return "languages_spoken", [m["v"]]
    if m := _SPEAKS.match(p):
        # "English, Spanish and a bit of Japanese": how well is no part of the language
        found = V.items(_HOW_WELL.sub("", m["v"]), V.LIST, 2)
        if found and all(proper(v) and category_of(v) is None for v in found):
            return "languages_spoken", found
        if found and all(category_of(v) == "language" for v in found):
            return "skills", found
        return None
    if person and (m := _CHILD.match(p)):
        return "children", [m["v"], *_more_named(p[m.end():])]
    if person and (m := _PET.match(p)):
        kind = m["kind"].lower().rstrip("s") if m["kind"].lower() not in PETS else m["kind"]
        if kind.lower() in PETS:
            named = [m["v"]] if m["v"] else re.split(r",\s*|,?\s+and\s+", m["names"] or "")
            named = [n for n in named if n] or [kind.lower()]
            return "pets", [*named, *_more_named(p[m.end():])]
    if m := _FAN.match(p):
        return "likes", [m["v"].strip()]
    if (m := _HOBBY_VERB.match(p)) and not category_of(" ".join(p[m.start("v"):].split()[:2])):
        verb = m["v"].lower()  # (not "fish shell": a tool)
        return "hobbies", [_GERUND.get(verb, verb + ("ing" if not verb.endswith("e") else ""))]
    if m := _DISLIKES.match(p):
        found = _likes(m["v"])
        return ("dislikes", found) if found else None
    if m := _LIKES.match(p):
        if re.search(r"\bprefers?\b", p[:m.start("v")], _I) and re.search(
                r"\s(?:over|to|rather than|than|instead of)\s", m["v"], _I):
            return None  # "I prefer tabs over spaces": a choice between two (tool_frames)
        found = _likes(m["v"])
        if len(found) == 1 and (category := category_of(found[0])) is not None and (
                category == "theme" or re.search(r"\bprefers?\b", p[:m.start("v")], _I)):
            return category, found  # "I prefer dark mode", "I prefer Firefox": the setting
        return ("likes", found) if found else None
    if m := _SKILLS.match(p):
        found = V.items(m["v"], V.LIST, 3)
        if found and all(category_of(v) == "language" for v in found):
            return "skills", found
    # a list first ("I do climbing, yoga and cycling": each item a hobby)
    if m := _PLAYS.match(p):
        found = [_hobby_head(v) for v in V.items(m["v"], V.LIST, 4)]
        if found and all(found):
            return "hobbies", found  # type: ignore[return-value]
    if m := re.match(r"^do (?P<v>\w+ing)\b", p, _I):
        return "hobbies", [m["v"]]  # an ended hobby, as `triples` restates it
    if m := re.match(r"^" + AUX + r"can\s+(?:write|code in|program in|speak)\s+(?P<v>.+)$", p, _I):
        found = V.items(m["v"], V.LIST, 3)
        if found and all(category_of(v) == "language" for v in found):
            return "skills", found
    return None
