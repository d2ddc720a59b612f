"""Which fact a predicate states about a person, however it is phrased.

Each frame is a verb phrase that names one attribute of the inventory
(`recall_core.kit.attributes`) and where its value is: "work at X", "just started a new job at
X", "joined X", "am at X now" are all `employer`; "live in X", "moved to X", "relocated to X",
"am in X now" are all `location`. A frame reads the predicate of one statement (what follows
its subject, `subjects.find_subject`), from its start, so an object deep in another clause
never becomes the value. Frames are tried in order; the first that yields a value wins.

Values are cut by `values` and checked: a place, a company or a person's name must be a
proper noun ("I moved to a bigger flat" is no location, "I joined the gym" no employer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from . import values as V
from .roles import lower_name, org_like, proper, role

__all__ = ["AUX", "FRAMES", "MOVED", "Frame", "org_like", "place", "proper", "read", "role",
           "role_too"]

_I = re.IGNORECASE

#: auxiliaries and adverbs allowed between the subject and a frame's verb
AUX = (r"(?:(?:have|has|had|am|is|are|will|would|do|does|did|be|been|was|were|just|also|"
       r"now|still|recently|finally|officially|actually|currently|really|already|"
       r"eventually|happily|mostly|mainly|primarily|basically|only|even|again|technically|"
       r"kind of|sort of|pretty much|more or less|partly|usually|normally|generally|"
       r"(?:have\s+)?decided\s+to|went\s+and|ended\s+up|got\s+to)\s+)*")




@dataclass(frozen=True)
class Frame:
    attribute: str
    pattern: re.Pattern[str]
    parse: Callable[[str], list[str]]
    guard: Callable[[str], bool] | None = None


def _one(stops: str, max_words: int = 6) -> Callable[[str], list[str]]:
    def parse(raw: str) -> list[str]:
        v = V.value(raw, stops, max_words)
        return [v] if v else []
    return parse


def _many(max_words: int = 4) -> Callable[[str], list[str]]:
    return lambda raw: V.items(raw, V.LIST, max_words)


def _f(attribute: str, verbs: str, parse: Callable[[str], list[str]],
       guard: Callable[[str], bool] | None = None) -> Frame:
    # "am learning" is also "is learning" / "are learning": AUX takes the person's "is" or
    # "are", so a verb written after "am" must match without it ("Nadia is learning the cello")
    verbs = re.sub(r"(^|\|)am ", r"\1(?:am )?", verbs)
    return Frame(attribute, re.compile(r"^" + AUX + r"(?:" + verbs + r")\s+(?P<v>.+)$", _I),
                 parse, guard)




#: Pronouns as people give them ("they/them", "she/her").
PRONOUNS = (r"(?:he|she|they|xe|ze|fae|it)/(?:him|her|them|hir|zir|faer|its|his|hers|theirs|"
            r"they|she|he)(?:/(?:his|hers|theirs|him|her|them))?")
_DEGREE = (r"(?:phd|masters|master's|mba|doctorate|bachelor's|bachelors|degree|postdoc|msc|"
           r"bsc|ba|ma)")
_NUMBER_WORDS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                 r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty")
_PLACE = _one(V.PLACE, 5)


def _org(raw: str) -> list[str]:
    """An organisation: the name after "called"/"named" ("a startup called Loop"), else the
    words up to the clause's end."""
    if m := re.search(r"\b(?:called|named)\s+([A-Z][\w&.'-]*(?:\s[A-Z][\w&.'-]*)*)", raw):
        return [m[1]]
    v = V.value(raw, V.ORG, 6)
    return [v] if v else []


_ORG = _org
_TITLE = re.compile(r"^(?:the\s+)?(?:cto|ceo|cfo|coo|vp|director|head|lead|manager|boss)"
                    r"(?:\s+of\s+[\w ]+?)?,\s+(?P<name>[A-Z]\w+(?:\s[A-Z]\w+)?)", _I)


# Places of work said as common nouns, never an employer's name ("a nurse at hospital").
_WORKPLACES = frozenset("""
home work school college uni university hospital church night nights weekends clinic office
store shop restaurant cafe bar hotel factory warehouse bank lab startup agency company firm
""".split())


# (no group named "v": the parse reads the whole predicate, to see what follows the name)
_DRIVES_FOR = re.compile(r"^" + AUX + r"(?:now\s+)?(?:drive|drives|driving|deliver|delivers|"
                         r"delivering)\s+for\s+(?P<org>.+)$", _I)
_ON_THE_SIDE = re.compile(r"\b(?:on|at)\s+(?:the\s+)?weekends?\b|\bon the side\b|\bside\s+"
                          r"(?:gig|hustle|job)\b|\bin my (?:spare|free) time\b|\bevenings\b|"
                          r"\bsometimes\b|\bfor extra\b", _I)


def _drives_for(predicate: str) -> list[str]:
    m = _DRIVES_FOR.match(predicate)
    if not m or _ON_THE_SIDE.search(predicate):
        return []
    return [v for v in _ORG(m["org"]) if proper(v)]


# (no group named "v": the frame's parse reads the whole predicate, to see the role)
_ROLE_AT = re.compile(r"^" + AUX + r"(?:am|is)\s+(?:a|an)\s+(?P<role>[\w -]{1,40}?)\s+(?:at|for)"
                      r"\s+(?P<org>.+)$", _I)


def _lower_employer(predicate: str) -> list[str]:
    m = _ROLE_AT.match(predicate)
    # ("at the moment", "at a startup": after a determiner a common noun, never a name)
    if not m or not role(m["role"]) or re.match(r"(?:the|a|an|my|our|this|that|some)\b",
                                                 m["org"], _I):
        return []
    return [v for v in _ORG(m["org"]) if lower_name(v) and not set(v.split()) & _WORKPLACES]


def _name_or_titled(raw: str) -> list[str]:
    """ "the CTO, Amara": the person, not the title."""
    if m := _TITLE.match(raw.strip()):
        return [m["name"]]
    v = V.value(raw, V.NAME, 4)
    return [v] if v else []


_NAME = _one(V.NAME, 4)
_THING = _one(V.THING, 6)
_DIET = (r"vegetarian|vegan|pescatarian|pescetarian|keto|paleo|gluten[- ]free|dairy[- ]free|"
         r"lactose[- ]free|plant[- ]based|carnivore|kosher|halal|low[- ]carb|flexitarian|"
         r"raw vegan|whole30|mediterranean")
_TIME_VALUE = r"(?:\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?|noon|midnight)"
TZ = (r"(?:(?:UTC|GMT|CET|CEST|EET|EEST|WET|WEST|BST|IST|EST|EDT|CST|CDT|MST|MDT|PST|PDT|"
       r"AKST|HST|JST|KST|AEST|AEDT|ACST|AWST|NZST|NZDT|SGT|HKT|WIB|PHT|MSK|SAST|EAT|WAT|CAT|"
       r"BRT|ART|GST|ICT|AST|AET|NZT)\b|UTC\s*[+-]?\s*\d{0,2}(?::\d\d)?|GMT\s*[+-]?\s*\d{0,2}|"
       r"[A-Z][a-z]+/[A-Z][\w/+-]+|(?:the\s+)?"
       # "on Pacific time", not "on neovim full time" (a way of working, no zone)
       r"(?![\w/+ -]*?\b(?:full|part|half|over|real|spare|free|screen|quality|lunch|dinner|"
       r"bed|nap|play|game|same|extra|first|last|long|hard|good|great|bad)\s+time\b)"
       r"[\w/+ -]+?\s+(?:time ?zone|time))")


def zone_name(raw: str) -> str:
    """A zone as said, without its article or the words "time zone" ("the Eastern time
    zone" -> "Eastern")."""
    return re.sub(r"^the\s+|\s+(?:time ?zone|tz)$", "", raw, flags=_I).strip()


_DEMONYMS = set("""
american british english scottish welsh irish canadian australian german french italian
spanish portuguese dutch belgian swiss austrian swedish norwegian danish finnish polish czech
russian ukrainian greek turkish indian chinese japanese korean vietnamese thai filipino
brazilian mexican argentinian chilean colombian peruvian nigerian kenyan egyptian moroccan
israeli iranian pakistani bangladeshi indonesian malaysian singaporean european asian african
latino latina jewish muslim christian catholic hindu buddhist atheist vegan vegetarian
""".split())


def _name_alone(raw: str) -> list[str]:
    """ "I'm Jonas": a name said on its own (not "I'm Italian", not "I'm Vegan")."""
    v = raw.strip(" .!")
    if not re.fullmatch(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?", v) or v.lower() in _DEMONYMS:
        return []
    return [v]


# Fields of work ("moved into product design", "I do QA at Ubisoft").
_FIELDS = (r"(?:research|design|engineering|management|marketing|sales|finance|consulting|"
           r"product|science|security|teaching|nursing|law|medicine|operations|support|"
           r"recruiting|hr|devops|analytics|qa|testing|accounting|admin|it|ux|ui|seo|"
           r"copywriting|development|data|ml|ai|infra|infrastructure|logistics|compliance|"
           r"procurement|payroll|pr|comms|communications)")

FRAMES: tuple[Frame, ...] = (
    # -- identity ---------------------------------------------------------------------------
    Frame("name", re.compile(r"^am\s+(?P<v>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)[.!]?$"),
          _name_alone),
    Frame("pronouns", re.compile(r"^" + AUX + r"(?:go by|goes by|use|uses|am|is|are)\s+"
                                 r"(?P<v>" + PRONOUNS + r")(?:\s+pronouns)?[.!]?$", _I),
          lambda raw: [raw]),
    _f("name", r"go by|am called|am named|prefer to be called|like to be called|"
       r"want to be called|changed my name to|am known as", _NAME, proper),
    Frame("age", re.compile(r"^" + AUX + r"(?:am|is|are|turned|turn|will turn|will be)\s+"
                            r"(?P<v>\d{1,3}|" + _NUMBER_WORDS + r")(?:\s+(?:years?|yrs?)(?:\s+old)?)?"
                            r"(?:\s+(?:now|today|this year|next month|last week))?[.!]?$", _I),
          lambda raw: [raw]),
    Frame("age", re.compile(r"^" + AUX + r"(?:am|is|are)\s+(?P<v>\d{1,3})\s+(?:years?|yrs?)\s+"
                            r"old\b", _I), lambda raw: [raw]),
    Frame("age", re.compile(r"^" + AUX + r"turned\s+(?P<v>\d{1,3}|" + _NUMBER_WORDS + r")\b", _I),
          lambda raw: [raw]),
    _f("birthday", r"was born on|were born on|celebrate my birthday on", _one(V.COMMON, 4)),
    # -- where --------------------------------------------------------------------------------
    Frame("timezone", re.compile(r"^" + AUX + r"(?:am|is|are|work|live)\s+(?:in|on)\s+"
                                 r"(?P<v>" + TZ + r")(?:\s+now|\s+these days)?[.!]?$"),
          lambda raw: [zone_name(raw)]),
    _f("location", r"live|lives|living|reside|resides|residing|am based|is based|are based|"
       r"based|am located|located|settled(?: down)?|am settled|am staying|call|calls|"
       r"back|am back|moved back",
       lambda raw: _in_place(raw)),
    _f("location", r"moved|move|am moving|moving|relocated|relocating|am relocating|"
       r"shifted|have shifted|"
       r"emigrated|immigrated|settled|made the move|packed up and moved",
       lambda raw: _to_place(raw)),
    _f("location", r"am based out of|based out of|am out of|operate out of", _PLACE, proper),
    _f("location", r"am|is|are", lambda raw: _now_in(raw)),
    _f("hometown", r"am originally from|is originally from|am from|is from|are from|"
       r"come from|comes from|grew up in|was raised in|was born in|were born in|hail from",
       _PLACE, proper),
    # -- the providers one is a customer of (a bank by its verb, any other by its name) -----
    _f("bank", r"bank with|banks with|bank at|banks at|am banking with|banking with|"
       r"have (?:an|my|our|a) (?:\w+ )?(?:account|accounts) (?:with|at)|"
       r"(?:opened|have opened|just opened) (?:an|a|my|our) (?:\w+ )?account (?:with|at)(?: the)?|"
       r"(?:moved|switched|transferred) (?:all )?(?:my|our) (?:\w+ )?(?:accounts|banking) "
       r"(?:over )?to", _ORG, proper),
    _f("provider", r"am with|is with|are with|have been with|has been with|been with|"
       r"am a (?:member|customer|client) (?:at|of|with)|am insured (?:with|by)|"
       r"get (?:my|our) (?:internet|broadband|wifi|phone service|cell service|mobile service|"
       r"insurance|health insurance|car insurance|coverage) (?:through|from|with|via)|"
       r"insured (?:with|by)|signed up (?:with|at|to)|got (?:insurance|a policy|cover|coverage) "
       r"(?:with|from|through)|(?:am |are |is |been |have |has |just |now )*(?:re-?)?registered "
       r"(?:with|at)|(?:ported|moved|switched|transferred|took) (?:my|our|his|her) "
       r"(?:phone )?(?:number|numbers|line|lines|plan|service|account|accounts|money|savings|"
       r"banking|membership|policy|insurance|cover) (?:over )?(?:to|with)",
       _ORG, lambda v: _provider_kind(v) is not None),
    # -- work and study -----------------------------------------------------------------------
    _f("employer", r"(?:work|works|working|started working|began working|am employed|"
       r"is employed|employed|teach|teaches|am teaching|is teaching|lecture|lectures|"
       r"waitress|waitresses|bartend|bartends|intern|interning|freelance|consult|tutor|"
       r"nanny|cook|cooks|serve|serves|clean|cleans|contract|contracts|contracting|"
       r"(?:do|does|doing|am doing|is doing)\s+(?:[\w-]+\s+){0,2}?" + _FIELDS + r")"
       r"(?:\s+(?:full[- ]time|part[- ]time|remotely|as (?:a|an) [\w -]{1,40}?|"
       r"in [\w -]{1,30}?))?\s+(?:over\s+)?(?:at|for|with|by)", _ORG),
    _f("employer", r"joined|am joining|is joining|signed with|signed on with|"
       r"(?:took|taking|got|accepted|accepting|landed|received|signed|started|have|has|"
       r"took up)\s+(?:a|an|the|"
       r"my)\s+(?:[\w-]+\s+){0,2}(?:job|position|role|offer|gig|contract|internship)\s+"
       r"(?:at|with|from)|accepted an offer (?:at|from)|started (?:at|with)|"
       r"am starting at|starting at|start at|got hired (?:by|at)|hired (?:by|at)|"
       r"landed at|landed a job at|ended up at|(?:got |was |been |has been )?taken on (?:at|by)|"
       # "Dan's doing 12 hour shifts at the Amazon warehouse", "she's on nights at St Mary's"
       r"(?:am|is|are) (?:doing |working |on )(?:nights|days|earlies|lates|"
       r"(?:\d+[- ]hour |night |day |long |extra )?shifts) at|"
       r"got poached by|poached by|recruited by|headhunted by|"
       r"am (?:now )?at|is (?:now )?at|have been at|has been at|been at|"
       r"switched (?:jobs|companies) to|moved to a new (?:job|company|role) at|"
       r"am (?:a|an) [\w -]{1,40}? (?:at|for|with)|is (?:a|an) [\w -]{1,40}? (?:at|for|with)|"
       r"am on the [\w -]{1,30}? team at|left [\w .&-]{1,30}? (?:for|to join)", _ORG,
       proper),
    # "i'm a cashier at target": after a role, a name typed without capitals is the employer
    # as after "work at" ("i work at costco"), not only a capitalised one
    Frame("employer", _ROLE_AT, _lower_employer),
    # "Tom drives for FedEx": a driver's employer; "I drive for Uber on weekends" is a side
    # gig beside the job, no employer of its own
    Frame("employer", _DRIVES_FOR, _drives_for),
    # "I work front desk at Brightwater Dental", "works weekends at Target": what or when
    # one works, then where (a name)
    _f("employer", r"(?:work|works|working)\s+(?!(?:out|off|on|with|from|in|for|at|as|hard|"
       r"late|long|remotely|from home)\b)(?:[a-z-]+\s+){1,2}?(?:at|for)", _ORG, proper),
    # "I teach maths at St Anne's", "she lectures in law at Leeds": what one teaches, then
    # where (a name: a school one teaches at is where one works, not where one studies)
    _f("employer", r"(?:teach|teaches|am teaching|is teaching|lecture|lectures|tutor|tutors)\s+"
       r"(?:[\w-]+\s+){1,3}?(?:at|for)", _ORG, proper),
    # "moved over to KPMG": a company, when the name does not read as a place
    _f("employer", r"(?:moved|went|jumped|switched|transferred)(?: over| ship)? to|"
       r"have been with|has been with|been with|am with", _ORG, org_like),
    _f("occupation", r"work as|works as|working as|am working as|started working as|"
       r"got a job as|took a job as|got promoted to|was promoted to|promoted to|am now|became|"
       r"(?:have |has )?(?:taken|took|got|started|accepted) (?:a|an|my|his|her|their|the) "
       r"(?:[\w-]+ ){0,2}?job as|started as|have started as|has started as|"
       r"started working (?:[\w ]{1,30}? )?as|"
       r"qualified as|have qualified as|has qualified as|"
       r"took over as|has taken over as|have taken over as|got bumped up to|bumped up to|"
       r"moved up to|stepped up as|stepped into the role of|"
       r"got (?:the|a|my) (?:title bump|title change|promotion|bump) to|"
       r"have become|am becoming|retrained as|trained as|am employed as|am retraining as|"
       r"retraining as|"
       r"(?:went|am going|going|got|am) back to work(?: part[- ]time| full[- ]time)? as",
       lambda raw: _role_value(raw)),
    # "my dad's been an electrician for 30 years": still one (AUX alone would take "has")
    Frame("occupation", re.compile(r"^" + AUX + r"(?:am|is|are|has been|have been|been)\s+"
                                   r"(?:a|an|the)\s+(?P<v>.+)$", _I),
          lambda raw: _role_value(raw, plain=True)),
    # "Dad finally retired", "I'm retired now", "she retired from teaching last year": what
    # one is now (not "we retired Chef": a thing retired is named after the verb)
    Frame("occupation", re.compile(r"^" + AUX + r"(?P<v>retired)(?=\s*$|\s*[,.!;]|\s+(?:from|"
                                   r"last|this|in|on|at|after|early|now|yesterday|today|"
                                   r"recently|a|two|three|four|five|\d+|and|so|but)\b)", _I),
          lambda raw: ["retired"]),
    # "my brother writes firmware for a living": what one does for a living is the job
    Frame("occupation", re.compile(r"^" + AUX + r"(?P<v>(?!(?:not|never)\b)[a-z][\w -]{2,40}?)\s+"
                                   r"for a living\b", _I), lambda raw: [raw]),
    _f("manager", r"report to|reports to|report directly to|am reporting to|now report to|"
       r"reporting to|reporting directly to",
       _name_or_titled, proper),
    _f("school", r"study at|studies at|am studying at|go to|goes to|am enrolled at|"
       r"am enrolled in|attend|attends|transferred to|am (?:a )?(?:student|freshman|"
       r"sophomore|junior|senior|undergrad|grad student|phd student|phd candidate|"
       r"masters student|postdoc) at|"
       # "Leo's doing his PhD at ETH Zurich"
       r"am doing (?:a|an|my|his|her|their) (?:[\w-]+\s+){0,2}?" + _DEGREE +
       r"(?: in [\w ]{1,30}?)? at",
       _ORG, proper),
    # "Emily's settling in well at Hillside Academy", "Noah started sixth grade at Roosevelt
    # Middle", "Jake's loving Hillside Academy": a school by its name
    _f("school", r"settling in (?:well |nicely |fine |ok )?at|settled in (?:well |nicely |fine )?at|"
       r"started (?:[\w-]+ )?(?:grade|year|form|reception|nursery|kindergarten|secondary|"
       r"juniors|infants)(?: \d+)? at|loving|loves",
       _ORG, lambda v: proper(v) and SCHOOLISH.search(v) is not None),
    _f("field_of_study", r"major in|majoring in|am majoring in|am doing a (?:degree|phd|"
       r"masters|master's|bachelor's|bachelors|mba|doctorate) in|am getting (?:a|my) "
       r"(?:degree|phd|masters|bachelors) in|"
       r"am studying|study|studies", _one(V.ORG, 4)),
    _f("learning", r"am learning|started learning|am (?:now )?taking (?:\w+ )?lessons in|"
       r"am picking up|am teaching myself|started (?:taking )?(?:\w+ )?lessons in|"
       r"(?:am |have been |been )?trying to (?:learn|pick up|get into)",
       _one(V.ORG, 4)),
    # "Started Polish lessons", "I'm having piano lessons these days", "booked some driving
    # lessons": what the lessons are in is what one is learning
    _f("learning", r"(?:am |have |have been |been )?(?:taking|having|doing|started|starting|"
       r"booked|signed up for)(?: some| weekly| private| evening| online)?",
       lambda raw: _lessons_in(raw)),
    # -- people ---------------------------------------------------------------------------
    # ("seeing someone called Rhys", "dating a guy named Joel": the name)
    _f("partner", r"(?:married to|got married to|engaged to|got engaged to|dating|seeing|"
       r"in a relationship with|together with|going out with|married)"
       r"(?:\s+(?:someone|somebody|a guy|a girl|a man|a woman|a lovely \w+)\s+(?:called|named))?",
       _NAME, proper),
    Frame("relationship_status", re.compile(r"^" + AUX + r"(?:am|is|are)\s+(?:now\s+)?(?:seeing|"
                                            r"dating)\s+someone\b", _I),
          lambda raw: ["in a relationship"]),
    Frame("relationship_status", re.compile(
        r"^" + AUX + r"(?:am|is|are|got|just got)\s+(?:now\s+)?(?P<v>single|married|engaged|"
        r"divorced|separated|widowed|in a relationship)\b", _I), lambda raw: [raw]),
    # -- habits -----------------------------------------------------------------------------
    Frame("diet", re.compile(r"^" + AUX + r"(?:am|is|are|went|gone|became|become|turned|eat|"
                             r"eats|follow|am on|am eating|switched to|am going|went fully|"
                             r"am mostly|am strictly|am now)\s+(?:a\s+|fully\s+|strictly\s+|"
                             r"mostly\s+|now\s+)?(?P<v>" + _DIET + r")\b", _I),
          lambda raw: [raw]),
    Frame("diet", re.compile(r"^" + AUX + r"(?:eat|eats|am eating|started eating|went back to "
                             r"eating|am back to eating|back to eating|am eating)\s+"
                             r"(?:everything|meat|fish and meat|anything)\b(?!\s+"
                             r"(?:but|except))|^" + AUX + r"(?:quit|gave up|stopped) being (?:a\s+)?"
                             r"(?:vegetarian|vegan|pescatarian)\b", _I),
          lambda raw: ["omnivore"]),
    Frame("occupation", re.compile(r"^" + AUX + r"(?:am|is|are)\s+(?:now\s+)?managing\s+"
                                   r"(?P<v>(?:the|a|our)\s+[\w -]+)", _I),
          lambda raw: ["manager"]),
    Frame("occupation", re.compile(r"^" + AUX + r"(?:moved|transitioned|pivoted|switched)\s+"
                                   r"(?:careers\s+)?(?:into|to)\s+(?!(?:a|an|the|my|our)\b)"
                                   r"(?P<v>[\w -]+?" + _FIELDS + r")\b", _I),
          lambda raw: [raw]),
    # "I do QA at Ubisoft", "My husband does IT support at a bank": a field of work done
    Frame("occupation", re.compile(r"^" + AUX + r"(?:do|does|doing|am doing|is doing)\s+"
                                   r"(?P<v>(?:[\w-]+\s+){0,2}?" + _FIELDS + r")\s+"
                                   r"(?:over\s+)?(?:at|for|in)\b", _I), lambda raw: [raw]),
    _f("answer_language", r"want answers in|prefer answers in|want replies in|"
       r"would like answers in|want you to answer in|want you to reply in",
       _one(V.COMMON, 2), proper),
    _f("work_hours", r"work|works|usually work|am working",
       lambda raw: _hours(raw)),
    _f("wake_time", r"wake up|get up|wakes up|gets up|am up|usually wake up|usually get up|"
       r"sleep in|am sleeping in|sleeping in|wake|am waking up|waking up",
       lambda raw: _at_time(raw)),
    _f("bedtime", r"go to bed|go to sleep|goes to bed|fall asleep|turn in|sleep",
       lambda raw: _at_time(raw)),
    _f("gym_schedule", r"go to the gym|hit the gym|work out|go to the gym|lift|train|"
       r"exercise|do the gym", lambda raw: _schedule(raw)),
    _f("commute", r"commute|get to work|go to work|travel to work",
       lambda raw: [] if re.match(r"(?:to|from|into|in|at|for|every|daily|each)\b", raw, _I)
       else _one(V.COMMON, 4)(raw)),  # "I commute to Munich": where, not how
    Frame("commute", re.compile(r"^" + AUX + r"(?:usually\s+)?(?P<v>(?:biking|cycling|"
                                r"driving|walking|bike|cycle|drive|walk|"
                                # "take the 42 bus", "the N train": a line's number
                                r"(?:take|taking|get|getting|catch|catching) the (?:[\w.-]{1,5}\s+)?"
                                r"(?:train|bus|subway|tube|metro|"
                                r"tram|ferry)|"
                                r"ride (?:my|a) (?:bike|scooter|motorcycle|e-bike))s?|"
                                r"takes the (?:[\w-]{1,4}\s+)?(?:train|bus|subway|tube|metro|"
                                r"tram|ferry)|"
                                r"rides (?:my|a|her|his) (?:bike|scooter|motorcycle|e-bike))\s+"
                                # "in" alone: "I take the train in every day"
                                r"(?:(?:to|into) (?:work|the office|town|the city|(?-i:[A-Z]\w+))\b|"
                                r"in\b(?!\s+(?:the|a|an|my|"
                                r"our|(?-i:[A-Z])))(?!-))", _I), lambda raw: [_mode(raw)]),
)


_CONNECTORS = {"of", "de", "la", "du", "del", "do", "da", "upon", "on", "am", "the", "y", "en",
               "le", "sur", "al", "el"}
_PLACE_ACRONYMS = {"UK", "US", "USA", "UAE", "NYC", "LA", "SF", "DC", "EU", "NZ", "HK"}


def place(v: str) -> bool:
    """A place name: every word capitalised (connectors aside), not a tool the lexicon
    knows ("moved to Firefox"), not an organisation's acronym ("moved over to KPMG")."""
    from .lexicon import category_of

    words = v.replace(",", " ").split()
    # A place named like a library ("Phoenix", "Ember") is still a place to live in; a
    # browser or a chat tool is not.
    if not words or category_of(v) not in (None, "framework", "frontend_framework",
                                           "language", "database", "orm"):
        return False
    if len(words) == 1 and words[0].isupper() and words[0] not in _PLACE_ACRONYMS:
        return False
    if len(words) == 1 and words[0].lower() in _TIMES:
        return False  # "moving in May": when, not where
    return all(w[0].isupper() or w.lower() in _CONNECTORS for w in words)


# Words that follow "live in", "moved to", "I'm in" and are never a place's name.
_NOT_PLACE_WORDS = frozenset("""
a an the my our his her their your this that it them town city home here there now then
again back too also finally still just love fear debt pain trouble charge shape bed school
college work sales marketing management therapy recovery retirement denial shock hospital
""".split())


# Capitalised words of time that follow "moving in", "back in" ("back in January").
_TIMES = frozenset("""
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday spring summer autumn fall winter
christmas easter
""".split())


#: Off while the rules look for any other reading of a statement (`triples`): a place typed
#: without capitals is the reading of last resort ("I moved into ux research" is a job).
LOWER_PLACES: ContextVar[bool] = ContextVar("lower_places", default=True)


def lower_place(v: str, said: str | None = None) -> bool:
    """A name typed without capitals that may be a place ("moved to rotterdam"): one to three
    lowercase words none of which is a word that follows those verbs and never names a place,
    and not a tool the lexicon knows. Only a suggestion: the classifier's model checks it
    (`classifier.place_like`), and without the model it is no place."""
    from .lexicon import category_of

    if not LOWER_PLACES.get():
        return False
    if said is not None and re.match(r"(?:a|an|the|my|our|his|her|their|some|this|that)\s",
                                     said, _I):
        return False  # "in a relationship", "to the suburbs": a noun, not a name
    words = v.replace(",", " ").split()
    return 1 <= len(words) <= 3 and v == v.lower() and all(
        re.fullmatch(r"[a-z][a-z'-]*", w) and w not in _NOT_PLACE_WORDS for w in words) \
        and category_of(v) is None


def _mode(raw: str) -> str:
    """How someone commutes, one word ("takes the bus" -> "bus", "drives" -> "drive")."""
    word = raw.lower().split()[-1]
    return {"cycle": "bike", "cycles": "bike", "bikes": "bike", "drives": "drive",
            "walks": "walk", "biking": "bike", "cycling": "bike", "driving": "drive",
            "walking": "walk"}.get(word, word)


#: The verbs after which a capitalised name is a place only by suggestion.
MOVED = re.compile(r"^" + AUX + r"(?:moved|move|moving|relocated|relocating|made the move)\b",
                   _I)


# How or with whom one lives, before where ("on her own in Bournemouth", "with my aunt in
# Dayton"): no part of the place.
_LIVING_HOW = re.compile(r"^(?:on (?:my|her|his|their|our) own|alone|by (?:myself|herself|"
                         r"himself|themselves)|with (?:my|her|his|their|our) [\w-]+(?: [\w-]+)?)"
                         r",?\s+(?=in\b)", _I)
# A home named by its kind before its town ("into a retirement community in Tucson", "to a
# care home in Poole"): the town is the place.
_HOME_IN = re.compile(r"^(?:back\s+|over\s+)?(?:to|into)\s+(?:a|an|the|her|his|their|my|our)\s+"
                      r"(?:new\s+)?[a-z][\w -]{1,40}?\s+in\s+(?P<v>.+)$", _I)


# A home named by its kind before its town ("live in a bungalow in Worthing", "living at home
# in Harrogate", "we're in the new flat in Chichester now"): the town is where one lives.
DWELLING = (r"(?:flat|apartment|house|home|bungalow|condo|cottage|place|studio|townhouse|"
             r"terrace|semi|duplex|loft|rental|house ?share|caravan|care home|nursing home|"
             r"retirement (?:home|community|village)|farmhouse|cabin|unit|dorm|halls)")
_DWELLING_IN = re.compile(r"^(?:in|at|into)\s+(?:(?:a|an|the|my|our|his|her|their)\s+)?"
                          r"(?:(?:new|little|tiny|small|big|rented|shared|two[- ]bed|"
                          r"one[- ]bed)\s+)*" + DWELLING + r"\s+(?=in\s)", _I)
# "lives out in Perth", "my sister lives up in Aberdeen": where, said with a direction
_AWAY_IN = re.compile(r"^(?:out|over|up|down)\s+(?=in\s)", _I)


def _in_place(raw: str) -> list[str]:
    raw = _DWELLING_IN.sub("", _AWAY_IN.sub("", _LIVING_HOW.sub("", raw)))
    m = re.match(r"(?:in|near|at|outside(?: of)?|just outside(?: of)?|in the heart of)\s+(.+)"
                 r"|(.+?)\s+home\b", raw, _I)
    v = V.value(m[1] or m[2], V.PLACE, 5) if m else None
    return [v] if v and (place(v) or lower_place(v, m[1] or m[2])) else []


def _to_place(raw: str) -> list[str]:
    if h := _HOME_IN.match(raw):
        v = V.value(h["v"], V.PLACE, 5)
        if v and place(v):
            return [v]
    m = re.match(r"(?:back\s+|over\s+|out\s+|down\s+|up\s+|all the way\s+|across\s+)?"
                 r"(?:to|into|in)\s+(.+)", raw, _I)
    v = V.value(m[1], V.PLACE, 5) if m else None
    return [v] if v and (place(v) or lower_place(v, m[1])) else []


_TEMPORARY = re.compile(r"\b(?:for (?:a|the|two|three|\d+|work|business|vacation|holiday|"
                        r"the weekend|a conference|a wedding)|on (?:vacation|holiday|a trip|"
                        r"business)|visiting|this week|today|tonight|until|till|right now|"
                        r"at the moment|airport|hotel|traffic|a meeting|class)\b", _I)


def _now_in(raw: str) -> list[str]:
    """ "I'm in Lisbon now": a place the statement says they are in, lastingly."""
    raw = _DWELLING_IN.sub("", raw)
    m = re.match(r"(?:now\s+|currently\s+|finally\s+)?(?:living\s+|back\s+|settled\s+|out\s+|"
                 r"over\s+|up\s+|down\s+)?in\s+"
                 r"(.+)|(?:a|an)\s+(?P<res>[A-Z][\w ]+?)\s+(?:resident|local)\b", raw, _I)
    if not m or _TEMPORARY.search(raw):
        return []
    v = V.value(m[1] or m["res"], V.PLACE, 4)
    return [v] if v and (place(v) or lower_place(v, m[1] or m["res"])) else []


def _role_value(raw: str, plain: bool = False) -> list[str]:
    raw = re.sub(r"^(?:(?:a|an)\s+)?(?:full[- ]time\s+|part[- ]time\s+)?", "", raw, flags=_I)
    # "a stay at home dad": one role, though "at home" ends a value elsewhere
    raw = re.sub(r"^stay[- ]at[- ]home\b", "stay-at-home", raw, flags=_I)
    v = V.value(raw, V.ORG + r"|\s(?:at|for|with|by|on)\b", 5)
    if not v:
        return []
    if plain and not role(v):
        return []
    return [v] if role(v) or not plain else []


_LESSONS = re.compile(r"^(?!(?:the|a|an|my|our|his|her|their|some|these|those|more|extra|"
                      r"one|two|three|four|five|six|few|couple|several|weekly|daily|\d+)\b)(?P<v>[A-Za-z][\w-]*(?:\s[A-Za-z][\w-]*)?)\s+(?:evening\s+|night\s+|"
                      r"online\s+|group\s+|private\s+)?(?:lessons|classes|class|course|tuition)\b",
                      _I)


def _lessons_in(raw: str) -> list[str]:
    return [m["v"]] if (m := _LESSONS.match(raw)) else []


def _hours(raw: str) -> list[str]:
    m = re.match(r"((?:from\s+)?" + _TIME_VALUE + r"\s*(?:to|-|until|till)\s*" + _TIME_VALUE
                 + r"|nights|night shifts|the night shift|days|early shifts|late shifts|"
                 r"weekends|four days a week|part[- ]time|full[- ]time)\b", raw, _I)
    return [m[1]] if m else []


def _at_time(raw: str) -> list[str]:
    m = re.match(r"(?:at|around|by|before|until|till)\s+(" + _TIME_VALUE + r")", raw, _I)
    return [m[1].strip()] if m else []


def _schedule(raw: str) -> list[str]:
    m = re.match(r"((?:on|every|in the|at)\s+[\w :,]+?)(?:[.!,;]|$| because| but| and i)",
                 raw, _I)
    return [m[1].strip()] if m else []


_ROLE_TOO = re.compile(r"\bas (?:a|an|the)\s+(?P<v>[\w -]{2,40}?)(?:\s+(?:at|for|in|with|since|"
                       r"and|but)\b|[,.;!]|$)|^" + AUX + r"(?:am|is|are)\s+(?:a|an|the)\s+"
                       r"(?P<w>[\w -]{2,40}?)\s+(?:at|for|with)\s+[A-Z]|^" + AUX +
                       r"(?:do|does|doing|am doing|is doing)\s+(?P<x>(?:[\w-]+\s+){0,2}?"
                       + _FIELDS + r")\s+(?:over\s+)?(?:at|for|in)\b", _I)


def role_too(predicate: str) -> str | None:
    """The role an employer statement also names ("I work at X as a data engineer", "I'm a
    data scientist at Shopify")."""
    m = _ROLE_TOO.search(predicate)
    if m and m["x"]:
        return m["x"]  # "I do QA at Ubisoft": a field of work, not a title
    v = (m["v"] or m["w"]) if m else None
    return v if v and role(v) else None


# Frames whose verb says nothing of work or study ("am with", "go to", "joined", "moved my
# number to"): a provider the lexicon knows is what the person is a customer of.
_CUSTOMER_OF = frozenset({"employer", "school", "phone_number"})
_WORK_WORDS = re.compile(r"\b(?:work|works|working|worked|job|jobs|hired|employed|intern|"
                         r"internship|role|position|offer|gig|contract|poached|recruited|"
                         r"headhunted|career|teach|teaches|teaching|study|studies|studying|"
                         r"student|enrolled|start|starts|starting|started|notice|contracting|"
                         r"contractor|freelance|freelancing|consult|consulting|colleagues?|"
                         r"coworkers?|team|office|boss|manager)\b", _I)


# Work said as a time or a place ("after work", "near my office") says nothing of the verb's.
_WORK_AS_WHEN_OR_WHERE = re.compile(r"\b(?:after|before|from|near|by|close to|next to|around "
                                    r"the corner from)\s+(?:(?:my|the|our)\s+)?(?:work|office)\b",
                                    _I)


# "My brother's at Monzo now": one is "at" a place of work, a customer "with" a bank.
_AT = re.compile(r"^" + AUX + r"(?:am|is|are|'s|been|have been|has been)\s+(?:now\s+)?at\b", _I)


# A gym said by its name ("Riverside Leisure Centre", "Anytime Fitness", "Ironhouse CrossFit").
_GYMLIKE = re.compile(r"\b(?:leisure cent(?:re|er)|fitness|gym|health club|crossfit|sports "
                      r"cent(?:re|er)|climbing (?:wall|gym|cent(?:re|er))|bouldering)\b", _I)


# A practice said by its name ("Riverside Medical Centre", "Bright Dental", "Ashgrove
# Veterinary"): one registers with it as a patient, never works there by that verb.
_PRACTICES = (("dentist", re.compile(r"\b(?:dental|dentists?|orthodontics?)\b", _I)),
              ("vet", re.compile(r"\b(?:vets?|veterinary|animal hospital)\b", _I)),
              ("gp_surgery", re.compile(r"\b(?:surgery|medical (?:cent(?:re|er)|practice|"
                                        r"group)|health cent(?:re|er))\b", _I)))


def _provider_kind(value: str) -> str | None:
    from .lexicon import PROVIDERS, category_of

    kind = category_of(value)
    if kind is None and _GYMLIKE.search(value):
        return "gym"
    if kind is None:
        return next((k for k, named in _PRACTICES if named.search(value)), None)
    return kind if kind in PROVIDERS else None


#: A school said by its name ("Lincoln Middle School", "Riverside College").
SCHOOLISH = re.compile(r"\b(?:elementary|middle|high|school|academy|university|college|"
                       r"primary|kindergarten|preschool)\b", _I)
_STARTS = re.compile(r"\b(?:start|starts|starting|started)\b", _I)


def _school_named(attribute: str, values: list[str], predicate: str) -> str:
    """ "Maya started at Lincoln Middle School": a school by its name, where one starts with
    no word of work or role ("I started at Lincoln High as a teacher" stays the employer)."""
    if attribute != "employer" or not values or not all(SCHOOLISH.search(v) for v in values):
        return attribute
    if _WORK_WORDS.search(_STARTS.sub("", predicate)) or re.search(r"\bas\s+(?:a|an|the)\b",
                                                                    predicate, _I):
        return attribute
    return "school"


def _provider(attribute: str, values: list[str], predicate: str) -> str:
    """The provider kind a frame's value names, when the frame's verb is no word of work:
    "I bank with Chase" / "I'm with Verizon" / "I go to Planet Fitness" are no employer or
    school; "I work at Chase" and "I'm a teller at Chase" are (a role names work)."""
    kinds = {_provider_kind(v) for v in values}
    if attribute == "provider":  # its guard took only values of one provider kind each
        return kinds.pop() if len(kinds) == 1 else "uses"
    if attribute not in _CUSTOMER_OF or _WORK_WORDS.search(_WORK_AS_WHEN_OR_WHERE.sub("", predicate)) \
            or _AT.match(predicate):
        return attribute
    if len(kinds) != 1 or None in kinds:
        return attribute
    if (m := re.search(r"\b(?:am|is|are)\s+(?:a|an)\s+(?P<r>[\w -]{1,40}?)\s+(?:at|for|with)\b",
                       predicate, _I)) and role(m["r"]):
        return attribute
    return kinds.pop()


def read(predicate: str) -> tuple[str, list[str]] | None:
    """(attribute, values) of the first frame the predicate states, or None."""
    for frame in FRAMES:
        m = frame.pattern.match(predicate)
        if not m:
            continue
        raw = m.groupdict().get("v") or m.group(0)
        found = [v for v in frame.parse(raw) if frame.guard is None or frame.guard(v)]
        if found:
            return _school_named(_provider(frame.attribute, found, predicate), found,
                                 predicate), found
    return None
