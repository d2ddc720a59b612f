"""What the words around a predicate say about its fact: a plan, a hedge, the past, a
negation, an ending, "also".

* Questions, wishes and plans ("I might move to Berlin", "I'm thinking of joining Globex")
  state no fact: a wrong supersession loses a true memory.
* A negation or an ending ("I don't use Docker anymore", "I stopped playing tennis", "I'm no
  longer allergic to peanuts", "I used to have a cat") ends that value of a many-valued fact;
  `read_cues` restates what ended as the predicate that would state it ("use Docker").
* The past ("We were on Oracle until 2019") is history, not the current value; a passive of
  what is still true ("I was born in Lagos", "it was migrated to Postgres") is not past.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import many_frames, person_frames, tool_frames
from . import values as V
from .change_words import DISCARDED
from .lexicon import NATURAL_LANGUAGES, category_of
from .subjects import PETS

_I = re.IGNORECASE


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
    #: said of one day or one stretch ("today", "this week"): what one did then is no
    #: routine
    once: bool = False


_HYPOTHETICAL = re.compile(
    r"^(?:might|may|could|would(?! rather)|should|want to|wanna|hope to|wish|need to|"
    r"have to|am thinking (?:about|of)|was thinking (?:about|of)|am considering|consider|"
    r"considered|am trying to|try to|would like to|would love to|am hoping to|dream of|"
    r"can not wait to|am looking (?:for|at|into)|am interviewing|applied|am applying|"
    # "got an interview at Stripe", "have a final round interview with Cloudflare": no job yet
    r"(?:(?:have|has|had)\s+)?(?:have|has|had|got|gotten|landed|scored|am having)\s+(?:a|an|my|the|"
    r"another)\s+(?:[\w-]+\s+){0,3}?interviews?\b|"
    r"almost|nearly|never|if)\b", _I)
_FUTURE = re.compile(r"^(?:will|am going to|are going to|is going to|am about to|plan to|"
                     r"am planning to|are planning to|intend to|am (?:moving|starting|"
                     r"joining|relocating) (?:to |at )?\w+ (?:next|in|on|soon))\b", _I)
# An adverb of certainty may come between the verb and its "not" ("we're definitely not
# moving to Bitbucket", "I'm honestly never going back to Windows").
_NEGATION = re.compile(r"^(?:(?P<aux>do|does|did|am|is|are|was|were|have|has|had|will|would|"
                       r"can|could)\s+)?(?:(?:definitely|certainly|absolutely|probably|"
                       r"honestly|seriously|just|still|so|totally|really)\s+)?"
                       r"(?:not|no longer|never)\s+(?:really\s+|even\s+|"
                       r"actually\s+|currently\s+)?", _I)
_STOPPED = re.compile(r"^(?:have\s+|has\s+|just\s+|finally\s+|recently\s+)*"
                      r"(?P<verb>cut out|cut|stopped|"
                      r"quit|" + DISCARDED + r"|"
                      r"gave away|rehomed|re-homed|sold|am done with|broke up with|"
                      r"deleted|cut out|cancelled|canceled|uninstalled|removed|"
                      r"unsubscribed from|no more|grew out of|outgrew|gave)\s+", _I)
_USED_TO = re.compile(r"^(?:used to|was|were|had)\s+", _I)
_PAST = re.compile(r"^(?:was|were|had|had been|did|used to|used(?! to)|tried|"
                   # a state in the past tense ("I lived in Paris", "Last year I worked at
                   # Google"), not an event that starts one ("I moved to")
                   r"lived|worked|resided|owned|studied|drove|dated|taught)\b|\b(?:until "
                   r"(?:19|20)\d\d|back (?:then|when|in (?:19|20)\d\d|(?:in|at) (?:my\s+)?"
                   r"(?:[\w-]+\s+)?(?:college|school|university|uni|the day|days|twenties|"
                   r"thirties|student days))|"
                   r"previously|formerly|in the past|"
                   r"years ago|when i was|at the time|in my last job|before that|once upon|"
                   r"in college|in high school|as a kid|growing up)\b", _I)
# A state in the simple past bounded by a stretch of time is over ("We rented a flat in Leeds
# for a couple of years before the kids came along"); the present perfect is not ("have lived
# in Leeds for years"), nor an event that starts a state ("moved to Berlin for two years").
_BOUNDED_PAST = re.compile(r"^(?!(?:moved|relocated|started|joined|switched|signed|transferred|"
                           r"changed|settled)\b)[a-z]+ed\b.*\bfor\s+(?:(?:a\s+couple\s+of|a\s+few|"
                           r"several|many|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+)?"
                           r"(?:years|months)\b", _I)
# Passives said in the past tense of what is still true ("I was born in Lagos").
_STILL_TRUE = re.compile(r"^(?:was|were)\s+(?:just\s+|recently\s+|finally\s+)?(?:born|raised|"
                         r"promoted|hired|transferred|diagnosed|named|adopted|moved|migrated|"
                         r"switched|changed|upgraded|replaced|rewritten|ported|converted|"
                         r"pushed|bumped|shifted|merged|put)\b", _I)
# What one was doing a moment ago is no history ("was triaging the backlog in Asana this
# morning" ended the tool Asana).
_JUST_NOW = re.compile(r"^(?:was|were)\s+\w+ing\b.*\b(?:this morning|this afternoon|this "
                       r"evening|today|tonight|earlier today|just now|last night|yesterday)\b",
                       _I)
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


# Said anywhere in a statement, these make it a passing state or a topic, not the standing
# fact ("I'm in Lisbon on holiday", "I borrowed ...", "we briefly tried MySQL", "a blog post
# about switching to Neovim", "we looked at Cassandra", "evaluating MySQL"): treated as a
# hedge, so nothing is read (a missed fact is cheaper than a value that replaces a true one).
_PASSING = re.compile(r"\b(?:on (?:a |my |our )?(?:holiday|vacation|trip|business trip|"
                      r"honeymoon|layover|test drive)|borrowed|borrowing|loaner|briefly|"
                      r"temporarily|test(?:ing|ed)? (?:out )?(?:a|an|the)\b|"
                      r"(?:trying|tried|try) out|about \w+ing|looked at|looking at|"
                      r"evaluat(?:e|ed|es|ing)|pilot(?:ed|ing)|trial(?:l?ed|l?ing)|"
                      r"researching|demoing|proof of concept|free trial|"
                      r"trial (?:of|run|period|version)|just to (?:see|try|poke|play|test|check)|"
                      r"in a (?:vm|virtual machine|sandbox|container)|"
                      # a stay or a stand-in ("in Lisbon for a conference until friday", "on
                      # my brother's laptop this weekend since mine is in for repair")
                      r"for (?:a|the) (?:conference|wedding|funeral|week|weekend|few days|day|"
                      r"night|couple (?:of )?(?:days|weeks)|summit|workshop|meetup|offsite)|"
                      r"until (?:mon|tues|wednes|thurs|fri|satur|sun)day|in for repair|"
                      r"in the shop|(?:my|his|her|a) (?:\w+'s )?loaner)\b", _I)


# A time that bounds what is said to one day or one stretch ("took an uber to work today",
# "biking in this week"): a routine (a commute, a wake time) said
# so is an exception to it, not its new value. A change said so ("I moved to Berlin today")
# is still a change, so only routines heed it (`ROUTINES`).
_ONCE = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening|week|weekend)|"
                   r"yesterday|last night|for the (?:day|week|weekend))\b", _I)
#: attributes that are habits: said of one day or stretch, they are exceptions to the habit
ROUTINES = frozenset({"commute", "wake_time", "bedtime", "gym_schedule", "work_hours"})


# Said anywhere in a statement read piece by piece (or for a value said without a frame),
# these make every piece a thought, a question or a condition, not a fact.
UNSURE = re.compile(r"\?|\b(?:if|unless|whether|might|maybe|perhaps|thinking|considering|"
                    r"wondering|not sure|tempted|debating|planning|plan to|want to|wants to|"
                    r"hoping|hope|would|could|should|someday|eventually|suppose|guess)\b", _I)


def said_past(predicate: str) -> bool:
    """The predicate (after its subject) tells of a state that is over: history, not the
    current value."""
    return bool(_PAST.search(predicate) or _BOUNDED_PAST.match(predicate)) \
        and not _STILL_TRUE.match(predicate)


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
    # "Sold the Mazda": a name sold is a thing (a car), not a pet; "sold the puppy" is one.
    if _PETLIKE.match(verb) and (person_frames.proper(first) and verb != "sold"
                                 or first.lower() in PETS):
        if verb == "gave" and not re.search(r"\b(?:to|away)\b", body, _I):
            return None
        return f"have a pet named {first}" if person_frames.proper(first) else f"have a {first}"
    if first.lower() in many_frames.HOBBY_WORDS:
        return f"play {first}"  # "gave up squash", "sold my guitar": the hobby
    if verb in ("gave", "sold", "rehomed", "re-homed", "gave away"):
        return None  # "I sold the old car": a one-at-a-time thing, only ever replaced
    if first.lower() in NATURAL_LANGUAGES:
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
    cues = Cues(additive=bool(_ADDITIVE.search(rest)), change=bool(_CHANGE.search(rest)),
                once=bool(_ONCE.search(rest)))
    if _HEDGE.search(rest) or _PASSING.search(rest):
        cues.hedged = True
    body = re.sub(r"^(?:really|just|also|now|still|actually|honestly|definitely|totally|"
                  r"currently|recently|finally|officially)\s+", "", rest, flags=_I)
    # ... and after a copula: "I'm officially a UX researcher" says "I'm a UX researcher".
    body = re.sub(r"^(?P<be>am|is|are)\s+(?:now\s+|officially\s+|finally\s+|currently\s+|"
                  r"actually\s+|technically\s+)+(?!(?:a|an|the)\s*$)", r"\g<be> ", body, flags=_I)
    if _HYPOTHETICAL.match(body) or re.match(r"^(?:am|are|is)\s+(?:thinking|considering|"
                                             r"planning|hoping)\b", body, _I):
        cues.future = True
        return body, cues
    if _FUTURE.match(body):
        cues.future = True
    if tool_frames.REPLACE.match(body):
        return body, cues  # "We dropped Datadog for Grafana": a replacement, read whole
    if m := _STOPPED.match(body):
        if ended := _ended_object(m["verb"].lower(), body[m.end():]):
            cues.ended = True
            cues.additive = cues.additive or ended.endswith(" too")
            return ended, cues
        if m["verb"].lower() in ("gave", "gave away", "sold"):
            # "I gave my old Pixel to my brother": what ended is no value of a fact of its
            # own kind to read; the stored one's end is `single_endings`' to say
            cues.hedged = True
            return body, cues
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
    if said_past(body) and not _JUST_NOW.match(body):
        cues.past = True  # "We were on Oracle until 2019": history, not the current value
    if m := _USED_TO.match(body):
        if m[0].lower().startswith("used to") or re.match(r"^(?:was|were)\s+allergic", body,
                                                             _I):
            cues.past = cues.ended = True
            rest_ = body[m.end():]
            return ("am " + rest_ if rest_.lower().startswith("allergic") else rest_), cues
    return body, cues
