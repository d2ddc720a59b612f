"""Who a statement is about: its subject becomes the fact's entity.

"My wife works at Globex" is about `wife`, never about the user's employer; "Sarah moved to
Porto" is about `sarah`; "the billing service uses Postgres" about `billing service`. So each
statement is read as subject + predicate before any fact rule looks at it:

* "I" is the user (in a transcript line, the speaker: "Caroline: I ..." -> `caroline`), "we"
  / "our team" / "our company" the team;
* "my <relation>" (wife, boss, sister, ...) is that relation (a speaker's: `caroline's
  wife`), a person named by name is their lowercase name, "he"/"she" the last person named
  in the same text (else nobody: no fact);
* "my/our <attribute> is ..." ("my employer is Globex", "our CI is CircleCI") is the
  possessor's attribute: `Subject.noun` carries it;
* "the/our <thing>" is the thing (`billing service`, `backend`); "it", "this", "you" and
  anything else is nobody, and the statement gets no fact.

The predicate comes back with contractions spelt out ("'m" -> "am"), so the fact rules read
one form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recall_core.kit.attributes import INVENTORY, TEAM, USER, canonical_attribute

from .fillers import drop_fillers
from .keys import FAVORITE_TOOLS
from .lexicon import FIRST_NAMES_TOO, PERSONAL, category_of
from .roles import role

_I = re.IGNORECASE

RELATIONS = frozenset("""
wife husband partner spouse boyfriend girlfriend fiance fiancee son daughter kid kids child
children mother mom mum father dad parents sister brother sibling siblings grandma grandpa
grandmother grandfather aunt uncle cousin niece nephew boss manager roommate flatmate
housemate friend best friend colleague coworker co-worker neighbor neighbour landlord
mentor therapist doctor stepson stepdaughter stepmom stepdad in-laws mother-in-law
father-in-law sister-in-law brother-in-law ex ex-wife ex-husband twin twins baby sons
daughters grandparents grandkids grandchildren stepkids gp dentist landlady accountant lawyer
physio mate buddy pal bestie bff cofounder co-founder teammate classmate nan nana gran granny
""".split()) | {"best friend"}
# The relations that are a fact of their owner's, one person at a time, and the attribute
# each names: "My wife is Anna", "my new GP, Dr. Singh". Every rule that reads a relation's
# name (triples' copulas, idioms' "my new X Y") reads it from here. Friends, siblings and
# colleagues are many at once and name no fact.
ROLE_OF = {"wife": "partner", "husband": "partner", "partner": "partner", "spouse": "partner",
           "boyfriend": "partner", "girlfriend": "partner", "fiance": "partner",
           "fiancee": "partner", "fiancé": "partner", "fiancée": "partner",
           "boss": "manager", "manager": "manager",
           "doctor": "doctor", "gp": "doctor", "dentist": "dentist", "therapist": "therapist",
           "landlord": "landlord", "landlady": "landlord", "mentor": "mentor",
           "accountant": "accountant", "lawyer": "lawyer", "physio": "physio"}
PETS = frozenset("""
dog cat puppy kitten parrot hamster rabbit bunny turtle tortoise fish goldfish snake lizard
horse pony ferret gecko bird budgie pup pet
corgi lab labrador retriever poodle beagle greyhound whippet terrier spaniel husky dachshund
chihuahua pug bulldog collie doodle labradoodle goldendoodle cockapoo schnauzer mutt
dalmatian rottweiler boxer tabby kitty ragdoll cockatiel parakeet chinchilla hedgehog
axolotl tarantula iguana chicken hen goat
""".split())
# Words that open a sentence but are never a person's name.
_NOT_NAMES = frozenset("""
i the a an my our your his her their its this that these those it he she they we you there
here today yesterday tomorrow also then so and but or if when while after before since
because actually update honestly anyway well oh ok okay yes no maybe please thanks hey hi
sorry what why how who where which every each some any all both everyone nobody someone
new old team work home
monday tuesday wednesday thursday friday saturday sunday january february march april may
june july august september october november december last next this just now currently
lately recently finally sadly luckily unfortunately fortunately btw fyi big quick note
to for in on at from with by of about into once until unless during
might could would should must can shall
fully totally completely officially basically mostly properly permanently eventually literally
seriously definitely
one two three four five six seven eight nine ten eleven twelve several few couple
""".split())
_GROUPS = frozenset({"team", "company", "org", "organisation", "organization", "group",
                     "startup", "family", "household", "office"})
_OWNERS = RELATIONS | PETS | _GROUPS
_LEAD = re.compile(
    r"^(?:(?:actually|update|correction|so|well|oh|also|btw|fyi|ok|okay|anyway|honestly|"
    r"by the way|big news|quick update|good news|sad news|news|heads up|just so you know|"
    r"and|but|plus|then|now|these days|nowadays|lately|recently|currently|as of (?:today|now|"
    r"(?:last|this|next) \w+|(?:mon|tues|wednes|thurs|fri|satur|sun)day|[a-z]+|\d{4})|"
    r"(?:a|an|one|two|three|four|five|six|a few|a couple of|\d+) (?:days?|weeks?|months?|"
    r"years?) ago|(?:earlier|later) this (?:week|month|year)|last (?:(?:mon|tues|wednes|"
    r"thurs|fri|satur|sun)day|night|spring|summer|autumn|fall|winter)|effective "
    r"(?:immediately|today)|as you know|just fyi|starting (?:today|tomorrow|now)|"
    r"from now on|from here on(?: out)?|going forward|moving forward|"
    r"since (?:last|this) \w+|(?:last|this) (?:week|month|year)|"
    r"at the moment|for the record|to be clear|in fact|scratch that|oh and|ps|p\.s\.|"
    r"according to [\w' -]{1,40}?(?=,?\s+(?:our|my|the|their|his|her|we|i|they)\b)|"
    r"today|yesterday|finally|officially|guess what|guess who|fun fact|right now|for now|"
    r"as of now|at this point|these days|turns out|it turns out|apparently|i'd say|"
    r"i would say|i guess|i think|to be honest|tbh|good news|bad news|ok i'll admit it|"
    r"by day|during the day|in my day job|professionally|irl|in real life|"
    r"i'll admit it|i admit|ugh+|omg|lol|welp|yay|wow|whew|phew|sigh|hey|hi|hmm+|um+|"
    # "no I haven't switched", "yes, I'm vegan" (not "no more squash")
    r"(?:no|nope|yes|yeah|yep)(?=[,!.]|\s+(?:i|i'm|i've|we|we're|it's|that's)\b)|"
    r"oof|ahh+|argh+|woo+|hooray|ok so|so yeah)\b[,:!.]?\s+|^[A-Za-z][\w -]{0,24}:\s+)+", _I)
# A subject left out: the clause opens with the speaker's verb (a past or -ing form, or one
# of these).
_IMPLIED = re.compile(
    r"^(?:(?:just|finally|recently|also|now|still|already|officially|totally|basically|"
    r"currently|really)\s+)*(?:(?!(?:morning|evening|nothing|something|everything|anything|"
    r"thing|king|spring|wedding|building|meeting|ceiling|ring|sibling|darling|bed|red|"
    r"need|speed|seed|feed|weed|shed|sled|ted|fred|ned|ed|according)\b)[a-z]{3,}(?:ed|ing)|made|sold|"
    r"took|got|started|starting|start|moved|moving|switched|"
    r"switching|joined|joining|left|leaving|quit|quitting|bought|sold|traded|dropped|gave|"
    r"found|finished|began|became|been|went|made|had|have|live|living|work|working|use|"
    r"using|love|loving|hate|like|speak|drive|driving|play|playing|back|cut|deleted|"
    r"adopted|rehomed|lost|retired|turned|stretched|rewrote|migrated|shifted|sleeping|"
    r"waking|ditched|replaced|swapped|picked|upgraded|landed|accepted|signed|transferred|"
    r"relocated|settled|stopped|gave up|no longer|studying|learning|teaching|taking|"
    r"coding|writing|wrote|running|ran|doing|did|tried|trying|hired|promoted|"
    r"rented|renting|renewed|married|engaged|divorced|dating|eating|drinking|"
    r"heading|headed|commuting|cycling|biking|walking|training|lifting|said|picked|"
    r"installed|wiped|signed|poached|hired|transferred|writing|upgraded|"
    r"am|was|is)\b", _I)
# The speaker's verbs that open a clause before a capitalised word, never a first name
# ("Started Polish lessons", "Booked Ryanair flights"), though some end like one in -ed.
_OPENING_VERBS = frozenset("""started moved joined switched got took bought sold signed finished
booked began became left quit landed retired upgraded installed wiped picked dropped ditched
swapped replaced opened closed went made had found tried""".split())
# Nouns that end like a verb in -ing ("Leo's wedding", "the morning").
_ING_NOUNS = (r"(?:morning|evening|nothing|something|everything|anything|thing|king|spring|"
              r"wedding|building|meeting|ceiling|ring|sibling|darling|birthday|clothing|"
              r"painting|drawing|ending|feeling|housing|training|funding|pudding|stuffing|"
              r"setting|offspring|bedding|being)")
# What may follow a bare subject ("CI is on ...", "Mom turned 59", "Deploys moved ...").
_BARE_VERB = (r"(?:is|are|was|were|has|have|had|'s|will|just|also|now|still|finally|"
              r"moved|move|moves|runs|run|goes|go|went|happen|happens|turned|got|uses|use|"
              r"lives|live|works|work|switched|started|retired|became|changed|stores|"
              r"ships|releases|deploys|lives|sits|comes|come|stays|stay|needs|broke|"
              r"says|said|left|joined|died|passed|signs|sign|codes|writes|talks|chats)\b")
_NOT_SUBJECTS = frozenset("""
it this that these those there here everything nothing everyone someone something anyone
anything all both each which what who where when why how life work today tomorrow
yesterday weather time day week month year weekend morning evening night lunch dinner
breakfast i we you he she they me us him her them my our your his their its one
thing things stuff people guys folks kids nobody none some any most no not
""".split())
# Subjects that are people other than the speaker, none of them named (kind "other": no fact
# is read of them, and the speaker's known facts are not theirs). Not "nobody": "nobody here
# uses Tableau, so I've let it go" speaks for the speaker's group too.
_OTHERS = re.compile(
    r"^(?:they|someone|somebody|people|folks|"
    r"(?:most|many|some|half|all|few|several|none|one|a few|a couple|a lot|lots|both|each|"
    r"either|neither|two|three) of\b|"
    r"(?:a|another|one|some|two|three|a few|several) (?:friends?|colleagues?|coworkers?|"
    r"co-workers?|guys?|girls?|persons?|people|neighbou?rs?|relatives?|cousins?)\b)", _I)
# The speaker's whole group, said as everyone in it ("everyone at work", "the whole company").
_EVERYONE = re.compile(r"^(?:everyone|everybody|all of us|the (?:whole|entire) (?:company|team|"
                       r"org|organi[sz]ation|department|office))(?: (?:at work|here|in the "
                       r"(?:company|team|office)|on (?:the|my|our) team))?\s+(?=\w)", _I)
# Relation words said without "my" ("Mom turned 59", "Dad finally retired").
_RELATION_WORDS = frozenset({"mom", "mum", "dad", "mommy", "daddy", "grandma", "grandpa",
                             "hubby", "wifey", "nan", "nana", "gran", "granny"})
# Attributes of a team when said of nobody in particular ("Sprints are 3 weeks long").
_TEAM_ATTRIBUTES = frozenset({"ci", "deploy_day", "standup_time", "sprint_length",
                              "release_schedule", "code_host", "issue_tracker", "chat_tool",
                              "testing_framework", "monitoring", "auth_provider",
                              "package_manager", "branch_strategy", "database", "cloud",
                              "orm", "framework", "frontend_framework", "language"})
# Parts of a system, a subject on their own ("frontend moved to Bun").
THINGS = _THINGS = frozenset("""
backend frontend api app infra infrastructure dashboard website site server service
database monolith cluster pipeline repo mobile platform portal worker scheduler
""".split())
_CONTRACTIONS = (("'m", " am"), ("'ve", " have"), ("'re", " are"), ("'ll", " will"),
                 ("'d", " would"), ("n't", " not"))
# What may follow a subject noun phrase: its verb (or an adverb before it). Listed, never
# guessed from an ending: "services" or "hours" end like verbs and are the subject's nouns.
_VERB_WORDS = """
is are was were has have had does did do will would can could should may might must just
also now still recently finally really always never usually actually currently only
already officially got gets became becomes works worked lives lived moved moves uses used
runs ran goes went comes came plays played drives drove speaks spoke loves loved likes
liked hates hated prefers preferred started starts joined joins left leaves switched
switches quit quits sold sells bought buys turned turns retired retires studies studied
teaches taught stores stored ships shipped deploys deployed releases released relies
relied codes coded writes wrote reports reported talks talked chats chatted takes took
tracks tracked
gave gives keeps kept sits sat stays stayed needs needed broke breaks passed died dies
says said signs signed migrated migrates replaced replaces lost loses happens happened
changed changes adopted adopts owns owned rents rented made makes built builds hosted
hosts goes tends seems looks feels thinks knows knew wants wanted gets getting went
use run live work go come play drive speak love like hate prefer start join leave switch
sell buy turn retire study teach store ship deploy release rely code write report talk
chat take give keep sit stay need break pass die say sign migrate replace lose happen
change adopt own rent make build host tend seem look feel think know want get move
rehomed cancelled canceled deleted dropped quit stopped killed ditched traded swapped
finished began grew had told asked wrote read spent named called
""".split()
_VERB = r"(?:" + "|".join(sorted(set(_VERB_WORDS), key=len, reverse=True)) + r"|'s)\b"
# A named person's relation and its verb ("Hamid's wife teaches ...", "Ana's dog sleeps ...").
_NAMED_RELATION = re.compile(r"^(?P<name>[A-Z][a-z]+)'s?\s+(?P<noun>[\w-]+)\s+(?P<rest>(?:"
                             + _VERB + r"|\w+ed\b|[a-z]{2,}(?<!ss)s\b).*)$")
# Up to four words, none of them a copula or an auxiliary: the subject ends where its verb
# begins. (Other verbs can be nouns: "team chat", "work laptop", "our code".)
_AUX_WORDS = (r"(?:is|are|was|were|has|have|had|will|would|can|could|should|does|did|do|"
              r"am|be|been|just|also|now|still|finally|really|recently|always|never|uses|"
              r"works|lives|moved|runs|goes|went|got|switched|started|joined|left|turned)\b")
_NOUN_WORD = r"(?!" + _AUX_WORDS + r")[\w.+#-]+"
_NOUN_PHRASE = r"(?:[\w.+#-]+(?:\s+" + _NOUN_WORD + r"){0,3})"


@dataclass(frozen=True)
class Subject:
    #: the canonical entity, or None when the statement is about nobody we can name
    entity: str | None
    #: "person" (user, a relation, a named person), "team", "thing", "other" (people other
    #: than the speaker, none named: "they", "someone on my team") or "none"
    kind: str
    #: the words of the predicate (after the subject), contractions spelt out
    rest: str
    #: for "my/our/<name>'s <noun> ...": the possessed noun ("employer", "favourite colour")
    noun: str | None = None
    #: the subject as written, to repeat before a clause that left it out
    surface: str = ""

    def opens(self, clause: str) -> bool:
        """Whether `clause` opens with this subject as written (not one given back to it)."""
        return bool(self.surface) and clause.lower().startswith(self.surface.lower())


def expand(text: str) -> str:
    """Contractions spelt out ("I'm" -> "I am"; "can't" -> "can not"), quotes folded."""
    out = drop_fillers(text.replace("\u2019", "'"), _person_attribute)
    out = re.sub(r"\b(c)an't\b", r"\1an not", out, flags=_I)
    out = re.sub(r"\b(w)on't\b", r"\1ill not", out, flags=_I)
    # "my name's Fatima": 's is "is" after anything but a person, pet or group, whose 's
    # owns what follows ("my wife's employer").
    # Only as a clause's subject: later "my dad's Tesla" is his ("I borrowed my dad's Tesla").
    out = re.sub(r"\b(my|our)\s+([\w-]+)'s\b(?=\s+(\S))", _owner_s, out, flags=_I)
    out = re.sub(r"\b(master|bachelor|associate)'s\b", r"\1s", out, flags=_I)  # degrees
    out = re.sub(r"\b(\w+)'s\s+(been|got|gotten|started|joined|landed|ended up|taken)\b",
                 r"\1 has \2", out, flags=_I)
    # "Priya's retrained as a teacher", "my wife's qualified": 's before a past participle
    out = re.sub(r"\b([A-Z][a-z]+|(?i:my|our)\s+[\w-]+)'s\s+(?=(?:re)?(?:trained|qualified|"
                 r"retired|relocated|settled|switched|transferred|graduated)\b)", r"\1 has ",
                 out)
    # (not a business's name: "at the Nando's in town", "to the McDonald's on Main")
    out = re.sub(r"(?<!\bat the )(?<!\bto the )(?<!\bin the )(?<!\bfrom the )"
                 r"\b(\w+)'s\s+(always|never|just|now|still|not|a|an|the|out|gone|"
                 r"currently|finally|officially|really|in|at|from|on|moved|working|living|"
                 r"based|learning|allergic|married|engaged|dating|what|where|how|back|\d)", r"\1 is \2",
                 out, flags=_I)
    # "Leo's doing his PhD", "my sister's teaching in Leeds": 's before a verb in -ing is
    # "is" (not before a noun in -ing: "Leo's wedding")
    out = re.sub(r"\b([A-Z][a-z]+|(?i:my|our)\s+[\w-]+)'s\s+(?!" + _ING_NOUNS + r"\b)"
                 r"(?=[a-z]{2,}ing\b)", r"\1 is ", out)
    out = re.sub(r"(?i)\bim\b", "I am", out)  # "im a data scientist now"
    for short, full in _CONTRACTIONS:
        out = re.sub(r"(?<=\w)" + short + r"\b", full, out, flags=_I)
    return out


def _owner_s(m: re.Match[str]) -> str:
    """ "my name's" -> "my name is"; "my wife's" stays hers, but for her name alone ("My
    wife's Anna", not "My wife's Starling account is frozen")."""
    if m[2].lower() not in _OWNERS:
        return f"{m[1]} {m[2]} is"
    if not m[3][0].isupper() or m.start() > 0 or re.match(
            r"\s+(?:[A-Z][\w'-]*\s+)+(?!(?:and|but|so|who|by|btw|lol|now|from|at|with|in|on|"
            r"of|here|there|too|as|for|to|is|was|has|these|this)\b)[a-z]", m.string[m.end():]):
        return m[0]
    return f"{m[1]} {m[2]} is"


def _person_attribute(word: str) -> bool:
    attr = attribute_of_noun(word)
    return attr is not None and INVENTORY[attr].about == "person"


_TAIL = re.compile(r"[,;]?\s+(?:just so you know|fyi|btw|lol|haha|lmao|tbh|honestly|"
                   r"though|i guess|i think|as usual|like always|for the record)\s*[.!]*$", _I)


# "After the breach I moved ...": a circumstance before the subject.
_CIRCUMSTANCE = re.compile(r"^(?:after|before|since|because|when|once|now that|ever since|"
                           r"following|during|with|thanks to|for|in|on|at)\s+[\w' .-]{1,40}?,?\s+"
                           r"(?=(?:i|we|my|our)\s)", _I)


# "since we moved the pipelines over to GitHub Actions" (its question cut off): a clause of
# reason or time with no main clause left is what it says.
#: Words that open a reason or a time said before what holds (`statements` splits there too).
REASON_OPENERS = r"ever since|since|now that|because"
_SUBORDINATE = re.compile(r"^(?:" + REASON_OPENERS + r")\s+(?=(?:i|we|my|our|i'm|we're|i've|"
                          r"we've)\s)", _I)


# "three months on Helix now", "About a month into Colemak": a time spent on a thing says it
# is the one used ("I'm on Helix").
_TIME_ON = re.compile(r"^(?:about\s+|almost\s+|nearly\s+|over\s+)?(?:a|an|one|two|three|four|"
                      r"five|six|a few|a couple(?: of)?|\d+)\s+(?:days?|weeks?|months?|years?)\s+"
                      r"(?:into|on|in on)\s+(?=\S)", _I)


def strip_lead(text: str) -> str:
    """The statement without openers and tails that say nothing about its subject
    ("Actually, ...", "Update: ...", "These days ...", "..., just so you know")."""
    text = _LEAD.sub("", text.strip()).strip()
    text = _TIME_ON.sub("I'm on ", text)
    return _TAIL.sub("", _CIRCUMSTANCE.sub("", _SUBORDINATE.sub("", text))).strip()


def _owner(word: str, speaker: str | None) -> str:
    """Whose: "my" -> the user (or speaker), "our" -> the team."""
    if word.lower() == "our":
        return TEAM
    return speaker.lower() if speaker else USER


def _relation(noun: str, speaker: str | None) -> str:
    noun = noun.lower()
    return f"{speaker.lower()}'s {noun}" if speaker else noun


def person_named(words: str) -> str | None:
    """The entity a person named in passing is ("Priya", "my mom", "grandma"), or None when
    the words name no person: read as the subject of a clause of their own."""
    who = find_subject(f"{words} lives there")
    return who.entity if who.kind == "person" and who.entity else None


def find_subject(clause: str, speaker: str | None = None,
                 last_person: str | None = None) -> Subject:
    """Read `clause` as subject + predicate (see the module docstring)."""
    text = expand(strip_lead(clause))
    me = speaker.lower() if speaker and speaker.lower() not in ("user", "me") else USER
    if m := re.match(r"^i\s+(?P<rest>.*)$", text, _I):
        return Subject(me, "person", m["rest"], surface="I")
    if m := re.match(r"^we\s+(?P<rest>.*)$", text, _I):
        return Subject(TEAM, "team", m["rest"], surface="we")
    if m := re.match(r"^(?P<who>my|our)\s+(?:(?:new|current|old|own|usual|little|older|"
                     r"younger|big|baby|main|primary|go-to|default)\s+)*(?P<all>.+)$", text, _I):
        if split := _head(m["all"]):
            np, rest = split
            if re.search(r"\b(?:i|we|you|he|she|they)\b", np, _I):
                # "our intern asked why we don't use X": a clause reported, not a noun
                # phrase; whose fact it is the words do not say
                return Subject(None, "other", rest)
            owner_np, sep, noun2 = np.partition("'s ")
            if not sep:
                owner_np, sep, noun2 = np.partition("' ")
            surface = text[: len(text) - len(rest)].strip()
            return _possessed(m["who"], owner_np if sep else np, noun2 if sep else None, rest,
                              surface, speaker)
    if m := re.match(r"^(?P<who>his|her|their)\s+(?P<np>[\w-]+)\s+(?P<rest>" + _VERB + r".*)$",
                     text, _I):
        # "Sarah moved to Porto and her husband works at Globex": the last person's relation
        if last_person and m["np"].lower() in RELATIONS:
            return Subject(f"{last_person}'s {m['np'].lower()}", "person", m["rest"],
                           surface=f"{m['who']} {m['np']}")
        return Subject(None, "other", m["rest"])  # someone else's relation
    if m := re.match(r"^(?P<pro>he|she)\s+(?P<rest>.*)$", text, _I):
        return Subject(last_person, "person" if last_person else "other", m["rest"],
                       surface=m["pro"])
    if (m := _NAMED_RELATION.match(text)) and m["noun"].lower() in RELATIONS | PETS | _GROUPS \
            and m["name"].lower() not in _NOT_NAMES \
            and not re.match(r"(?:is|are|was|were)\b", m["rest"]):
        # "Hamid's wife teaches at Oxford", "Dave's sister drives a Tesla", "Ravi's team uses
        # GitLab": the wife's, the sister's, that team's, not Hamid's, Dave's or ours (with a
        # copula the noun is the person's attribute: "Sarah's manager is Tom")
        noun = m["noun"].lower()
        kind = "person" if noun in RELATIONS else "pet" if noun in PETS else "team"
        return Subject(f"{m['name'].lower()}'s {noun}", kind, m["rest"],
                       surface=f"{m['name']}'s {m['noun']}")
    if m := re.match(r"^(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?P<poss>'s?\s+(?P<noun>"
                     + _NOUN_PHRASE + r"))?\s+(?P<rest>(?:" + _VERB
                     + r"|\w+ed\b|[a-z]{2,}(?<!ss)s\b).*)$", text):
        low = m["name"].lower()
        following = (m["rest"].split() or [""])[0]
        # "Ahmed freelances for Globex": a word in -s after a name is its verb (third person;
        # the speaker's own verbs are never in -s), so the name is no verb of the speaker's
        # left without its "I" (it ends like one: "Ahmed", "Jared")
        # "Errors go to Rollbar", "Deploys happen on Fridays": a word in -s before a verb's
        # base form is a plural noun, not a person (a person "goes", "happens")
        plural = low.endswith("s") and " " not in low and not _THIRD_PERSON.match(following) \
            and not re.match(r"(?:\w+ed|is|was|has|had|will|would|can|could|did|does|'s|"
                             # a person's past ("Luis left his old job", "Chris got a dog")
                             r"left|got|took|quit|became|sold|bought|drove|went|made|found|"
                             r"began|ran|won|lost|came)$", following, _I)
        # "Quit pilates, ...", "Sold my drum kit": a word of the speaker's own verbs that is
        # no -ed/-ing form a name may end like is never a name
        verb = " " not in low and _IMPLIED.fullmatch(low) and not re.fullmatch(r"\w+(?:ed|ing)", low) \
            or " " in low and low.split()[0] in _OPENING_VERBS  # "Started Polish lessons"
        if not plural and not verb and (not _IMPLIED.match(text) or _FINITE.match(following)
                                        or _THIRD_PERSON.match(following)) \
                and low.split()[0] not in _NOT_NAMES and low not in RELATIONS | _RELATION_WORDS \
                | _THINGS and attribute_of_noun(low) is None and not low.startswith("favo") \
                and attribute_of_noun(f"{low} {following.lower()}") is None \
                and (category_of(low) is None or low in FIRST_NAMES_TOO):
            name = m["name"].lower()
            return Subject(name, "person", m["rest"], noun=m["noun"], surface=m["name"])
    if m := _EVERYONE.match(text):
        # "Everyone at work uses Slack now", "The whole company is on Teams": the speaker's
        # group as one, the team
        return Subject(TEAM, "team", text[m.end():].strip(), surface=m[0].strip())
    if _OTHERS.match(text):
        # "They switched to Neovim", "Someone on my team moved to Leeds": somebody else's,
        # though nobody we can name; never the speaker's
        return Subject(None, "other", text)
    if re.match(r"^(?:at|with)\s+[A-Z]", text) or re.match(
            r"^(?:(?:also|severely|mildly|very)\s+)?(?:allergic|lactose intolerant|"
            r"gluten intolerant)\b", text, _I):
        # "Currently at Oracle.", "allergic to dust, pollen, and latex": the speaker's
        return Subject(me, "person", "am " + text[:1].lower() + text[1:], surface="I")
    if _IMPLIED.match(text) and not _names_a_thing(text):
        # "Took a full-time offer at Cyberdyne", "been at Initech for years", "Getting up
        # at 7 now": the speaker.
        return Subject(me, "person", _verb_first(text), surface="I")
    if m := re.match(r"^(?P<the>the\s+)?(?:(?P<team>team)'s\s+)?(?P<all>.+)$", text, _I):
        split = _head(m["all"], bare=True)
        if split is not None:
            np, rest = split
            found = _bare(np.removesuffix("'s"), rest, text[: len(text) - len(rest)].strip(),
                          bool(m["the"]), bool(m["team"]), speaker)
            if found is not None:
                return found
    if _IMPLIED.match(text) or re.search(r"\bfor me\b", text, _I):
        # "Took a full-time offer at Cyberdyne", "been at Initech for years", "fish shell
        # for me these days": the speaker.
        return Subject(me, "person", _verb_first(text), surface="I")
    return Subject(None, "none", text)


def _verb_first(text: str) -> str:
    """The predicate of a statement that left its "I" out, its first word in lower case: a
    verb ("Left Acme last month"), never part of the value's name ("Left Acme")."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


_THING_HEADS = frozenset({"service", "services", "app", "apps", "team", "system", "platform",
                          "pipeline", "portal", "api", "database", "site", "tool"})


def _names_a_thing(text: str) -> bool:
    """ "billing service moved to Postgres", "alerting moved to Sentry": the -ing word heads a
    noun that is the subject, not the speaker's verb."""
    split = _head(text, bare=True)
    if split is None:
        return False
    np = split[0].lower()
    return attribute_of_noun(np) is not None or np.split()[-1] in THINGS | _THING_HEADS


def _bare(np: str, rest: str, surface: str, the: bool, team: bool, speaker: str | None
          ) -> Subject | None:
    """A subject without "my"/"our": "Mom turned 59", "CI is on Buildkite now", "the
    billing service uses Postgres", "billing service moved to Postgres"."""
    # "CI for us is GitHub Actions": the team's CI ("for me": the speaker's)
    if m := re.match(r"^(?P<np>.+?)\s+for\s+(?P<who>us|me|our team|the team)$", np, _I):
        np, team = m["np"], team or m["who"].lower() != "me"
    np = np.lower()
    words = np.split()
    if np in ("work", "job") and re.match(r"(?:is|'s)\s+(?:at|with|for)\s", rest, _I):
        return Subject(speaker.lower() if speaker else USER, "person", rest, noun=np,
                       surface=surface)  # "Work is at a small agency called Pixelhaus"
    if words[0] in _NOT_SUBJECTS and attribute_of_noun(np) is None:
        return None
    if np in ("team", "company", "whole team", "office") or team and np == "team":
        return Subject(TEAM, "team", rest, surface=surface)
    if np in RELATIONS or np in _RELATION_WORDS:
        return Subject(_relation(np, speaker), "person", rest, surface=surface)
    noun = np if attribute_of_noun(np) else re.sub(
        r"^(?:(?:new|current|main|primary|daily|usual|default|work|personal|home|old|company)\s+)+",
        "", np)
    attr = attribute_of_noun(noun)
    if attr is not None:
        owner = TEAM if team or INVENTORY[attr].about == "thing" or \
            (speaker is None and attr in _TEAM_ATTRIBUTES) else \
            (speaker.lower() if speaker else USER)
        return Subject(owner, "team" if owner == TEAM else "person", rest, noun=noun,
                       surface=surface)
    if np.startswith("favo") and len(words) > 1:
        return Subject(speaker.lower() if speaker else USER, "person", rest, noun=np,
                       surface=surface)
    if the or len(words) >= 2 or np in _THINGS:
        return Subject(np, "thing", rest, surface=surface)
    return None


def attribute_of_noun(noun: str) -> str | None:
    """The inventory attribute a noun names ("CI", "sprints", "home"), or None."""
    attr = canonical_attribute(noun)
    return attr if attr in INVENTORY else None


# Copulas and auxiliaries: where a subject ends, when one is there.
_AUX_ONLY = re.compile(r"(?:is|are|was|were|has|have|had|will|would|can|could|should|does|"
                       r"did|do|am|'s|isn't|aren't|wasn't|hasn't|haven't)$", _I)
_VERB_ONLY = re.compile(_VERB + r"$|\w+ed$", _I)
# A verb in the third person, not a plural or a possessive ("eats", "cycles", "teaches").
_THIRD_PERSON = re.compile(r"^[a-z]{2,}(?<!ss)(?<!'s)s$")
# A finite verb right after a capitalised word makes it a name, even one that ends like an
# implied verb ("Ahmed takes the tube", "Sterling lives in Leeds": not "Started at Google").
_FINITE = re.compile(r"^(?!(?:just|also|now|still|recently|finally|really|always|never|"
                     r"usually|actually|currently|only|already|officially)$)" + _VERB + "$", _I)


def _head(words_text: str, bare: bool = False) -> tuple[str, str] | None:
    """(subject words, predicate) of a clause whose subject is a noun phrase of up to four
    words: it ends before the first copula or auxiliary ("mobile releases are ...", "team
    chat is ..."), else before the first verb ("my wife drives to work", "our Node services
    use Sequelize")."""
    words = words_text.split()
    # A subject never runs past a comma ("Standup moved again, it's async": the subject is
    # "Standup", not "Standup moved again, it").
    comma = next((i + 1 for i, w in enumerate(words) if w.endswith(",")), len(words))
    if len(words) > 2 and words[0].lower() in RELATIONS | PETS | _RELATION_WORDS and (
            _THIRD_PERSON.match(words[1]) or _FINITE.match(words[1])
            or re.fullmatch(r"[a-z]{2,}ed", words[1])):
        # "my roommate eats meat again", "Dad sold his truck": after a person's relation a
        # word in -s or -ed, or a verb a name takes, is its verb, whatever the verb (the lists
        # above cannot hold them all)
        return words[0], " ".join(words[1:])
    for i, w in enumerate(words[1:min(5, comma) - 1], 1):
        # "Our team basically lives in Slack": an adverb before the verb ends the subject (of
        # a noun phrase: "Do not really write Java" has none)
        nxt = words[i + 1].strip(",.")
        noun = not _NO_NOUN.intersection(x.lower() for x in words[:i])
        if w.lower() in _ADVERBS and noun and (_THIRD_PERSON.match(nxt) or _FINITE.match(nxt)
                                               or _AUX_ONLY.match(nxt)):
            return " ".join(words[:i]), " ".join(words[i:])
    for test in (_AUX_ONLY, _VERB_ONLY if not bare else re.compile(_BARE_VERB + r"$", _I)):
        for i, w in enumerate(words[:min(5, comma)]):
            if i > 0 and (test.match(w.strip(",.")) or
                          bare and test is not _AUX_ONLY and _past_after_noun(words, i)):
                return " ".join(words[:i]), " ".join(words[i:])
    return None


_DETERMINERS = frozenset("the a an our my your their his her its this that these those".split())
_NO_NOUN = frozenset("do does did not don't doesn't didn't i we you they he she it never "
                     "can can't will won't".split())
_ADVERBS = frozenset("basically mostly mainly just really literally actually usually "
                     "pretty totally practically".split())


def _past_after_noun(words: list[str], i: int) -> bool:
    """ "team voted to move", "billing crashed": a word in -ed after a noun is its verb (after
    a determiner it is an adjective: "the shared drive")."""
    return bool(re.fullmatch(r"[a-z]{2,}ed", words[i])) and \
        words[i - 1].lower() not in _DETERMINERS


# Others the speaker's team deals with: "our biggest competitor migrated to Snowflake" is
# theirs, never the team's.
_THEIR_OWN = re.compile(r"\b(?:competitors?|rivals?|clients?|customers?|vendors?|suppliers?|"
                        r"partners? compan(?:y|ies)|investors?|acquirers?|parent company)$", _I)


# "is Octopus", "'s Brakes now": a copula and a name
_NAMED_AS = re.compile(r"^(?:is|are|'s)\s+(?:now\s+)?(?-i:[A-Z])", _I)


def _possessed(who: str, np: str, noun2: str | None, rest: str, surface: str,
               speaker: str | None) -> Subject:
    owner = _owner(who, speaker)
    if _THEIR_OWN.search(np) and not noun2:
        if _NAMED_AS.match(rest):
            # "my energy supplier is Octopus", "our main supplier is Brakes": who it is, a
            # fact of the owner's (what it does is its own: "our biggest client moved to AWS")
            return Subject(owner, "team" if owner == TEAM else "person", rest, noun=np,
                           surface=surface)
        return Subject(None, "other", rest, surface=surface)
    named = re.fullmatch(r"(?P<rel>.+?)\s+(?P<name>[A-Z][a-z]+)", np)
    if named and (named["rel"].lower() in RELATIONS | PETS
                  or (role(named["rel"], known=True) and category_of(named["name"]) is None)) \
            and named["name"].lower() not in _NOT_NAMES:
        # "my sister Anna works at Google", "my best friend Jake lives in Miami", "my daughter
        # Emma's favourite food is ...": the person (or pet) named, as a later "Jake moved to
        # ..." is; a later "my sister ..." finds her through the memory that named her
        # (known.align). So is one named after a job ("our new barista Leah lives out in
        # Newport": Leah's home, not ours), unless the name is a thing's ("my editor Vim").
        return Subject(named["name"].lower(), "pet" if named["rel"].lower() in PETS
                       else "person", rest, noun=noun2, surface=surface)
    np = np.lower()
    if np in _GROUPS:
        # "our team's CI is X" / "my team uses Jira": the team.
        if noun2:
            return Subject(TEAM, "team", rest, noun=noun2, surface=surface)
        return Subject(TEAM, "team", rest, surface=surface)
    if np in ROLE_OF and (noun2 or "").lower() == "name":
        # "my partner's name is Alex": the owner's partner, as "my partner is Alex" is
        return Subject(owner, "person", rest, noun=ROLE_OF[np], surface=surface)
    if np in RELATIONS or np in PETS:
        entity = _relation(np, speaker) if np in RELATIONS else np
        kind = "person" if np in RELATIONS else "pet"
        if noun2:  # "my wife's employer is ..."
            return Subject(entity, kind, rest, noun=noun2, surface=surface)
        return Subject(entity, kind, rest, noun=None, surface=surface)
    if noun2:
        # "our backend's database is ...": the thing's attribute.
        return Subject(np, "thing", rest, noun=noun2, surface=surface)
    return Subject(owner, "team" if owner == TEAM else "person", rest, noun=np,
                   surface=surface)


# Nouns for all of one's things at once, no attribute of their own ("our stuff is all on AWS").
_ALL_THINGS = frozenset({"stuff", "things", "everything", "all our stuff", "all of it"})


def attribute_named(noun: str, value: str | None) -> str | None:
    """The attribute "my <noun> is <value>" states, or None (then <noun> is a thing)."""
    attr = canonical_attribute(noun)
    if value is not None and re.fullmatch(r"(?:(?:personal|work|private|home)\s+)?e-?mail",
                                          noun, _I) and \
            re.match(r"(?:is\s+)?(?:on|with|through)\s+[A-Z]", value):
        # "my email is on Yahoo": the provider, as "my email provider is Yahoo" says it (an
        # address is never "on" anything)
        return canonical_attribute("email provider" if attr == "email" else noun)
    if noun.lower() in _THINGS | _ALL_THINGS:
        return None  # "our frontend is Angular", "our stuff is all on AWS": the subject
    if value is not None and (attr not in INVENTORY or attr == "phone_number") and \
            not re.search(r"\b(?:dream|ideal|next|first|old|previous|former|future)\b", noun, _I) \
            and category_of(re.sub(r"^(?:is|are)\s+", "", value, flags=_I)) in PERSONAL:
        # "my daily driver is a Honda Civic", "my cell is a Pixel 8": a noun that names no
        # kind of value the thing named is: the thing's kind decides (`triples`)
        return None
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
