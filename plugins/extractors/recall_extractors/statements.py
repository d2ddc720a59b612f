"""Statements, not sentences: a sentence split into the clauses that each say one thing.

"I prefer dark mode in every editor and I like my coffee black." makes two statements, each
its own memory with its own fact, so a later "I switched to light mode" can supersede the
first without touching the second. A sentence is cut at ";" (between clauses of two words or more) and before "and" / "but" /
"while" / "whereas" / a comma when what follows is a clause of its own:

* it opens with a subject ("I", "we", "my sister", "our CI", "he", a person's name, "the
  billing service"): "I live in Berlin and I prefer tea";
* or, after and/but/";", with a verb whose subject was left out ("I live in Berlin and work
  at Globex"): the clause gets the subject back ("I work at Globex"), and so does a verb
  the list does not know that goes on a list of verb phrases ("..., tracks issues in Linear
  and chats on Discord");
* or, after a comma or "while", with a verb of "-ing" ("I work at Dell, mostly doing sales
  engineering"): the aside gets its subject and "be" back ("I'm mostly doing ...").

Never cut: before "it", "that", "which", "so", "there" (they lean on what came before:
"I went to the group and it was powerful"), inside a list ("I like Python, Go and Rust" is
one statement whose values `values.items` splits), or after a bare subject ("My wife and I
live in Boston").
"""

from __future__ import annotations

import re

from .subjects import REASON_OPENERS, THINGS, attribute_of_noun, find_subject

_I = re.IGNORECASE

_CUT = re.compile(r"\s*;\s*|\s+[-\u2013\u2014]\s+|,?\s+(?P<conj>and|but|while|whereas|plus|"
                  r"although|though|so|because|since)\s+|,\s+", _I)
_OPENERS = (r"(?i:(?:actually|also|now|then|so|plus|these days|currently|btw|honestly|"
            r"recently|lately|nowadays|since then|as of now|and|for now|right now|today|"
            r"at the moment|at this point|still|just|finally|already)\s+|(?:actually|also|btw|"
            r"for now|right now),\s+)*")
_SUBJECT = re.compile(
    r"^" + _OPENERS + r"(?i:i|i'm|i've|i'd|i'll|we|we're|we've|we'll|my|our|he|she|he's|"
    r"she's|they|they're|(?:his|her|their) [a-z]+)\b(?!/)|^[\w .+#-]{1,25}? is (?:what|where|how) "
    r"(?i:i|we)\b|^" + _OPENERS + r"(?:[A-Z][a-z]+|(?i:the) [a-z]+(?: [a-z]+)?|"
    # a name of two capitalised words or an acronym ("VS Code is my editor", "AWS is ...")
    r"[A-Z][\w.+#-]*\s[A-Z][\w.+#-]*|[A-Z]{2,}[\w.+#-]*)"
    r"(?:'s [a-z]+)?\s+(?:is|are|was|has|had|works|lives|moved|uses|runs|just|also|now|got|"
    r"joined|started|loves|likes|hates|speaks|drives|plays|switched|became|left|recently|"
    r"kept|keeps|\w+ed)\b|"
    # a noun that names what it is about: "standups are at 9:15", "work starts at 9"
    r"^(?i:[a-z][\w-]*(?:\s[a-z][\w-]*)?\s+(?:starts?|begins?|ends?|are|runs?|happens?|"
    r"goes|go)\b)|^(?i:(?:everything|everyone|everybody)(?:'s|\s+is|\s+[a-z]{2,}(?<!s)s)\b)|"
    # a thing of one's own said bare ("..., laptop's a Framework 13, browser is Brave")
    r"^(?!(?i:it|that|this|there|here|what|who|he|she|which|one|mine|ours)\b)"
    r"(?i:[a-z][\w-]*)(?:'s|\s+is)\s+(?:(?i:a|an)\s+)?[A-Z0-9]|"
    # a circumstance, then the speaker ("..., for general stuff I see Dr. Kaur")
    r"^(?i:for|in|at|on|with)\s+[\w ]{1,25}?\s+(?i:i|we)\s+(?i:see|use|go|have|get|do)\b")
# A request opens a statement of its own ("..., and please answer in German").
_COMMAND = re.compile(r"^(?:please|call me|keep|answer|reply|respond|don't|do not|always|"
                      r"never|remember|make sure|note that|address me)\b", _I)
_ELIDED = re.compile(
    r"^" + _OPENERS + r"(?:work|works|live|lives|use|uses|love|loves|like|likes|hate|hates|"
    r"have|has|speak|speaks|drive|drives|play|plays|prefer|prefers|moved|switched|started|"
    r"joined|am|is|got|enjoy|enjoys|own|owns|code|run|runs|went|became|study|studies|teach|"
    r"quit|stopped|dropped|no longer|can't stand|"
    r"don't|do not|am not|never|relocated|migrated|adopted|bought|speak|deploy|deploys|ship|"
    r"ships|release|releases|standup|stand up|sprint|hit|browse|track|tracks|host|hosts|"
    r"keep|keeps|take|takes|wake|get up|go to bed|sleep|commute|bike|walk|write|writes|"
    r"allergic|coach|volunteer|knit|paint|picked|installed|said|wiped|signed|took)\b",
    _I)
# More verbs a clause may open with when its subject was said once ("I drive a Mazda and ride
# my bike on weekends"), with an object after them: verbs that rarely start a noun phrase of a
# list ("I have a phone, watch and laptop" stays one statement: no object follows "watch").
_ELIDED_MORE = re.compile(
    r"^" + _OPENERS + r"(?:ride|rides|cook|cooks|watch|watches|listen|listens|visit|visits|"
    r"monitor|monitors|manage|manages|lead|leads|build|builds|maintain|maintains|handle|"
    r"handles|type|types|wear|wears|eat|eats|drink|drinks|need|needs|want|wants|practi[cs]e|"
    r"practi[cs]es|spend|spends|try|tries|make|makes|meet|meets|review|reviews|mentor|"
    r"mentors|tutor|tutors|attend|attends|help|helps|look after|looks after|follow|follows|"
    r"avoid|avoids|skip|skips|sell|sells|buy|buys|rent|rents|pay|pays|collect|collects|grow|"
    r"grows|raise|raises|brew|brews|read|reads|do|does)\s+(?!(?:and|or|but|too)\b)[\w'@#$]",
    _I)


def _elided(clause: str) -> bool:
    """Whether `clause` opens with a verb whose subject was left out."""
    return bool(_ELIDED.match(clause) or _ELIDED_MORE.match(clause))


# "We use Postgres for storage, Redis for caching": the verb said once for the whole list.
_GAPPED_HEAD = re.compile(r"^(?P<head>.*?\b(?i:use|uses|using|run|runs|keep|keeps|track|tracks|"
                          r"host|hosts|rely on|relies on|moved|migrated|switched))\s+\S.*\s"
                          r"(?i:for|to|at|on)\s+\S")
_GAPPED = re.compile(r"^(?:(?:our|the|my)\s+)?[\w.+#-]+(?:\s[\w.+#-]+){0,2}\s+(?i:for|to|at|on)\s+"
                     r"[\w-]+(?:\s[\w-]+)?[.!]?$")
_LEANS = re.compile(r"^(?:it|it's|its|that|that's|this|these|those|which|who|so|there|"
                    r"there's|then|too|as well|not|or|(?:is|are|was|isn't|aren't)\s+(?:that|"
                    r"it|this|there)|right\?)\b", _I)
# Openers that say nothing on their own ("Scratch that, we're using SQLite"): never a
# statement of their own.
_MARKER = re.compile(r"^(?:scratch that|wait|ok|okay|so|well|actually|anyway|oh|hmm|right|"
                     r"also|btw|fyi|update|correction|good news|bad news|big news|news|lol|"
                     r"haha|yeah|yes|no|sure|ok so|never mind|nvm|sorry|oops)[.!:]*$", _I)
_BARE_SUBJECT = re.compile(r"^(?:(?:my|our|the)\s+)?[\w-]+$|^[A-Z][a-z]+$", _I)


# A reason or a time said first, then what holds ("since I became engineering lead in january
# I barely write specs", "ever since the baby arrived I'm up at 5"): both are said, each its
# own statement. Not "when", "once", "if", "after": with a present tense they are plans.
# The second may open with "my"/"our" ("ever since we went over to Google Fiber my zoom calls
# have been flawless"), but not with "the": "the" opens many an object inside the first.
_LEADING = re.compile(r"^(?:" + REASON_OPENERS + r")\s+(?P<a>.+?)\s*,?\s+"
                      r"(?P<b>(?:i|i'm|i've|we|we're|we've|my|our)\s.+)$", _I)


# "... while we're in California": where one is while something else happens, a stay.
_STAY = re.compile(r"^(?:i'm|i am|we're|we are|i was|we were|he's|she's|they're)\s+(?:in|at|"
                   r"visiting|staying|away|on)\b", _I)


def split_statements(sentence: str, speaker: str | None = None) -> list[str]:
    """The statements of one sentence, in order; the sentence itself when it makes one."""
    if (m := _LEADING.match(sentence)) and len(m["a"].split()) > 1:
        return [*split_statements(m["a"], speaker), *split_statements(m["b"], speaker)]
    out: list[str] = []
    start, prefix, subject = 0, "", None
    gapped = _GAPPED_HEAD.match(_until_cut(sentence))
    for m in _CUT.finditer(sentence):
        left, right = prefix + sentence[start:m.start()].strip(), sentence[m.end():].strip()
        if not left.strip() or not right or _MARKER.match(left.strip()):
            continue
        if (it := _it_for_thing(left, right, speaker)) is not None:
            out.append(left)  # "The API is written in Rust and it runs on Fly.io"
            start, prefix, subject = m.end() + it[0], it[1], None
            continue
        if _LEANS.match(right) or (m["conj"] or "").lower() == "while" and _STAY.match(right):
            continue
        if gapped and re.match(r"^(?:our|my|the)\s", right, _I) and \
                _GAPPED.match(_until_cut(right)):
            out.append(left)  # "..., and our deploys to Tuesday"
            start, prefix = m.end(), gapped["head"] + " "
            continue
        command = _COMMAND.match(right) and (
            re.search(r"\b(?:please|me|you|your)\b", right, _I) or
            find_subject(left, speaker).entity is None)
        if _SUBJECT.match(right) or command or _someone_does(right, speaker) or \
                (m.group().strip() == "," and _names_a_fact(right)):
            if _BARE_SUBJECT.match(left) or len(left.split()) < 2:
                continue  # "My wife and I live in Boston"
            out.append(left)
            start, prefix, subject = m.end(), "", None
            continue
        if (be := _aside(left, right, m, speaker)) is not None:
            out.append(left)  # "I work at Dell, mostly doing sales engineering": "I'm doing"
            start, prefix, subject = m.end(), be, None
            continue
        if gapped and _GAPPED.match(_until_cut(right)) and not _elided(right):
            # "..., Redis for caching": the list's verb and subject come back
            out.append(left)
            start, prefix = m.end(), gapped["head"] + " "
            continue
        if m.group().strip() == ";" and len(left.split()) > 1 and len(right.split()) > 1:
            # ";" joins clauses that stand alone ("...; chat is Mattermost")
            out.append(left)
            start, prefix, subject = m.end(), "", None
            continue
        if not _elided(right) and not (prefix and m["conj"] and
                                             _parallel(sentence[start:m.start()], right)) \
                and not (m["conj"] == "and" and _their_verb(left, right, speaker)):
            continue
        subject = subject or find_subject(left, speaker)
        if subject.entity is None or not subject.surface:
            subject = None
            continue
        # The clause gets its subject back, and so does the next one that leaves it out.
        out.append(left)
        start, prefix = m.end(), subject.surface + " "
    out.append(prefix + sentence[start:].strip())
    return [_tidy(s) for s in out if s.strip(" ,;")]


# "it" standing for a thing named as the subject before, with a verb of a fact of its own
# ("... and it runs on Fly.io", "..., it's hosted on Render"); not an opinion ("and it's been
# great"), which leans on the clause before.
_IT_DOES = re.compile(r"^(?:it\s+(?=[a-z]{2,}(?:s|ed)\s)|it(?:'s|\s+is)\s+(?=(?:[a-z]{2,}ed|"
                      r"written|built|run|on|in|at)\s))", _I)


def _it_for_thing(left: str, right: str, speaker: str | None) -> tuple[int, str] | None:
    """(how much of `right` "it" takes, what stands for it) when `right` opens with "it"
    for the thing `left` is about, else None."""
    if not (m := _IT_DOES.match(right)):
        return None
    subject = find_subject(left, speaker)
    if subject.kind != "thing" or not subject.opens(left):
        return None
    be = " is " if m.group().lower().startswith(("it's", "it is")) else " "
    return len(m.group()), subject.surface + be


# A clause that opens by naming a fact ("..., cache is Redis", "..., favourite film is Paris,
# Texas", "..., infra is all Terraform"): a statement of its own after a comma.
_FACT_CLAUSE = re.compile(r"^(?:(?:and|but)\s+)?(?:(?:the|our|my)\s+)?(?P<np>[a-z][\w-]*(?:\s[a-z][\w-]*)?)"
                          r"\s+(?:is|are|'s|lives?|runs?|goes|go)\s+\S", _I)


def _names_a_fact(right: str) -> bool:
    m = _FACT_CLAUSE.match(right)
    if not m:
        return False
    np = m["np"].lower()
    np = re.sub(r"^(?:favou?rite|fav|main|current|new|primary)\s+", "favorite " if
                np.startswith("fav") else "", np)
    return np.split()[-1] in THINGS or attribute_of_noun(np) is not None \
        or (np.startswith("favorite ") and len(np.split()) == 2)


def _someone_does(right: str, speaker: str | None) -> bool:
    """Whether `right` opens with a person's name or a relation and a verb of theirs ("...
    and Tom handles QA", "..., mum teaches piano"): a clause with its own subject. A name
    before a plural noun ("Apple products") has no object after it, so two words at least.
    (A thing or the team's work named by a noun, "..., tickets live in Jira", was tried: it
    lost a change on each held-out half.)"""
    subject = find_subject(right, speaker)
    rest = subject.rest.split()
    if subject.kind != "person" or subject.entity is None or not subject.surface.isalpha() \
            or subject.surface.lower() == "i":
        return False
    return len(rest) >= 2 and bool(_VERB_FORM.match(rest[0].lower()))


def opens_with_subject(clause: str) -> bool:
    """Whether `clause` opens with a subject of its own ("they split up years ago")."""
    return bool(_SUBJECT.match(clause))


# A verb of the third person or of the past: "writes", "tracks", "moved".
_VERB_FORM = re.compile(r"^[a-z]{2,}(?:(?<!ss)(?<!us)(?<!is)s|ed)$")


def _parallel(item: str, right: str) -> bool:
    """Whether `right` goes on a list of verb phrases whose subject was said once ("our team
    writes Go, runs on GCP, and chats on Discord"): its verb has the form of the item's before
    it, whether or not the verb is one `_ELIDED` knows."""
    before, after = item.split()[:1], right.split()[:1]
    if not before or not after or not _VERB_FORM.match(before[0]) or \
            not _VERB_FORM.match(after[0]) or len(right.split()) < 2:
        return False
    return before[0].endswith("ed") == after[0].endswith("ed")


def _their_verb(left: str, right: str, speaker: str | None) -> bool:
    """Whether `right` is a verb phrase of the third person whose subject `left` named ("My
    son is 7 and goes to Riverside Primary"). After a plural noun it may be the next noun of
    a list ("My son collects stamps and coins from Japan"): not then."""
    words, last = right.split(), left.split()[-1].lower()
    if len(words) < 2 or not _VERB_FORM.match(words[0].lower()) or words[0].endswith("ed") \
            or last.endswith("s") or not re.match(r"^(?:to|at|in|on|for|with|from|a|an|the|"
                                                   r"my|his|her|their|every|out|up)$",
                                                   words[1], _I):
        return False
    subject = find_subject(left, speaker)
    return subject.kind == "person" and subject.surface.lower() != "i" and subject.opens(left)


# A verb phrase of "-ing" said after a clause ("..., mostly doing sales engineering",
# "... while working part-time at Barclays"); nouns and prepositions that end so are none.
_ASIDE = re.compile(r"^(?:(?:mostly|mainly|usually|currently|now|also|still|just)\s+)?"
                    r"(?!(?:morning|evening|nothing|something|anything|everything|thing|"
                    r"spring|string|king|ring|wedding|meeting|building|ceiling|feeling|"
                    r"during|including|according|pending|regarding|bring|sibling|"
                    r"darling|ping|sing|wing|swing|sting|fling|cling)\b)[a-z]{2,}ing\s+\S", _I)
_POINTS_BACK = re.compile(r"\b(?:it|its|that|this|them|those|these|there|which|everything|"
                         r"everyone|everybody|something)\b", _I)
# A clause that ends a value: the aside is what replaced it, said as one change ("I've
# stopped with the 6am alarms, waking up around 7:30 now").
_ENDING = re.compile(r"\b(?:stopped|quit|no longer|gave up|dropped|ditched|left|cancell?ed|"
                     r"not anymore)\b", _I)
_BE = {"i": "I'm", "we": "we're", "you": "you're", "they": "they're", "he": "he's",
       "she": "she's"}


def _aside(left: str, right: str, cut: re.Match[str], speaker: str | None) -> str | None:
    """The subject and its "be" that an "-ing" aside after a clause gets back ("I'm "), or
    None when `right` is no such aside (or it points back: "..., using it for work"; or
    the clause ends a value the aside replaces)."""
    if cut["conj"] not in (None, "while") or cut.group().strip() not in (",", "while"):
        return None
    aside = _until_cut(right)
    if not _ASIDE.match(aside) or _POINTS_BACK.search(aside) or len(aside.split()) < 3 or \
            _ENDING.search(left):
        return None
    subject = find_subject(left, speaker)
    if subject.entity is None or not subject.opens(left):
        return None
    surface = subject.surface
    return _BE.get(surface.lower(), f"{surface} is") + " "


def _until_cut(text: str) -> str:
    """The text up to the next place a statement may end."""
    return _CUT.split(text, maxsplit=1)[0]


def _tidy(clause: str) -> str:
    return clause.strip().rstrip(",;").strip()
