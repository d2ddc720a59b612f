"""The fact inventory and the spelling of fact keys: one place for every extractor.

A fact is (entity, attribute, value); the fact model (`facts.py`) supersedes a current value
when a newer statement has the same (entity, attribute). So what a key *means* is a contract
between every extractor (rules, Claude, any OpenAI-compatible model), the import and the
consolidation. It is written here once:

* **Entities** (`canonical_entity`): ``user`` for the speaker, ``team`` for "we" / "our
  team" / "our company"; a person by lowercase name (``sarah``); the speaker's people by
  relation (``wife``, ``boss``; in a transcript line of Caroline: ``caroline's wife``); a
  thing by its lowercase noun phrase without article or possessive ("the billing service" ->
  ``billing service``, "our backend" -> ``backend``).
* **Attributes** (`INVENTORY`, `canonical_attribute`): snake_case names with British
  spellings folded; a known alias becomes its inventory name ("company" -> ``employer``,
  "city" -> ``location``), and so does a name with words that only say when it holds ("new
  car", "favourite band at the moment"); ``favorite_<thing>`` is one attribute per thing. A
  name not in the inventory is kept (snake_case): it is single-valued, like most facts.
* **Cardinality** (`Attribute.many`): a single-valued attribute (location, employer,
  manager, ...) has one current value, and any newer statement replaces it. A many-valued one
  (likes, allergies, pets, languages spoken, ...) holds several: it is stored as one key per
  value, attribute ``<attribute>:<canonical value>`` (``allergies:peanuts``), so two values
  never supersede each other and "I also like tea" only adds one.
* **Ending a value** (`ENDED`): "I'm no longer allergic to peanuts", "I switched from coffee to
  tea" end one value of a many-valued fact. The ended value is a *newer statement of its own
  key* whose value is the fixed word ``ENDED`` ("no longer"): (user, ``likes:coffee``, "no
  longer") supersedes (user, ``likes:coffee``, "coffee"). So the fact model needs no special
  case, history keeps when the value held and when it ended, the statement that ended it stays
  current and searchable ("Do I still drink coffee?" finds it), and a later "I like coffee
  again" supersedes the ending in turn. Extractors write an ending either as that key with
  any of `ENDED_WORDS` as value, or with the value's name as the key's suffix; a bare
  many-valued attribute with an ended word as value names no value and carries no fact. A
  single-valued fact that ends without a successor ("I left Acme") may use the same value.

`normalise_triple` applies all of it, and `facts.normalise` calls it on every write path
(worker, A2A, consolidation, import), so a third-party extractor is held to the same rules.
It is idempotent: a normalised triple normalises to itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .inventory import INVENTORY_ROWS  # the rows: growing the inventory is adding one
from .keys import fold_text, key_form
from .plurals import singular

USER = "user"
TEAM = "team"
#: The value of an ended many-valued fact (and of a single-valued one ended without
#: a successor). Reads as "likes:coffee = no longer".
ENDED = "no longer"
#: Values that mean "ended" in a many-valued key, as rules and models write them.
ENDED_WORDS = frozenset({"no longer", "no", "none", "ended", "not anymore", "no more",
                         "not any more", "false", "stopped", "former", "removed"})



@dataclass(frozen=True)
class Attribute:
    """One kind of fact: its name, whether it holds several values, what it means (a line
    for model prompts) and other names it goes by."""

    name: str
    many: bool
    description: str
    aliases: tuple[str, ...] = ()
    #: who it is usually about: "person" or "thing" (a team, project or system)
    about: str = "person"


INVENTORY: dict[str, Attribute] = {
    row[0]: Attribute(row[0], row[1] == "many", row[2], tuple(row[3]), row[4])
    for row in INVENTORY_ROWS
}
#: Favourites are open-ended ("favorite_color", "favorite_band"): one attribute per thing.
FAVORITE_PREFIX = "favorite_"

# British spellings, and the short forms people type ("my fav food", "fave band").
_BRITISH = {"favourite": "favorite", "favourites": "favorites", "fav": "favorite",
            "fave": "favorite", "favs": "favorites", "faves": "favorites", "colour": "color",
            "colours": "colors", "organisation": "organization", "centre": "center",
            "programme": "program"}

# The speaker's people: one spelling per relation ("my mom" and "Mum" are `mother`).
_RELATION_ALIASES: dict[str, str] = {
    "mom": "mother", "mum": "mother", "mommy": "mother", "mummy": "mother", "ma": "mother",
    "dad": "father", "daddy": "father", "papa": "father", "pa": "father",
    "hubby": "husband", "bf": "boyfriend", "gf": "girlfriend", "grandma": "grandmother",
    "granny": "grandmother", "nana": "grandmother", "nan": "grandmother", "gran": "grandmother",
    "grandpa": "grandfather",
    "granddad": "grandfather", "grandad": "grandfather", "sis": "sister", "bro": "brother",
    "fiancée": "fiance", "fiancé": "fiance", "fiancee": "fiance", "co-worker": "coworker",
    "neighbour": "neighbor", "boss": "boss",
}
_ENTITY_ALIASES: dict[str, str] = {
    "i": USER, "me": USER, "my": USER, "myself": USER, "the user": USER, "user": USER,
    "the speaker": USER, "speaker": USER, "users": USER, "mine": USER,
    "we": TEAM, "us": TEAM, "our": TEAM, "our team": TEAM, "my team": TEAM,
    "the team": TEAM, "team": TEAM, "our company": TEAM, "we (the team)": TEAM,
    "our org": TEAM, "our organization": TEAM, "the company": TEAM, "my company": TEAM,
}
# "my wife" is the speaker's: `wife`; "his wife" is someone else's and keeps its words. "the
# whole service" is the service (but "Whole Foods" keeps its name).
_DETERMINER = re.compile(r"^(?:the|a|an|my|our)\s+(?:(?:whole|entire)\s+)?", re.IGNORECASE)


def _fold(text: str) -> str:
    return fold_text(text).replace("\u2019", "'").replace("\u2018", "'")


def _key(text: str) -> str:  # keys.key_form (NFKC, case fold, no invisible characters), quotes
    return key_form(text).replace("\u2019", "'").replace("\u2018", "'")


def canonical_key(text: str) -> str:
    """snake_case key: lowercase, British spellings folded, possessive 's dropped, separators
    collapsed. Keeps `:` (namespaced keys), `+`, `#` and `.` (c++, c#, node.js)."""
    text = _key(text).replace("'s ", " ").replace("'s_", "_")
    if text.endswith("'s"):
        text = text[:-2]
    words = [_BRITISH.get(w, w) for w in re.split(r"[\s_\-]+", text)]
    key = re.sub(r"[^a-z0-9:+#.@/]+", "_", "_".join(words))
    return re.sub(r"_+", "_", key).strip("_.")


def canonical_entity(entity: str) -> str:
    """`user` for the speaker, `team` for "we", else the lowercase name or noun phrase
    without article or possessive ("The Billing Service" -> "billing service")."""
    key = _key(entity).strip(" .,:;!?\"'`")
    if key in _ENTITY_ALIASES:
        return _ENTITY_ALIASES[key]
    bare = _DETERMINER.sub("", key).strip() or key
    owner, sep, relation = bare.rpartition("'s ")
    if sep:  # "caroline's mom" -> "caroline's mother"
        return f"{owner}'s {_RELATION_ALIASES.get(relation, relation)}"
    return _ENTITY_ALIASES.get(bare) or _RELATION_ALIASES.get(bare, bare)


_ALIASES: dict[str, str] = {}
for _attr in INVENTORY.values():
    for _alias in (_attr.name, *_attr.aliases):
        _ALIASES.setdefault(canonical_key(_alias), _attr.name)


def canonical_attribute(attribute: str) -> str:
    """The inventory name of an attribute (aliases folded: "Company" -> "employer",
    "favourite colour" -> "favorite_color"), keeping a `:<value>` suffix as it is; an unknown
    name stays as its snake_case key."""
    key = canonical_key(attribute)
    base, sep, suffix = key.partition(":")
    base = _ALIASES.get(base, base)
    if base not in INVENTORY:
        bare = _ALIASES.get(_TIMELY.sub("", base), _TIMELY.sub("", base))
        base = bare if bare in INVENTORY or bare.startswith(FAVORITE_PREFIX) else base
    if base.startswith(FAVORITE_PREFIX):
        # "favorite coffee place" and "favorite coffee shop" are one favourite
        base = re.sub(r"(?<=.)_(?:place|spot|joint)$", "_shop", base)
        # ... and so are a favourite film and a favourite movie
        thing = base[len(FAVORITE_PREFIX):]
        base = FAVORITE_PREFIX + _SAME_FAVORITE.get(thing, thing)
    return f"{base}{sep}{suffix}" if sep else base


# Words for one kind of favourite (the first person says "film", the next "movie").
_SAME_FAVORITE = {"film": "movie", "tv_show": "show", "tv_series": "show", "series": "show",
                  "tv_programme": "show", "tv_program": "show", "track": "song",
                  "novel": "book", "dish": "food", "meal": "food", "beverage": "drink",
                  "footballer": "football_player", "soccer_team": "football_team"}

_TIMELY = re.compile(r"^(?:new|current|latest|present)_|_(?:now|at_the_moment|these_days|nowadays)$")


def base_attribute(attribute: str) -> str:
    """The part before the first ':' (what benchmarks and the inventory compare)."""
    return attribute.split(":", 1)[0]


def is_many(attribute: str) -> bool:
    """True when the attribute (or the base of a `<attribute>:<value>` key) holds several
    current values."""
    found = INVENTORY.get(base_attribute(canonical_attribute(attribute)))
    return found is not None and found.many


def is_ended(value: str | None) -> bool:
    return value is not None and _fold(value).lower().strip(" .!") in ENDED_WORDS


_ARTICLE = re.compile(r"^(?:the|a|an|my|our|some)\s+", re.IGNORECASE)


def value_key(value: str) -> str:
    """The key form of a value, for `<attribute>:<value>` ("Peanuts" -> "peanut", "a Golden
    Retriever" -> "golden_retriever"). The last word is made singular (crudely: a key only
    has to be the same for "peanut" and "peanuts", and a model may capitalise either), so
    "a peanut allergy" and "allergic to peanuts" meet; the stored value keeps its spelling."""
    text = _ARTICLE.sub("", _key(value)).strip(" .,!?\"'`")
    words = text.split()
    if words and words[-1].isalpha():
        words[-1] = singular(words[-1])
    return canonical_key(" ".join(words))


def clean_value(value: str) -> str:
    """The value as written, minus surrounding quotes, end punctuation and a leading article."""
    value = _fold(value).strip(" \t\"'`*_")
    value = re.sub(r"[.!?,;:]+$", "", value).strip(" \"'`")
    return _ARTICLE.sub("", value) if len(value.split()) > 1 else value


# An attribute named for a place one goes to, given a time instead of a name: the time is
# when one goes ("gym = Tuesdays and Thursdays" is the gym_schedule; "gym = Equinox" the gym).
_WHEN_OF = {"gym": "gym_schedule"}
_DAYS = (r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mon|tue|tues|wed|thu|thur|thurs|fri|"
         r"sat|sun|weekdays?|weekends?")
_WHEN_WORD = re.compile(r"\b(?:" + _DAYS + r"|mornings?|evenings?|afternoons?|nights?|lunch|"
                        r"lunchtime|noon|midnight|dawn|daily|weekly|every|after work|"
                        r"before work)\b|"
                        r"^(?:(?:at|by|around|from|before|after)\s+)?\d{1,2}(?:[:.]\d\d)?\s*"
                        r"(?:[ap]\.?m\.?)?$|"
                        r"\b\d{1,2}(?:[:.]\d\d)?\s*[ap]\.?m\b|\b\d{1,2}[:.]\d\d\b", re.IGNORECASE)


def _is_when(value: str) -> bool:
    """A time or a schedule ("7", "Tuesdays and Thursdays", "in the evenings"), not a name
    ("24 Hour Fitness", "Equinox")."""
    named = [w for w in re.findall(r"\b[A-Z][\w'-]*", value)
             if not re.fullmatch(_DAYS, w, re.IGNORECASE)]
    return bool(_WHEN_WORD.search(value)) and not named


def normalise_triple(entity: str | None, attribute: str | None, value: str | None
                     ) -> tuple[str, str, str] | None:
    """The canonical (entity, attribute, value), or None when the triple is incomplete or
    names no value (see the module docstring for every rule)."""
    if not entity or not attribute or value is None:
        return None
    ent, attr, val = canonical_entity(str(entity)), canonical_attribute(str(attribute)), \
        clean_value(str(value))
    if not ent or not attr or not val:
        return None
    base, _, suffix = attr.partition(":")
    if not base:
        return None
    if base in _WHEN_OF and not suffix and _is_when(val):
        attr = base = _WHEN_OF[base]
    if is_many(base):
        ended = is_ended(val)
        if not suffix:
            if ended:
                return None  # "allergies = none" says which value ended? no: no fact
            suffix = value_key(val)
        if not suffix:
            return None
        attr = f"{base}:{value_key(suffix)}"
        if ended:
            val = ENDED
    return ent, attr, val

