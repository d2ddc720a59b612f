"""What is already known decides which fact a statement changes (`Extractor.reads_known`).

The worker hands the extractor the namespace's current facts about the subjects a text may
be about (`recall_core.memory.known`). The rules alone read "These days I use VS Code" as the
user's editor because VS Code is an editor; but "Running Arch btw" after "My daily driver is
Ubuntu", or "daniel finally gave up on emacs and went to Helix" after "Daniel uses Emacs",
name a new value of a fact stored under a key the statement does not say. A value of the
same kind as a known single-valued fact's value (`kind`: Arch and Ubuntu are both an OS)
then takes that fact's key, so the fact model supersedes the old value:

* `align`: a fact the rules read gets the known key of its entity whose value is of its
  kind ("os" -> "daily_driver"), and an entity named differently from its first mention
  ("mobile releases" -> "mobile app") the known entity sharing a word and the fact;
* `replaced`: a statement naming a known value with a word that ends it and one other value
  of its kind ("screen is dead to me, tmux now"; "gave up on emacs and went to Helix");
* `current`: a statement naming one value of a known value's kind and saying it holds now
  ("we got Dashlane so I'm using that for everything").

When unsure (two known facts fit, the statement hedges, asks, negates or tells the past, or
names two new values) nothing changes: a missed supersession is cheaper than a lost fact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from recall_core.contracts import KnownFact
from recall_core.kit.attributes import INVENTORY, TEAM, USER, base_attribute, is_many
from recall_core.kit.mentions import names, of_a_thing

from .change_words import DISCARDED, NEGATED, NOW, PAST_SAID, SWAPPED
from .cues import UNSURE
from .fact import Fact
from .kinds import NEW, named_values
from .lexicon import TOOL_CATEGORIES, category_of, other_device
from .places import known_place
from .typed_values import theirs
from .triples import Reading

_I = re.IGNORECASE

_SCHOOL = re.compile(r"\b(?:school|elementary|primary|academy|kindergarten|nursery|daycare|"
                     r"preschool|college|university)$", _I)
_DAY = re.compile(r"^(?:mon|tues|wednes|thurs|fri|satur|sun)days?$", _I)
# Wordings that say a value holds now (besides the rules' own frames).
CURRENT = re.compile(
    r"\b(?:" + NOW + r"|swapped|"
    r"as usual|like always|as always|(?:i|we)(?:'m| am|'re| are) (?:using|on|running)|"
    r"(?:i|we) (?:use|run) (?:it|that|this)|is (?:my|our) \w+ now)\b", _I)
# Words that end the value they name ("gave up on emacs", "Keycloak is gone").
_ENDS = re.compile(
    r"\b(?:no more|no longer|anymore|" + SWAPPED + r"|"
    r"gone|dead|shut (?:\w+ )?down|sold|left|quit|switched|moved|"
    r"instead of|overtaken|over)\b", _I)
_PAST = re.compile(r"\b(?:" + PAST_SAID + r")\b", _I)
_DENIED = re.compile(r"\b(?:" + NEGATED + r")\b", _I)
_WORD = re.compile(r"[\w'.+#-]+")
_ARTICLE = re.compile(r"^(?:the|a|an|my|our|his|her|their)\s+", _I)


def kind(value: str) -> str | None:
    """The kind of a value, for comparing a new value with a known one ("Gruvbox Dark" and
    "the Solarized Light theme" are themes: a last word may be a variant or a generic noun)."""
    value = _ARTICLE.sub("", value.strip())
    if _DAY.match(value):
        return "day"
    if _SCHOOL.search(value):
        return "school"  # "Maple Grove Elementary", "Westfield Middle School"
    words = value.split()
    return category_of(value) or (category_of(" ".join(words[:-1])) if len(words) > 1 else None)


def _single(f: KnownFact) -> bool:
    return not is_many(f.attribute)


def said_words(text: str) -> set[str]:
    return {w.strip(".'").lower() for w in _WORD.findall(text)}


def _marks(entity: str) -> set[str]:
    """The tokens that tell things of one family apart: numbers and single letters
    ("server 1" / "server 2", "team A" / "team B")."""
    return {w for w in re.split(r"[\s_#-]+", entity.lower()) if w.isdigit() or len(w) == 1}


def _distinct(a: str, b: str) -> bool:
    """Two names that differ in such a mark are two things, however many words they share."""
    return (_marks(a) or _marks(b)) and _marks(a) != _marks(b)


# Nouns after what a value is about ("horror movies", "piano lessons"): the words before
# them name it as well.
_GENERIC_TAIL = frozenset("movies films shows series music books novels games lessons classes "
                          "food cuisine".split())


def mentions(text: str, value: str) -> bool:
    """The known value is named: whole, or by its last word ("the Golf" for "VW Golf"), or
    by its first when the last is a model number ("the Mazda" for "Mazda 3", "my Pixel" for
    "Pixel 7")."""
    low = text.lower()
    parts = value.lower().split()
    forms = {value.lower()} | ({parts[-1]} if len(parts) > 1 and len(parts[-1]) > 2 else set())
    if len(parts) == 1 and len(value) > 5 and value.lower().endswith("ing"):
        stem = value.lower()[:-3]  # the verb of an activity: "game" for "gaming"
        forms |= {stem, stem + "e"} | ({stem[:-1]} if stem[-1] == stem[-2] else set())
    if len(parts) > 1 and parts[-1] in _GENERIC_TAIL:
        forms.add(" ".join(parts[:-1]))  # "horror" for "horror movies"
    if len(parts) > 1 and re.search(r"\d", parts[-1]) and len(parts[0]) > 2 \
            and not re.search(r"\d", parts[0]):
        forms.add(parts[0])
    return any(re.search(rf"(?<![\w-]){re.escape(f)}s?(?![\w-])", low) for f in forms)


def _one(options: Sequence[KnownFact]) -> KnownFact | None:
    keys = {(k.entity, k.attribute) for k in options}
    return options[0] if len(keys) == 1 else None


def align(fact: Fact, known: Sequence[KnownFact], clause: str, text: str) -> Fact:
    """The fact with the entity and key of the known fact it gives a new value of."""
    triple = fact.triple()
    if fact.ended or fact.check or triple is None:
        return fact
    entity, attribute, value = triple
    ended = _one([k for k in known if _single(k) and kind(k.value) is not None
                  and kind(k.value) == kind(value) and k.value.lower() != value.lower()
                  and mentions(text, k.value)]) if _ENDS.search(text) else None
    if ended is not None and not any((k.entity, k.attribute) == (entity, attribute)
                                     for k in known):
        # "we went with Litestar for the rewrite. Flask is gone": the ended value's fact
        return Fact(ended.entity, ended.attribute, value, text=fact.text)
    if entity not in {k.entity for k in known} and entity not in (USER, TEAM):
        words = said_words(entity)
        # the known entity shares a word with it ("mobile releases", "mobile app"), or the
        # known fact's memory named it ("We use Django for the API" -> "The API runs on ...");
        # named as that fact's value it is someone else ("My manager is Priya" -> "Priya's
        # manager is Helen" is Priya's manager, not mine)
        near = {k.entity for k in known
                if ((k.entity not in (USER, TEAM) and names(k.entity, words))
                    or (names(entity, said_words(k.text))
                        and not names(entity, said_words(k.value))))
                and not _distinct(k.entity, entity)
                and (base_attribute(k.attribute) == base_attribute(attribute)
                     or (kind(k.value) is not None and kind(k.value) == kind(value)))}
        if len(near) == 1:
            entity = near.pop()
    elif entity == USER and attribute in INVENTORY and of_a_thing(attribute) \
            and not any((k.entity, k.attribute) == (USER, attribute) for k in known) \
            and any((k.entity, k.attribute) == (TEAM, attribute) for k in known):
        # "Moved all our repos to GitLab", "I moved the pipelines to GitHub Actions": what a
        # team holds, said by one of it, is the team's known fact
        entity = TEAM
    elif entity == TEAM and not any((k.entity, base_attribute(k.attribute)) ==
                                    (TEAM, base_attribute(attribute)) for k in known):
        # "we host the site on Fly.io" after "the site is hosted on Heroku": the team's
        # thing named in the clause, whose fact of this kind is known, is what it is about
        things = {k.entity for k in known if k.entity not in (USER, TEAM) and _single(k)
                  and base_attribute(k.attribute) == base_attribute(attribute)}
        words = said_words(clause)
        named = {t for t in things if names(t, words)}
        # ... or, unnamed, the one thing whose fact of this kind is known, when the team says
        # it changed it ("we migrated to Postgres" after "our app stores everything in MySQL")
        if len(named) == 1 or (not named and len(things) == 1 and _TEAM_CHANGED.search(clause)):
            entity = (named or things).pop()
    place = known_place(entity, attribute, clause, known)
    if place != attribute:
        return Fact(entity, place, value, text=fact.text)
    value_kind = kind(value)
    mine = [k for k in known if k.entity == entity and _single(k)]
    keep = Fact(entity, attribute, value, text=fact.text) if entity != triple[0] else fact
    if value_kind is None or attribute in _OF_ANY_KIND or any(k.attribute == attribute
                                                              for k in mine):
        return keep
    if is_many(attribute) and (not CURRENT.search(clause)
                               or re.search(r"\b(?:also|too|as well)\b", clause, _I)):
        return keep
    same = _one([k for k in mine if kind(k.value) == value_kind
                 and k.value.lower() != value.lower()])
    return Fact(entity, same.attribute, value, text=fact.text) if same is not None else keep


#: Facts whose value may be of any kind: what one is learning is a fact of its own, not a
#: new value of the known fact of that kind ("I'm learning Rust in the evenings" beside
#: "Python is my main language at work").
_OF_ANY_KIND = frozenset({"learning"})

_TEAM_CHANGED = re.compile(r"\b(?:migrated|migrating|switched|switching|moved|moving|ported|"
                           r"porting|rewrote|rewritten|swapped|cut over|went over)\b", _I)


def _owned(clause: str, value: str, owner: str = "my|our") -> re.Match[str] | None:
    """Where the value is said to be the speaker's own ("the camera on my iPhone 15", "our
    AWS bill"): a new value of its kind named that way is the one held now."""
    return re.search(rf"\b(?:{owner})\s+(?:new\s+)?{re.escape(value)}(?![\w-])", clause, _I)


# "how do I clear the cookies in Chrome?", "in WezTerm how do I split the pane?", "Bitwarden
# question: ...": asking how to do something with a tool says it is the one used now.
_HOW_IN = (r"\bhow\s+(?:do|can|to)\s+(?:i\s+|we\s+)?[^?.!]{0,60}?\b(?:in|on|with|using|into|"
           r"from)\s+(?:my\s+|our\s+|the\s+)?{v}(?![\w-])|^(?:so\s+|ok\s+|quick q,?\s+)?"
           r"(?:in|on|with|using)\s+{v},?\s+how\b|^{v}\s+question\b")


def _used_in(sentence: str, value: str) -> bool:
    m = re.search(_HOW_IN.replace("{v}", re.escape(value)), sentence, _I)
    # "... behave like it does in Sublime": a comparison, not the tool at hand
    before = m[0][: m[0].lower().rfind(value.lower())] if m else ""
    return bool(m) and not re.search(r"\b(?:like|than|as|compared|versus|vs)\b", before, _I)


def _of_a_thing(k: KnownFact) -> bool:
    """A fact of one of the team's things (the app's cloud), not of a person."""
    return k.entity not in (USER, TEAM) and of_a_thing(k.attribute)


def _denied_after_owned(sentence: str, value: str, denied: list[int]) -> bool:
    """"My Pixel 8 won't sync with the family calendar": what is denied comes after the
    speaker's own thing, named; it is said of the thing, not of having it."""
    m = _owned(sentence, value)
    return m is not None and all(at >= m.end() for at in denied)


_MY_OR_OUR = re.compile(r"(?:my|our)\s", _I)


# A subject that is a change itself ("the Postgres migration wrapped up"): the change is the
# speaker's or their team's, as if no subject were named.
_A_CHANGE = re.compile(r"\b(?:migration|move|switch|rewrite|port|cutover|transition|rollout)$",
                       _I)


def in_scope(k: KnownFact, reading: Reading, said: set[str], speaker: str | None) -> bool:
    subject = reading.subject
    if subject.entity and _A_CHANGE.search(subject.entity):
        return k.entity in ((speaker.lower() if speaker else USER), TEAM)
    if subject.entity and subject.kind in ("person", "team", "thing") \
            and k.entity == subject.entity:
        return True
    me = speaker.lower() if speaker else USER
    # (people other than the speaker, none named, never reach the speaker's facts)
    if k.entity in (me, TEAM) and subject.entity in (None, me, TEAM) and subject.kind != "other":
        return True
    return k.entity not in (USER, TEAM) and names(k.entity, said)


# A tool said to be what a migration, a move or a rewrite went to ("the Postgres migration
# wrapped up", "after the move to Fly.io", "the monorepo went to pnpm", "the Go rewrite of the
# backend shipped", "IT forced the whole company onto Teams"), or where a thing now lives
# ("Notion is where all our docs are"): the one held now. Said of tools only: "went to
# Paris" is no move.
_MIGRATED_TO = (r"\b(?:migration|migrating|migrated|migrate|move|moved|moving|switch|switched|"
                r"switching|transition|transitioned|port|ported|porting|cutover|rewrite|rewrote|"
                r"rewritten|rebuilt|rebuild|went|gone|going|converted|conversion|upgraded|"
                r"jumped|forced|consolidated|standardi[sz]ed)(?:\s+(?:over|back|fully|all|"
                r"everything|everyone|us|it|(?:the|our|my)(?:\s+[\w-]+){1,2}?)){0,2}\s+"
                r"(?:to|onto|into|on|in)\s+(?:the\s+)?{v}(?![\w-])")
_MIGRATION_OF = (r"(?<![\w-]){v}\s+(?:migration|rewrite|port|cutover|switch|move|conversion|"
                 r"rollout)\b|(?<![\w-]){v}\s+is\s+where\b|(?<![\w-]){v}\s+(?:has been|is)\s+"
                 r"(?:my|our)\s+(?:daily driver|main|go-to|default)\b")


# ... unless the move was only weighed, or the old one stayed ("We considered moving to Azure
# but stayed on AWS").
_WEIGHED = re.compile(r"\b(?:consider(?:ed|ing|s)?|talk(?:ed|ing)? about|discuss(?:ed|ing|ion)?|"
                      r"propos(?:ed|al|ing)|pitch(?:ed|ing)?|evaluat(?:ed|ing|ion)|pilot(?:ed|ing)?|"
                      r"trial(?:l?ed|l?ing)?|stayed|staying|stick(?:ing)?|stuck|kept|keeping|"
                      r"talk|blog post|article)\b", _I)


def _migrated_to(sentence: str, value: str) -> bool:
    if _WEIGHED.search(sentence):
        return False
    v = re.escape(value)
    return bool(re.search(_MIGRATED_TO.replace("{v}", v), sentence, _I)
                or re.search(_MIGRATION_OF.replace("{v}", v), sentence, _I))


# "my new iPhone 15": "new" is no part of its name; "my old Galaxy" is no new value at all.
_OLD = re.compile(r"(?:old|former|previous|ex)\b", _I)
_NEW = re.compile(r"^" + NEW + r"(?=\S)", _I)


def said_against(clause: str, reading: Reading, known: Sequence[KnownFact],
                 speaker: str | None, sentence: str) -> list[Fact]:
    """A new value of a known single-valued fact, said against the old one or as current.
    The value is read in the statement, what is said of it in its whole sentence ("we got
    Dashlane so I'm using that for everything")."""
    if _PAST.search(sentence):
        return []
    denied = [m.start() for m in _DENIED.finditer(sentence)]
    # A question is unsure of what it asks, not of what it takes as given: "how do I set up
    # a pot in my Monzo account?" says whose account it is. Only a value owned that way counts.
    asked = bool(UNSURE.search(sentence))
    if asked and UNSURE.search(sentence.replace("?", " ")):
        return []
    said = said_words(sentence)
    me = speaker.lower() if speaker else USER
    # ("my new iPhone 15": "new" is no part of its name)
    named = [(at + len(v), _NEW.sub("", _ARTICLE.sub("", v)), kd)
             for at, v, kd in named_values(clause)]
    named = [n for n in named if not _OLD.match(n[1])]  # "my old Galaxy S8" is not the new one
    # "Our GitHub Actions workflow keeps timing out": a subject that is the speaker's own
    # thing, named by the new value (the value is read below)
    owned_subject = bool(_MY_OR_OUR.match(reading.subject.surface))
    fits = []
    for k in known:
        k_kind = kind(k.value)
        if not _single(k) or k_kind is None:
            continue
        mine = owned_subject and k.entity in (me, TEAM)
        scoped = in_scope(k, reading, said, speaker)
        if not (scoped or mine or _of_a_thing(k)):
            continue
        # by words: "pnpm" is no restatement of "npm"
        new = {v for end, v, kd in named if kd == k_kind and not mentions(k.value, v)
               and not mentions(v, k.value) and not theirs(clause, v)
               and not other_device(clause[end:].split()[:1])}
        new |= {w for w in _WORD.findall(clause) if k_kind == "day" and _DAY.match(w)
                and w.lower().rstrip("s") != k.value.lower().rstrip("s")}
        if len({v.lower() for v in new}) != 1:
            continue
        value = next(iter(new))
        if asked and not _owned(clause, value) and not _used_in(sentence, value):
            continue
        if denied and not _denied_after_owned(sentence, value, denied):
            continue
        if not scoped and not (mine and _owned(reading.subject.surface, value)) \
                and not (_of_a_thing(k) and _owned(clause, value, "our")):
            continue  # "our DigitalOcean droplet": the one thing of ours with a cloud
        # "MongoDB is gone now": with the old value unnamed, a word that ends the one named
        # says it is the old one
        ended = mentions(sentence, k.value) and _ENDS.search(sentence)
        current = CURRENT.search(sentence) or (not mentions(sentence, k.value) and (
            _owned(clause, value) or _used_in(sentence, value))) or (
            k_kind in TOOL_CATEGORIES and _migrated_to(sentence, value))
        if ended or (current and not _ENDS_ONE.search(sentence)):
            fits.append(KnownFact(k.entity, k.attribute, value))
    chosen = _one(fits)
    return [Fact(chosen.entity, chosen.attribute, chosen.value)] if chosen else []


def ends_used(facts: list[Fact], known: Sequence[KnownFact], sentence: str) -> list[Fact]:
    """A tool stored as one of several used (`uses:<tool>`), ended by a new value of its
    kind held one at a time, said as current ("I'm on Gruvbox Dark now" after "I use the
    Solarized Light theme")."""
    if not CURRENT.search(sentence):
        return []
    out = []
    for f in facts:
        triple = f.triple()
        if f.ended or triple is None or is_many(triple[1]) or kind(triple[2]) is None:
            continue
        used = [k for k in known if k.entity == triple[0] and base_attribute(k.attribute) == "uses"
                and kind(k.value) == kind(triple[2]) and not mentions(triple[2], k.value)]
        # Several of the kind used side by side: which one the new value replaces is unsure.
        out += [Fact(k.entity, "uses", k.value, ended=True) for k in used if len(used) == 1]
    return out


# Words that end one value of a many-valued fact, said next to it ("can't do horror movies
# anymore", "Swarm is decommissioned", "had to stop climbing").
_ENDS_ONE = re.compile(
    r"\b(?:no more|no longer|anymore|any more|giving up|" + DISCARDED + r"|"
    r"gone|dead|stopp?(?:ed|ing)?|quit|cancell?ed|sold|"
    r"let (?:it|that|them|that one|those) go|done with|off my list|"
    # ends said in other words ("cut disney plus", "let the economist lapse", "ripped Kafka
    # out", "swimming is off the table", "board game night fizzled out", "Puma didn't renew",
    # "closed the vercel account", "doctor took me off the lisinopril")
    r"cut(?!\s+(?:back|down|short|it close))|(?:let|letting) (?:[\w+-]+ ){1,3}lapse|lapsed|"
    r"off the table|fizzled(?: out)?|petered out|(?:didn't|did not|won't|wasn't|was not|"
    r"isn't|not) (?:get )?renew(?:ed|ing)?|"
    r"closed (?:the|my|our) (?:[\w+-]+ ){1,2}account|(?:took|taken|take) (?:me|him|her|us) off|"
    r"sold off|(?:ripped|tore|torn|pulled) (?:[\w+-]+ ){1,2}out|handed (?:[\w+-]+ ){1,3}off|"
    # "I'm over knitting", "kinda over fantasy", "I've gone off curry" (not "over the weekend")
    r"(?:'m|am|i'm|im|kinda|kind of|totally|so|pretty much|completely|honestly)\s+over(?!\s+(?:the|a|an|"
    r"my|to|there|here)\b)|(?:gone|went|going) off|"
    # "Pottery's over for me": the thing is over
    r"(?:'s|is|are)\s+(?:(?:so|totally|completely|pretty much)\s+)?over(?=\s+for\s+(?:me|us)\b|\s*[,.!;]|$)"
    r")\b", _I)
# A pet's end ("the hamster died on Sunday", "had to put our dog down"): read only where a
# known value is named beside it ("my phone died, got a Pixel" ends no value of many).
_DIED = re.compile(r"\b(?:died|passed away|put (?:\w+ ){1,2}down|lost|crossed the rainbow "
                   r"bridge|had to say goodbye to)\b", _I)
# Where one aside ends and the next begins: a value "still" said in the next stays.
ASIDE = re.compile(r"[,;.!]\s+|\s+(?:but|though|although|so|and|while|whereas)\s+", _I)
# A memory that lists several values ("I do climbing, yoga and cycling"): ending one would
# supersede the others with it, so it is kept (a missed ending is cheaper than lost facts).
_LISTED = re.compile(r",|\s(?:and|&|plus)\s", _I)
_GLUE_BEFORE = re.compile(r"(?:,|\band|&|\bplus)\s*$", _I)
_GLUE_AFTER = re.compile(r"^\s*(?:,|and\b|&|plus\b)\s*(?!(?:basically|literally|anything|"
                         r"whatever|etc|and so on|stuff|but|so|which|that|because|since|though|"
                         r"i|we|my|our|mostly|mainly|usually|often|always|sometimes|every|now|"
                         r"these|really|pretty|just|lol|tbh)\b)\w", _I)


def listed(k: KnownFact) -> bool:
    """Whether the memory of `k` lists other values beside its own ("I do climbing, yoga and
    cycling"); not for a tail after it ("I'm into squash, basically anything that wrecks my
    knees", a memory of its own since lists are split)."""
    at = k.text.lower().find(k.value.lower())
    if at < 0:
        return bool(_LISTED.search(k.text))
    return bool(_GLUE_BEFORE.search(k.text[:at]) or
                _GLUE_AFTER.match(k.text[at + len(k.value):]))
_POINTS_BACK = re.compile(r"\b(?:it|that|them|those|that one)\b", _I)
_STILL = re.compile(r"\b(?:still|keep|kept|also|too)\b", _I)


def _is_subject(value: str, reading: Reading) -> bool:
    """The statement is about the value itself ("Swarm is decommissioned")."""
    subject = reading.subject
    return bool(subject.entity) and mentions(subject.entity, value)


def ends_known(sentence: str, reading: Reading, known: Sequence[KnownFact],
               speaker: str | None) -> list[Fact]:
    """Known values of many-valued facts that the sentence ends: named in an aside with a word
    that ends them, and not said to go on ("Gave up pottery, still knitting")."""
    if UNSURE.search(sentence):
        return []
    said = said_words(sentence)
    out: list[Fact] = []
    before: list[KnownFact] = []
    for aside in ASIDE.split(sentence):
        named = [k for k in known if is_many(k.attribute) and mentions(aside, k.value)
                 and (in_scope(k, reading, said, speaker) or _is_subject(k.value, reading))]
        if not named and _POINTS_BACK.search(aside):
            named = before  # "haven't touched Java in years, I wouldn't list it anymore"
        before = named
        if not (_ENDS_ONE.search(aside) or _DIED.search(aside)) or _STILL.search(aside) \
                or len(named) > 1:
            continue  # not ended, said to go on, or which one ended is unsure
        # ended under the stored key exactly (its part after ":" names the value)
        out += [Fact(k.entity, base_attribute(k.attribute), k.attribute.partition(":")[2]
                     or k.value, ended=True) for k in named if not listed(k)]
    return out


def _restates(fact: Fact, known: Sequence[KnownFact]) -> bool:
    t = fact.triple()
    return t is not None and any(
        (k.entity, k.attribute) == t[:2] and (mentions(t[2], k.value) or mentions(k.value, t[2]))
        and not _each_its_own(t[2], k.value) for k in known)


def _as_known(fact: Fact, known: Sequence[KnownFact]) -> Fact:
    """A known value named by part of its name ("my Pixel" for "Pixel 7", "my Civic" for
    "Honda Civic") is that value, not a vaguer new one that would replace it."""
    t = fact.triple()
    if t is None or fact.ended or is_many(t[1]):
        return fact
    words = set(t[2].lower().split())
    same = [k for k in known if (k.entity, k.attribute) == t[:2] and mentions(t[2], k.value)
            and words < set(k.value.lower().split())]
    return replace(fact, value=same[0].value) if len(same) == 1 else fact


def _each_its_own(a: str, b: str) -> bool:
    """Two values each with a word the other lacks ("head chef" / "sous chef", "Pixel 8" /
    "Pixel 7"): a shared word does not make one the other restated."""
    wa, wb = set(a.lower().split()), set(b.lower().split())
    return bool(wa - wb) and bool(wb - wa)


def apply_known(sentences: Sequence[str], read: list[list[tuple[str, Reading]]],
                known: Sequence[KnownFact], speaker: str | None) -> None:
    """Every statement's facts given the known ones (in place); `read` has each of
    `sentences`' statements."""
    if not known:
        return
    text = " ".join(sentences)
    for sentence, statements in zip(sentences, read):
        added: list[tuple[Reading, list[Fact]]] = []
        for clause, reading in statements:
            reading.facts = [_as_known(align(f, known, clause, text), known)
                             for f in reading.facts]
            if _ENDS_ONE.search(sentence):
                # "payments no longer ships on Mondays, ...": the known value restated beside
                # a word that ends it is not its new value
                reading.facts = [f for f in reading.facts if f.ended or not _restates(f, known)]
            if not any(not f.ended and not is_many(f.attribute) for f in reading.facts):
                added.append((reading, said_against(clause, reading, known, speaker, sentence)))
        # Two statements of one sentence giving new values: which one holds is unsure.
        if sum(1 for _, new in added if new) == 1:
            for reading, new in added:
                reading.facts = [*reading.facts, *new]
        for _, reading in statements:
            reading.facts = [*reading.facts, *ends_used(reading.facts, known, sentence)]
        if statements:
            reading = statements[0][1]
            have = {f.triple() for _, r in statements for f in r.facts}
            reading.facts += [f for f in ends_known(sentence, reading, known, speaker)
                              if f.triple() not in have]


def join_endings(units: list, known: Sequence[KnownFact]) -> list:
    """A statement that names a known single value and states no new one ("Left IBM", "My
    wife left Globex", "Sarah sold the Mini"), in a text whose other statement gives that
    fact its new value, is one memory with it: the change is said whole ("Left IBM. I joined
    Datadog."), and a question about the present is never answered by its first half alone.
    `units` are the stub's statements (`.text`, `.facts`), in order."""
    single = [k for k in known if _single(k)]
    out = list(units)
    for unit in list(out):
        if any(not f.ended for f in unit.facts):
            continue
        old = [k for k in single if mentions(unit.text, k.value)]
        keys = {(k.entity, k.attribute) for k in old}
        target = next((u for u in out if u is not unit and any(
            (t := f.triple()) is not None and t[:2] in keys and not f.ended
            and not any(mentions(t[2], k.value) for k in old) for f in u.facts)), None)
        if target is None or any(not any(mentions(f.value, k.value) for k in old)
                                 for f in unit.facts):
            continue
        before = out.index(unit) < out.index(target)
        first, then = (unit.text, target.text) if before else (target.text, unit.text)
        # clauses of one sentence lost their comma when they were cut apart
        target.text = f"{first}{'' if first.rstrip()[-1:] in '.!?;,' else ','} {then}"
        out.remove(unit)
    return out
