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


# (name, "one" | "many", description for model prompts, aliases, about). Grow it by adding a
# row: a new kind of fact, or an alias a model or a phrasing uses for an existing one. The
# names are a contract (benchmarks label with them): rename only with an alias left behind.
INVENTORY_ROWS: tuple[tuple[str, str, str, tuple[str, ...], str], ...] = (
    # -- a person: identity and life
    ("name", "one", "what they are called, the name to use for them",
     ("first_name", "full_name", "preferred_name", "called"), "person"),
    ("age", "one", "how old they are", ("years_old",), "person"),
    ("birthday", "one", "their date of birth or birthday",
     ("date_of_birth", "dob", "birth_date", "birthdate"), "person"),
    ("pronouns", "one", "their pronouns", ("pronoun",), "person"),
    ("email", "one", "their email address", ("email_address", "e_mail", "mail"), "person"),
    ("phone_number", "one", "their phone number",
     ("mobile_number", "telephone_number", "cell_number", "phone_no", "cell", "number",
      "phone_num"), "person"),
    ("location", "one", "where they live now",
     ("city", "home", "residence", "current_city", "lives_in", "current_location",
      "home_city", "based_in", "living_in", "where_they_live", "place_of_residence",
      "home_base", "base"),
     "person"),
    ("hometown", "one", "where they grew up or come from",
     ("home_town", "origin", "from", "birthplace", "place_of_birth", "grew_up_in"), "person"),
    ("employer", "one", "the company or organisation they work for now",
     ("company", "workplace", "works_at", "work_place", "organization", "company_name",
      "current_employer", "job_company", "works_for"), "person"),
    ("occupation", "one", "their job title or role",
     ("job", "role", "title", "job_title", "position", "profession", "career", "work_role",
      "day_job"),
     "person"),
    ("manager", "one", "who their manager is",
     ("supervisor", "line_manager", "reports_to", "boss"), "person"),
    ("partner", "one", "spouse, boyfriend or girlfriend",
     ("spouse", "husband", "wife", "boyfriend", "girlfriend", "significant_other",
      "married_to", "dating", "other_half", "better_half", "hubby", "wifey"), "person"),
    ("relationship_status", "one", "single, married, engaged, divorced...",
     ("marital_status",), "person"),
    ("school", "one", "the school or university they attend now",
     ("university", "college", "current_school", "studies_at", "uni"), "person"),
    ("field_of_study", "one", "what they study (their major or degree subject)",
     ("major", "degree", "study_field"), "person"),
    ("learning", "one", "what they are learning now",
     ("currently_learning", "learning_language"), "person"),
    # -- a person: tools and setup (one at a time)
    ("editor", "one", "the code or text editor or IDE they use",
     ("ide", "text_editor", "code_editor"), "person"),
    ("os", "one", "the operating system they use",
     ("operating_system", "distro", "linux_distro"), "person"),
    ("shell", "one", "the command-line shell they use", ("command_shell",), "person"),
    ("browser", "one", "the web browser they use", ("web_browser",), "person"),
    ("terminal", "one", "the terminal emulator they use", ("terminal_emulator",), "person"),
    ("phone", "one", "the phone model they have", ("phone_model", "smartphone",
                                                      "mobile_phone", "mobile", "cellphone",
                                                      "handset"),
     "person"),
    ("laptop", "one", "the computer they use", ("computer", "laptop_model", "machine"),
     "person"),
    ("car", "one", "the car they drive", ("vehicle", "car_model", "ride", "whip"), "person"),
    ("keyboard_layout", "one", "qwerty, dvorak, colemak...", ("layout",), "person"),
    ("notes_app", "one", "the app they take notes in", ("note_taking_app", "notes"),
     "person"),
    ("password_manager", "one", "the password manager they use", (), "person"),
    ("theme", "one", "dark or light mode", ("color_scheme", "ui_theme", "display_mode",
                                           "dark_mode", "light_mode", "editor_theme",
                                           "color_theme", "colour_theme", "colorscheme"), "person"),
    ("terminal_multiplexer", "one", "tmux, screen, zellij...", ("multiplexer",), "person"),
    ("python_package_manager", "one", "pip, poetry, uv, conda...", (), "person"),
    ("js_package_manager", "one", "npm, yarn, pnpm...", (), "person"),
    # -- a person: habits
    ("diet", "one", "vegetarian, vegan, keto...", ("dietary_preference", "diet_type",
                                                   "eating_habits", "eating_style"), "person"),
    ("timezone", "one", "their time zone", ("time_zone", "tz"), "person"),
    ("answer_language", "one", "the language they want answers in",
     ("response_language", "reply_language"), "person"),
    ("work_hours", "one", "when they work", ("working_hours", "office_hours", "hours",
                                              "work_schedule", "shift"), "person"),
    ("wake_time", "one", "when they get up", ("wake_up_time", "wakeup_time", "wake_up",
                                              "alarm"), "person"),
    ("bedtime", "one", "when they go to bed", ("bed_time", "sleep_time"), "person"),
    ("gym_schedule", "one", "when they work out", ("workout_schedule", "exercise_schedule",
                                                   "gym_days", "gym", "workouts", "workout",
                                                   "training_schedule"), "person"),
    ("commute", "one", "how they get to work", ("commute_mode", "transport"), "person"),
    # -- a person: several values at once
    ("likes", "many", "things they like, love or enjoy (one key per thing)",
     ("like", "loves", "enjoys"), "person"),
    ("dislikes", "many", "things they dislike or hate (one key per thing)",
     ("dislike", "hates"), "person"),
    ("languages_spoken", "many", "languages they speak",
     ("languages", "spoken_languages", "speaks", "language_spoken"), "person"),
    ("allergies", "many", "what they are allergic to", ("allergy", "allergic_to"), "person"),
    ("pets", "many", "their pets by name, else kind", ("pet",), "person"),
    ("hobbies", "many", "their hobbies and sports", ("hobby", "sports", "sport", "pastimes"),
     "person"),
    ("skills", "many", "what they know how to do",
     ("skill", "knows", "expertise"), "person"),
    ("children", "many", "their children, by name", ("kids", "child", "sons", "daughters"),
     "person"),
    ("uses", "many", "tools used side by side",
     ("use", "tools", "tool", "software", "apps", "using"), "person"),
    # -- a team, project or system (one at a time)
    ("language", "one", "the main programming language",
     ("programming_language", "main_language", "primary_language", "written_in"), "thing"),
    ("framework", "one", "the backend or web framework",
     ("web_framework", "backend_framework"), "thing"),
    ("frontend_framework", "one", "the frontend framework", ("ui_framework",), "thing"),
    ("database", "one", "the main database", ("db", "datastore", "primary_database",
                                              "data_store"), "thing"),
    ("orm", "one", "the ORM", (), "thing"),
    ("ci", "one", "the CI system", ("ci_cd", "ci_system", "continuous_integration", "cicd",
                                    "builds", "pipelines", "pipeline"), "thing"),
    ("cloud", "one", "where it is hosted",
     ("hosting", "hosting_provider", "cloud_provider", "hosted_on", "host"), "thing"),
    ("package_manager", "one", "the package manager", ("packages", "dependencies",
                                                       "dependency_management"), "thing"),
    ("issue_tracker", "one", "where tickets and issues are tracked",
     ("tickets", "ticket_tracker", "bug_tracker", "task_tracker", "project_tracker",
      "issues", "backlog", "bugs", "ticketing_system", "ticketing",
      "project_management_tool", "pm_tool"), "thing"),
    ("chat_tool", "one", "the team chat", ("chat", "team_chat", "messaging", "messaging_app",
                                            "chat_app", "comms_tool", "comms", "team_comms"), "thing"),
    ("code_host", "one", "where the code is hosted (GitHub, GitLab...)",
     ("repo_host", "git_host", "vcs_host", "source_control", "repository_host", "repos",
      "repo", "repositories", "code", "source_code", "codebase", "vcs",
      "version_control"), "thing"),
    ("deploy_day", "one", "the day deploys happen", ("deployment_day", "release_day",
                                                     "deploys", "deployments", "deploy"),
     "thing"),
    ("standup_time", "one", "when standup is", ("standup", "daily_standup", "standups",
                                                "stand_up"), "thing"),
    ("sprint_length", "one", "how long a sprint is", ("sprint_duration", "sprints", "sprint"),
     "thing"),
    ("release_schedule", "one", "how often releases happen",
     ("release_cadence", "release_cycle", "releases"), "thing"),
    ("branch_strategy", "one", "the branching model", ("branching_strategy",
                                                       "branching_model", "git_workflow"),
     "thing"),
    ("testing_framework", "one", "the test framework",
     ("test_framework", "test_runner", "tests", "test_suite", "e2e_tests", "unit_tests",
      "end_to_end_tests", "testing"), "thing"),
    ("monitoring", "one", "the monitoring or observability tool",
     ("observability", "apm", "alerting", "alerts", "observability_stack",
      "observability_tool", "monitoring_tool", "error_tracking", "error_monitoring"), "thing"),
    ("auth_provider", "one", "the authentication provider",
     ("auth", "authentication", "identity_provider", "sso", "login", "sign_in", "signin"),
     "thing"),
)


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
    "granny": "grandmother", "nana": "grandmother", "grandpa": "grandfather",
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
# "my wife" is the speaker's: `wife`; "his wife" is someone else's and keeps its words.
_DETERMINER = re.compile(r"^(?:the|a|an|my|our)\s+", re.IGNORECASE)


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

