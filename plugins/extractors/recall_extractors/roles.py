"""Who someone is at work: a job title ("data engineer", "stay-at-home dad", "beekeeper")
and an organisation's name ("KPMG", "Mercy Hospital"), as the frames need to tell them from
other nouns ("a big fan", "a Londoner", "Austin")."""

from __future__ import annotations

import re

from .fact import Fact

_I = re.IGNORECASE


def proper(v: str) -> bool:
    """A proper noun: starts with a capital or a digit ("Globex", "3M", "iRobot")."""
    return bool(v) and (v[0].isupper() or v[0].isdigit() or (len(v) > 1 and v[1].isupper()))


_NOT_A_NAME = frozenset("""
a an the my our your his her their him them it this that someone somebody nobody everyone
he she they me us you who what new old
""".split())


def lower_name(v: str) -> bool:
    """A word typed without capitals where a name would stand ("my manager is leah"): one or
    two plain words. Whether it reads as a name is the classifier's to say ("lower name")."""
    words = v.split()
    return 1 <= len(words) <= 2 and all(re.fullmatch(r"[a-z]{2,}", w) for w in words) \
        and words[0] not in _NOT_A_NAME


def name_fact(entity: str, attribute: str, value: str) -> Fact:
    """The fact naming a person: as typed, or titled and for the classifier to check
    (`stub.classify_unread`) when typed without capitals."""
    if proper(value):
        return Fact(entity, attribute, value)
    return Fact(entity, attribute, value.title(), check="lower name")


_ROLES = set("""
engineer developer programmer designer architect scientist analyst manager director nurse
teacher doctor physician surgeon dentist lawyer attorney accountant consultant chef cook
student intern researcher professor lecturer pharmacist writer journalist editor artist
musician photographer founder cofounder co-founder ceo cto cfo coo vp president recruiter
marketer salesperson clerk cashier barista waiter waitress bartender driver pilot mechanic
electrician plumber carpenter technician therapist psychologist counselor counsellor
paramedic firefighter officer soldier veteran librarian tutor coach trainer administrator
admin sysadmin devops sre lead tester translator illustrator animator producer actor actress
dancer singer farmer baker butcher vet veterinarian optometrist radiologist nutritionist
dietitian economist statistician mathematician physicist chemist biologist geologist
historian postdoc ph.d phd candidate freelancer contractor entrepreneur owner principal
specialist coordinator assistant associate representative agent broker banker trader
investor auditor paralegal secretary receptionist caregiver nanny midwife surveyor critic
medic mechanic cleric ux dev devs swe sde
""".split())
_NOT_ROLES = {"fan", "lover", "user", "member", "believer", "beginner", "person", "big",
              "huge", "vegetarian", "vegan", "fan of", "parent", "mom", "dad", "mother",
              "father", "native", "speaker", "customer", "regular", "night owl"}


# Person nouns that end like roles but name no job.
_NOT_ROLE_WORDS = frozenset("""
user lover member beginner fan partner other number letter winter summer computer together
brother sister mother father daughter owner player runner smoker drinker gamer reader
worker person leader follower believer optimist pessimist perfectionist minimalist list
vegetarian pescatarian pescetarian vegan flexitarian carnivore omnivore canadian christian
brazilian italian indian asian european american australian
guardian resident native local newcomer foreigner stranger neighbour neighbor customer
speaker listener learner thinker dreamer sleeper eater cooker
""".split())


def role(v: str, known: bool = False) -> bool:
    """A job title: a known role noun, or (unless only `known` ones are asked for) a person
    noun ending like one (-er, -ist, -ian, -or) that is not a family, fan or hobby word, nor
    a capitalised name ("Londoner")."""
    if re.match(r"stay[- ]at[- ]home\b", v, _I):
        return True
    if v.split() and v.split()[-1][:1].isupper():
        return False
    words = v.lower().replace("-", " ").split()
    if not words or set(words) & _NOT_ROLES:
        return False
    last = words[-1]
    if last in _ROLES:
        return True
    return not known and len(last) > 4 and last.endswith(("er", "ist", "ian", "or")) and \
        last not in _NOT_ROLE_WORDS


_ORG_SUFFIX = re.compile(r"\b(?:inc|corp|corporation|llc|ltd|labs|group|health|bank|"
                         r"technologies|systems|capital|partners|studio|studios|agency|"
                         r"university|college|school|hospital|clinic|academy|institute|co)\b",
                         _I)


def org_like(v: str) -> bool:
    """An organisation's name: a proper noun, and not a place (the frames that need this
    follow verbs that also move people between cities: "moved over to KPMG")."""
    if not proper(v):
        return False
    words = v.split()
    return bool(_ORG_SUFFIX.search(v)) or (len(words) == 1 and words[0].isupper() and
                                           len(words[0]) > 2)
