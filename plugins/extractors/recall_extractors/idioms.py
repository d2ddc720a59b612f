"""Facts said in a fixed shape, read from the whole statement before its subject is: requests
("Call me Bob", "answer me in Spanish"), values with a shape of their own (an email address, a
phone number, a favourite), and idioms of a change ("Ghostty replaced iTerm for me", "Notion
is where I take notes", "Rex passed away", "Chiang Mai is home now", "new flat in Leeds").
"""

from __future__ import annotations

import re

from recall_core.kit.attributes import INVENTORY, TEAM, USER, canonical_attribute

from . import everyday, person_frames, tool_frames, typed_values
from . import values as V
from .cues import said_past
from .fact import Fact
from .keys import FAVORITE_TOOLS
from .lexicon import NATURAL_LANGUAGES, PERSONAL, attribute_for, category_of, purpose_attribute
from .subjects import ROLE_OF, attribute_named, find_subject, person_named

_I = re.IGNORECASE


# "We deploy on Fridays, is that a bad idea?": a statement with a question tagged on.
TAG_QUESTION = _TAG_QUESTION = re.compile(r",\s*(?:is|isn't|are|aren't|was|wasn't|does|doesn't|do|don't|right|"
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
    if (m := _PRONOUNS.search(text)) and re.search(r"\b(?:use|uses|pronouns|go by|goes by|"
                                                   r"refer to me)\b", text, _I):
        # whose: "Ana's pronouns are they/them" are Ana's, "my partner uses she/her" hers
        subject = find_subject(text)
        owner = subject.entity if subject.kind == "person" and subject.entity and \
            subject.surface.lower() not in ("", "i") else USER
        return Fact(owner, "pronouns", m["v"])
    if m := re.match(r"^(?:please\s+)?(?:you\s+(?:can|should|may)\s+)?(?:just\s+)?(?:call|address)\s+"
                     r"me\s+(?:as\s+)?(?P<v>.+)", text, _I):
        v = V.value(m["v"], V.NAME, 3)
        if v and person_frames.proper(v):
            return Fact(USER, "name", v)
    if m := re.match(r"^(?:please\s+)?(?:always\s+|only\s+)?(?:answer|reply|respond|write|talk)"
                     r"(?:\s+to me)?\s+in\s+(?P<v>[A-Z][a-z]+)\b", text):
        if category_of(m["v"]) is None:
            return Fact(USER, "answer_language", m["v"])
    return None


_COLON = re.compile(r"^(?i:my\s+|our\s+)?(?i:new\s+|current\s+)?(?P<noun>[A-Za-z][\w '-]{1,30}?)"
                    r"(?i:\s+(?:as of|starting|from|since)\s+[\w ]{1,20}?)?\s*:\s+(?P<v>\S.*)$")


# A household's service named bare ("House insurance is with Aviva", "mortgage is with
# Nationwide", "electric bill is with TXU"): the speaker's, as with "my".
_BARE_SERVICE = re.compile(r"^(?:the\s+)?(?!the\b|my\b|our\b)(?P<n>(?:[a-z-]+\s+){0,2}"
                           r"(?:insurance|mortgage|pension|broadband|electric|electricity|gas|"
                           r"energy)|(?:[a-z-]+\s+){1,2}(?:cover|bill|bills|account|contract|"
                           r"policy|supplier|provider))\s+(?:is|are)\s+(?:with|through)\s+"
                           r"(?=(?-i:[A-Z]))", _I)


def bare_service(text: str) -> str:
    """ "House insurance is with Aviva" is "my house insurance is with Aviva"."""
    if not _BARE_SERVICE.match(text):
        return text
    return re.sub(r"^the\s+", "my ", text, flags=_I) if text.lower().startswith("the ") else \
        f"my {text[0].lower()}{text[1:]}"


def colon_nominal(text: str) -> str:
    """ "New favorite movie: Past Lives" is "my favorite movie is Past Lives"."""
    m = _COLON.match(text)
    if m and (m["noun"].lower().startswith("favo") or attribute_named(m["noun"], m["v"])
              in INVENTORY):
        return f"my {m['noun']} is {m['v']}"
    return text


# "As a 28 year old I ...", "My son had his 7th birthday party", "Mom turned 59"
_AGE_SAID = re.compile(r"\bas an? (?P<n>\d{1,3})[- ]year[- ]old\b|\b(?:had|celebrated|is having|"
                       r"just had)\s+(?:his|her|my|their)\s+(?P<n2>\d{1,3})(?:st|nd|rd|th)\s+"
                       r"birthday\b", _I)
_WAKE = re.compile(r"\b(?:(?:wake|get|am|i'm|waking)\s+up|^up|sleep(?:ing)? in|up)\s+(?:at|by|"
                   r"around|until|till)\s+(?P<t>\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]\.?m\.?)?)", _I)
_HERE_IN = re.compile(r"\b(?:here in|out here in|living here in|back home in|"
                      # a request about where one lives: "a GP near us in Bristol", "coworking
                      # near my flat in Bristol", "our new flat in York"
                      r"near (?:me|us|home|(?:my|our) " + person_frames.DWELLING + r")\s+in|"
                      r"(?:my|our) new " + person_frames.DWELLING + r"\s+in)"
                      r"\s+(?P<v>[A-Z]\w+(?:\s[A-Z]\w+)?)")
# "Rex passed away", "RIP Nibbles the hamster": a pet of the speaker's that is gone.
_PASSED = re.compile(r"^(?:(?:our|my)\s+(?:old\s+)?(?:dog|cat|pup|puppy|kitten|bunny|rabbit|hamster|"
                     r"parrot|bird|horse|fish|guinea pig|tortoise|turtle)\s+)?"
                     r"(?P<v>(?-i:[A-Z][a-z]+))\s+(?:passed away|died|passed|was put down|"
                     r"crossed the rainbow bridge)\b|\bRIP\s+(?P<w>(?-i:[A-Z][a-z]+))\b", re.IGNORECASE)
# A dislike that ended: "mushrooms have grown on me", "cold coffee is growing on me", "I've
# come around on mushrooms", "I've warmed up to olives".
_GROWN_ON = re.compile(r"^(?P<v>[\w ]{2,30}?)\s+(?:have|has|is|are)\s+(?:grown|growing) on me\b|"
                       r"^(?:(?:weirdly|honestly|actually|finally|slowly)\s+)?(?:i've|i have|i)\s+"
                       r"(?:finally\s+|actually\s+|slowly\s+)?(?:come around on|come round on|"
                       r"come around to|come round to|warmed up to|warmed to)\s+"
                       r"(?P<w>[\w ]{2,30}?)\s*(?:[,.!;]|$)", _I)
_LANGUAGE_GONE = re.compile(r"^my\s+(?P<v>[A-Z][a-z]+)\s+is\s+(?:now\s+)?(?:mostly\s+|basically\s+|"
                            r"completely\s+|pretty much\s+|all but\s+)?(?:gone|long gone|rusty|"
                            r"lost)\b", _I)
# "IT made us switch to Firefox"
_MADE_SWITCH = re.compile(r"\b(?:(?:made|makes|forced|had)\s+(?P<who>me|us)\s+(?:to\s+)?(?:switch|"
                          r"move|change|migrate|go)|(?:switched|moved|migrated|put|pushed)\s+"
                          r"(?P<who2>me|us)(?:\s+all)?)\s+(?:over\s+)?(?:to|onto)\s+(?P<v>[^,;.!]+)",
                          _I)
# "the new owners made me head chef", "they promoted me to senior analyst": the speaker's
# new role, said by whoever gave it (a role word decides: "made me dinner" is none)
_MADE_ME = re.compile(r"\b(?:(?:made|make|promoted|appointed|named|bumped)\s+me|changed my (?:job\s+)?"
                      r"(?:title|role))\s+(?:up\s+)?(?:to\s+|as\s+)?(?:(?:a|an|the|our|their)\s+)?(?P<v>[a-z][\w -]{1,40}?)"
                      r"(?=[,.;!?]|\s+(?:and|but|so|last|this|yesterday|today|on|at|after|"
                      r"which|because)\b|$)", _I)
_WHERE_I_LIVE = re.compile(r"\b(?P<v>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?),?\s+where\s+(?:i|we)\s+"
                           r"(?:live|am based|are based)\b")
_IS_HOME = re.compile(r"^(?P<v>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)\s+(?:(?:already|finally|really|"
                      r"truly)\s+)?(?:is|feels like)\s+(?:my\s+|our\s+)?home"
                      r"(?:\s+now|\s+these days|\s+base|\s+already)?[.!]*$")
# "they put me on days from this week", "moved me to day shifts": the hours one works now
_SHIFTED_ME = re.compile(r"\b(?:put|moved|switched|changed|transferred)\s+me\s+(?:over\s+)?(?:on|onto|"
                         r"to)\s+(?:the\s+)?(?P<v>(?:day|night|early|late|morning|evening|"
                         r"afternoon|weekend|graveyard)s?(?:\s+shifts?)?)\b", _I)
# "My work machine runs Windows 11", "my laptop's on Fedora now": the OS one uses
_MY_MACHINE_RUNS = re.compile(r"^my\s+(?:(?:work|dev|personal|home|main|new|old|daily|current)\s+)?"
                              r"(?:machine|laptop|computer|desktop|pc|workstation|box|rig|mac)"
                              r"(?:'s|\s+is)?\s+(?:now\s+)?(?:runs|is running|running|runs on|"
                              r"on)\s+(?P<v>[^,;!?]+)", _I)
# "The company moved the office to Canary Wharf", "we moved into a new office in Dumbo",
# "first day in the new office in the Pearl District": where the team works now
_OFFICE_MOVED = re.compile(r"\b(?:(?:moved|relocated|moving)\s+(?:the|our)\s+(?:whole\s+)?office\s+"
                           r"(?:to|into)|(?:in|into|to)\s+(?:a|our|the)\s+new\s+office\s+(?:in|at))"
                           r"\s+(?:the\s+)?(?P<v>[^,;.!?]+)", _I)
# "First week at Mercy General is done", "it's my first day at PwC": where one now works
# (or, when the name says school, studies)
_FIRST_AT = re.compile(r"^(?:(?:it's|it is|this is)\s+)?(?:my\s+|(?P<who>(?-i:[A-Z][a-z]+))'s\s+)?"
                       r"first\s+(?:day|week|month|shift)\s+at\s+"
                       r"(?P<v>(?-i:[A-Z][\w&'.-]*)(?:\s(?-i:[A-Z][\w&'.-]*)){0,3})", _I)

# "First week as a data analyst went fine", "my first shift as a senior carer": what one is
# now
_FIRST_AS = re.compile(r"^(?:(?:it's|it is|this is)\s+)?(?:my\s+|(?P<who>(?-i:[A-Z][a-z]+))'s\s+)?"
                       r"first\s+(?:day|week|month|shift|job)\s+as\s+(?:a|an)\s+"
                       r"(?P<v>[\w -]{2,40}?)(?=\s*(?:$|[,.!;?:]|\s(?:went|was|is|and|at|in|"
                       r"done|over|today|tomorrow|starts|on)\b))", _I)

# "zsh user here", "I'm an Emacs person"
_TOOL_USER = re.compile(r"(?:^|\b(?:am|is|are) an?\s+)(?P<v>[\w.+#-]+(?:\s[\w.+#-]+)?)\s+(?:user|"
                        r"person|guy|girl|fan|convert|fanboy|fangirl|loyalist|devotee|diehard|"
                        r"die-hard|nerd|man|woman)\b", _I)
# "Obsidian holds all my notes"
_HOLDS_MY = re.compile(r"^(?P<v>[A-Z][\w.+#-]*(?:\s[A-Z][\w.+#-]*)?)\s+(?:holds|has|stores|keeps|"
                       r"manages|is where i keep)\s+(?:all\s+)?(?:of\s+)?my\s+(?P<what>notes|"
                       r"passwords)\b", _I)
# "I changed my major, it's architecture now"
_CHANGED_MY = re.compile(r"\b(?:changed|switched|updated|moved|swapped)\s+my\s+(?P<noun>[\w ]{2,20}?)"
                         r",?\s+(?:and\s+)?(?:now\s+)?(?:it's|it is|it is now|now it's)\s+"
                         r"(?:now\s+)?(?P<v>[^,;.!]+)", _I)
# (someone else's new flat is theirs: "we visited my sister at her new flat in Vancouver")
_NEW_HOME = re.compile(r"(?<!\bher )(?<!\bhis )(?<!\btheir )(?<!'s )"
                       r"\b(?:new|our|my)\s+(?:own\s+|new\s+)?(?:flat|apartment|place|house|home|"
                       r"condo|room|studio)\s+in\s+(?P<v>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)|"
                       # a home taken: "we closed on a house in Round Rock", "rent an apartment
                       # in Austin", "got the keys to a flat in Leith" (not "looking at", a plan)
                       r"^(?i:(?:i|we)(?:'ve|'re| have| are)?\s+)?(?i:(?:just|finally|officially)\s+)?"
                       r"(?i:closed on|bought|rent|rented|are renting|am renting|signed a lease on|"
                       r"signed a lease for|moved into|got the keys to)\s+"
                       r"(?i:a|an|our|my|the)\s+(?i:(?:new|first|own|little|tiny|small|big|"
                       r"two-bed|one-bed)\s+)*(?i:flat|apartment|apt|place|house|home|condo|"
                       r"studio|townhouse|bungalow|cottage)\s+(?i:in)\s+"
                       r"(?P<w>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)?)")
# "the new job at Stripe is intense", "Priya's new role at Figma": a new job's employer,
# wherever in the sentence it is named (as "new flat in Leeds" names where one lives)
_NEW_JOB = re.compile(r"\b(?P<who>(?i:my|the)|[A-Z][a-z]+'s)\s+new\s+(?i:job|role|position|gig|"
                      r"post)\s+(?i:at|with)\s+(?P<v>[A-Z][\w&.'-]*(?:\s[A-Z][\w&.'-]*){0,2})")
_MANAGES_US = re.compile(r"^(?P<v>[A-Z][a-z]+)\s+is\s+(?:now\s+)?(?:managing|leading|running|"
                         r"heading)\s+(?:our|my|the)\s+team\b")
# A relation named with its person, in passing: "my new manager Tom", "my wife Ana".
# "a new GP, Dr. Singh", "our new landlord, Ms. Ortiz": with "new" the owner is said by the
# verb ("I've registered with", "we have").
_MY_NEW = re.compile(r"(?:\b(?i:my\s+(?:new\s+)?|(?:a|our)\s+new\s+)|^(?i:new)\s+)(?P<noun>(?i:" +
                     "|".join(ROLE_OF) + r"))\s*,?\s+(?P<v>(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?"
                     r"[A-Z][a-z]+)\b(?!\s*(?:'s|and|&|or)\b)")
def named_relation_rest(text: str) -> tuple[str, str, str] | None:
    """(name, predicate, the relation said alone) of a statement opening with a relation
    named ("my husband Raj is an accountant", "My wife Claire takes the train"): what is said
    of the person named, beside the relation the name gives ("My husband is Raj": its own
    memory's text, so a later change of Raj's employer leaves no text naming the old one)."""
    m = _MY_NEW.match(text)
    if not m or not person_frames.proper(m["v"]):
        return None
    # ("my wife Elena, a pediatrician, works at Kaiser": past the apposition)
    rest = re.sub(r"^,\s*(?:a|an|the)\s+[\w -]{1,30}?,\s*", "", text[m.end():].strip())
    said = f"{m.group(0)[: m.start('v') - m.start()].strip().rstrip(',')} is {m['v']}."
    return (m["v"], rest, said[:1].upper() + said[1:]) \
        if len(rest.split()) >= 2 and rest[:1].islower() else None


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
_FAVORITE = re.compile(r"\bfav(?:ou?rite|e)?\s+(?P<noun>[a-z][\w -]{1,30}?)\s*(?:is|:|,|=|-|now is|"
                       r"these days is|has to be|would be|right now is)\s+(?P<v>[^,;.!?]+)", _I)


# "Fleetwood Mac is my favorite band, full stop": the favourite was named before it
# (`triples._reverse` reads it), what follows the comma is no value
_NAMED_BEFORE = re.compile(r"\b(?:is|are|'s)\s+(?:(?:my|our|his|her|their)\s+|[A-Z]\w+'s\s+)"
                           r"(?:(?:new|current|all[- ]time|absolute)\s+)?$", _I)


_REPLACED_BY = re.compile(r"^(?P<new>[\w .+#-]{2,30}?)\s+(?:has\s+)?(?:replaced|took over from|"
                          r"is replacing|beat out|won over)\s+(?P<old>[\w .+#-]{2,30}?)"
                          r"(?:\s+for\s+(?P<who>me|us|the team))?(?:\s+now)?"
                          # "grafana cloud replaced datadog last month"
                          r"(?:\s+(?:(?:last|this)\s+(?:week|month|year|quarter|sprint)|"
                          r"yesterday|today|\w+\s+(?:days?|weeks?|months?)\s+ago))?$", _I)
_WHERE_I = re.compile(r"^(?P<v>[\w .+#-]{2,30}?)\s+is\s+(?:now\s+)?(?:where|what|how)\s+"
                      r"(?P<who>i|we)\s+(?P<rest>.+?)(?:\s+now)?$", _I)


def replaced_by(text: str, speaker: str | None) -> Fact | None:
    """ "Ghostty replaced iTerm for me"; "Notion is where I take notes"; "uv is what we use
    now": a named tool in the subject's place."""
    me = speaker.lower() if speaker else USER
    if fact := everyday.the_one(text, speaker):
        return fact
    if m := _REPLACED_BY.match(text):
        new, old = m["new"].strip(), m["old"].strip()
        category = category_of(new) or category_of(old)
        if category and person_frames.proper(new) or category_of(new):
            # a team's kind of tool ("Grafana replaced Datadog") is the team's
            team = (m["who"] or "").lower() in ("us", "the team") or (
                not m["who"] and category_of(new) is not None and category_of(new) not in PERSONAL)
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


_ANSWERS = re.compile(r"\b(?P<v>[A-Z][a-z]+)\b(?=[^.?!]{0,40}\b(?i:answers?|repl(?:y|ies)|"
                      r"responses?)\b)|\b(?i:answers?|repl(?:y|ies)|responses?|respond|"
                      r"answer me|reply to me|talk to me|write to me)\b[^.?!]{0,20}?\bin\s+"
                      r"(?P<w>[A-Z][a-z]+)\b")


_HARD_TO_READ = re.compile(r"\b(?:reading|read|slow|hard|difficult|struggle|struggling|tiring|"
                           r"exhausting|too long)\b", _I)


def answer_language(text: str) -> str | None:
    """ "Answer me in Spanish", "Can you switch to Portuguese for your answers?", "English is
    fine for answers": the language the user wants answers in."""
    if re.search(r"\b(?:not|don't|do not|never|no longer)\b", text, _I):
        return None
    for m in _ANSWERS.finditer(text):
        if m["v"] and _HARD_TO_READ.search(text):
            continue  # "reading long English answers is slow for me" asks for another one
        v = m["v"] or m["w"]
        if v and v.lower() in NATURAL_LANGUAGES:
            return v
    return None


# Someone's home named with its town ("Priya's flat in Hyderabad", "a gift for my mom's condo
# in Tucson", "Daniel at his new place in Glasgow", "Jo finally got her place in Aberdeen"):
# where they live. Only a home of their own, said right after them: not a holiday flat, not a
# studio or unit (often where one works), not "my parents' place".
_THEIR_HOME = r"(?:new\s+|own\s+)?(?!studio\b|unit\b)" + person_frames.DWELLING
_HOME_OF = re.compile(r"(?:\b(?P<a>(?i:my|our)\s+[a-z]+|[A-Z][a-z]+)'s\s+" + _THEIR_HOME +
                      r"|\b(?P<b>[A-Z][a-z]+)\s+at\s+(?:his|her|their)\s+" + _THEIR_HOME +
                      r"|\b(?P<c>(?i:my|our)\s+[a-z]+|[A-Z][a-z]+)\s+(?:finally\s+)?got\s+"
                      r"(?:his|her|their)\s+" + _THEIR_HOME + r")"
                      r"\s+in\s+(?P<v>[A-Z]\w+(?:[\s-][A-Z]\w+)?)")


def here_in(text: str, speaker: str | None) -> Fact | None:
    """Where the speaker, or someone named, lives, said in passing ("back home in Leeds",
    "any playgrounds near us in Boise?", "Marta's flat in Valencia"): read in a question
    too, which says it as given."""
    if said_past(text):
        return None
    if (m := _HERE_IN.search(text)) and person_frames.place(m["v"]):
        return Fact(speaker.lower() if speaker else USER, "location", m["v"])
    if (m := _HOME_OF.search(text)) and person_frames.place(m["v"]):
        who = person_named(m["a"] or m["b"] or m["c"])
        if who and who != USER:
            return Fact(who, "location", m["v"])
    return None


def patterned(text: str, speaker: str | None, last_person: str | None) -> list[Fact]:
    """Facts whose value has a shape of its own: an email address, a phone number, a
    favourite ("my favorite band is X", "found a new favorite coffee place, Sey")."""
    # ("closed on a house" is buying one)
    if re.search(r"\b(?:not|no longer|old|previous|former|closing|closed(?! on)|stopped)\b", text,
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
        return [Fact(owner, "dislikes", m["v"] or m["w"], ended=True)]
    if (m := _LANGUAGE_GONE.match(text) or _FORGOT.search(text)) and \
            m["v"].lower() in NATURAL_LANGUAGES:
        return [Fact(speaker.lower() if speaker else USER, "languages_spoken", m["v"],
                     ended=True)]
    if (m := _MADE_SWITCH.search(text)) and (tool := V.value(m["v"], V.TOOL, 4)) and \
            (category := category_of(tool)):
        me = speaker.lower() if speaker else USER
        who = me if category in PERSONAL or (m["who"] or m["who2"]).lower() == "me" else TEAM
        return [Fact(who, attribute_for(tool, person=who != TEAM), tool)]
    if (m := _WHERE_I_LIVE.search(text) or _IS_HOME.match(text)) and person_frames.place(m["v"]):
        return [Fact(speaker.lower() if speaker else USER, "location", m["v"])]
    if (m := _TOOL_USER.search(text)) and category_of(m["v"]) in PERSONAL:
        return [Fact(owner, category_of(m["v"]) or "uses", m["v"])]
    if (m := _HOLDS_MY.match(text)) and (attr := purpose_attribute(m["what"])) and \
            (category_of(m["v"]) in (attr, None)) and attr in PERSONAL:
        return [Fact(speaker.lower() if speaker else USER, attr, m["v"])]
    if (m := _CHANGED_MY.search(text)) and (attr := attribute_named(m["noun"], m["v"])) in \
            INVENTORY and (v := V.value(m["v"], V.THING, 4)):
        return [Fact(owner, attr, v)]
    if m := _NEW_HOME.search(text):
        # "We rented a flat in Leeds for a couple of years before the kids came along": a
        # home that was
        if person_frames.place(m["v"] or m["w"]) and not said_past(subject.rest):
            return [Fact(speaker.lower() if speaker else USER, "location", m["v"] or m["w"])]
    if (m := _NEW_JOB.search(text)) and person_frames.proper(m["v"]):
        who = m["who"].lower()
        return [Fact(who[:-2] if who.endswith("'s") else owner, "employer", m["v"])]
    if m := _SHIFTED_ME.search(text):
        return [Fact(speaker.lower() if speaker else USER, "work_hours", m["v"].lower())]
    if (m := _OFFICE_MOVED.search(text)) and (v := V.value(m["v"], V.PLACE, 4)) and \
            person_frames.place(v):
        return [Fact(TEAM, "location", v)]
    # (not a machine kept for one use: "my laptop runs Windows for gaming")
    if (m := _MY_MACHINE_RUNS.match(text)) and (v := V.value(m["v"], V.TOOL, 4)) and \
            category_of(v) == "os" and not re.search(r"\bfor\s+(?!now\b|work\b)\w", m["v"], _I):
        return [Fact(speaker.lower() if speaker else USER, "os", v)]
    if (m := _FIRST_AT.match(text)) and person_frames.proper(v := m["v"].strip()):
        who = m["who"].lower() if m["who"] else speaker.lower() if speaker else USER
        return [Fact(who, "school" if person_frames.SCHOOLISH.search(v) else "employer", v)]
    if (m := _FIRST_AS.match(text)) and person_frames.role(v := m["v"].strip()):
        who = m["who"].lower() if m["who"] else speaker.lower() if speaker else USER
        return [Fact(who, "occupation", v)]
    if (m := _MADE_ME.search(text)) and person_frames.role(m["v"], known=True):  # not "dinner"
        return [Fact(speaker.lower() if speaker else USER, "occupation", m["v"])]
    if (m := _MY_NEW.search(text)) and person_frames.proper(m["v"]):
        return [Fact(speaker.lower() if speaker else USER, ROLE_OF[m["noun"].lower()],
                     m["v"])]
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
    if fact := everyday.commute_or_given(text, speaker):
        return [fact]
    if said_past(subject.rest):
        return []
    if (m := _WAKE.search(text)) and subject.kind in ("person", "none"):
        return [Fact(owner, "wake_time", m["t"].strip())]
    if fact := here_in(text, speaker):
        return [fact]
    if m := _EMAIL_RE.search(text):
        return [Fact(owner, "email", m[0])]
    if _PHONE_CUE.search(text) and (phone := typed_values.value_for("phone_number", text,
                                                                    True)):
        if sum(c.isdigit() for c in phone[0]) >= 7:
            return [Fact(owner, "phone_number", phone[0])]
    if (m := _FAVORITE.search(text)) and not _NAMED_BEFORE.search(text[:m.start()]):
        v = V.value(m["v"], V.COMMON, 6)
        noun = re.sub(r"^(?:new|current|all-time|all time)\s+", "", m["noun"].strip(), flags=_I)
        if v and not re.match(r"^(?:is|was|to|a|the)$", v, _I):
            attr = canonical_attribute("favorite " + noun)
            if canonical_attribute(attr[9:]) in FAVORITE_TOOLS:
                attr = canonical_attribute(attr[9:])  # "my favourite editor is vim": the editor
            return [Fact(owner, attr, v)]
    return []
