"""Frames of tools, possessions and a team's or system's stack.

"I use vim", "These days I use VS Code for everything", "I switched to Helix" are one fact
because the value's category (`lexicon`) is the attribute: `editor`. A tool with no category
held one at a time by this kind of subject is `uses` (many-valued: one key per tool), and a
stated purpose wins over both ("we use Postgres for storage" -> `database`). Each reading is
a `Reading`: the attribute, the values, and for a change ("switched from X to Y", "replaced X
with Y") the value it replaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from recall_core.kit.attributes import INVENTORY

from . import values as V
from .change_words import SWAPPED
from .lexicon import PERSONAL, attribute_for, category_of, named, purpose_attribute
from .person_frames import AUX
from .typed_values import theirs

_I = re.IGNORECASE


@dataclass(frozen=True)
class Reading:
    attribute: str
    values: list[str]
    #: a value the statement says was replaced ("switched from vim to Helix": vim)
    replaced: list[str] = field(default_factory=list)
    #: what the statement is about when it names it as an object ("we migrated the API to
    #: FastAPI" is about the API), else None: the subject
    about: str | None = None


_USE = re.compile(
    r"^" + AUX + r"(?P<verb>use|uses|using|am using|rely on|relies on|code in|"
    r"write in|program in|develop in|run|runs|am running|running|am on|been on|daily[- ]drive|swear by|"
    r"stick with|stuck with|went with|go with|going with|chose|picked(?! up)|selected|settled on|"
    r"opted for|adopted|prefer|prefers|would rather use|would rather get|would rather|"
    r"am sticking with|have been using|started using|"
    r"browse with|browse in|browse on|type on|type in|keep my notes in|take notes in|"
    r"am typing this on|typing this on|listen on|listen to (?:music|everything|podcasts) on|"
    r"stream (?:music|everything) on|"
    r"added|brought in|introduced|started with|signed up for|subscribe to|pay for|"
    r"installed|set up|went with|run on|"
    r"am trying out|tried out|now use)\s+(?P<v>.+)$", _I)
_SWITCH = re.compile(
    r"^" + AUX + r"(?P<verb>switched|switch|switching|moved|move|moving|migrated|migrate|"
    r"migrating|changed|change|transitioned|went(?= over| back)|converted|upgraded|"
    r"downgraded|jumped ship|"
    r"made the (?:switch|jump|move))\s+(?:over\s+|back\s+|all\s+)?(?:(?:our|my|the)?\s*"
    r"(?!from\b|over\b|back\b|to\b)(?P<what>[\w -]{1,30}?)\s+)?(?:from\s+(?P<from>.+?)\s+)?(?:to|over to|back to|onto|"
    r"into)\s+(?P<v>.+)$", _I)
REPLACE = _REPLACE = re.compile(
    r"^" + AUX + r"(?:" + SWAPPED + r")\s+"
    r"(?P<from>.+?)\s+(?:with|for|in favou?r of)\s+(?P<v>.+)$", _I)
_REWRITE = re.compile(
    r"^" + AUX + r"(?:rewrote|rewritten|rebuilt|ported|reimplemented|moved|migrated|switched|"
    r"converted|put)\s+(?:the|our)\s+(?:(?:whole|entire)\s+)?(?P<what>(?:(?!\bfrom\b)[\w -]){2,30}?)\s+(?:over\s+)?(?:in|to|into|"
    r"onto|on|with)\s+(?P<v>.+)$", _I)
# "is (now) all ...", "has been 100% ...": how wholly the subject is made of it
_WHOLLY = r"(?:now\s+)?(?:all\s+|100%\s+|fully\s+|entirely\s+|pure\s+|mostly\s+)?"
# "the android app is 100% Kotlin now", "billing service is a Java app", "we're a Python
# shop now", "dashboard has been Vue since the rewrite"
_IS_STACK = re.compile(
    r"^" + AUX + r"(?:is|are|has been|have been|became)\s+" + _WHOLLY +
    r"(?:(?:a|an)\s+)?(?P<v>[\w.#+-]+(?:\s(?!now\b|"
    r"these\b|since\b|after\b|at\b|everywhere\b)[\w.#+-]+)?)(?:\s+(?:app|service|shop|codebase|project|house|team|stack|monolith|backend|"
    r"frontend))?(?:\s+(?:now|these days|since .*|after .*|at this point|everywhere))*[.!]?$", _I)
_STACK_KINDS = frozenset({"language", "framework", "frontend_framework", "database", "cloud",
                          "ci", "code_host", "issue_tracker", "chat_tool", "orm",
                          "testing_framework"})
# "our backend is all Python and Django": one value of each kind, each its own fact
_IS_STACKS = re.compile(
    r"^" + AUX + r"(?:is|are|has been|have been)\s+" + _WHOLLY +
    r"(?P<v>[\w.#+-]+(?:\s*,\s*[\w.#+-]+)*\s*,?\s+(?:and|plus|"
    r"with|on|\+)\s+[\w.#+-]+)(?:\s+(?:now|these days))?[.!]?$", _I)


def _stack_list(p: str) -> Reading | None:
    """Two or more stack values of different kinds, each the subject's value of its kind;
    none when any is no stack value or two share a kind (a list, not one of each)."""
    if not (m := _IS_STACKS.match(p)):
        return None
    parts = [v for v in re.split(r"\s*,\s*|\s+(?:and|plus|with|on|\+)\s+", m["v"]) if v]
    kinds = [category_of(v) for v in parts]
    if len(parts) < 2 or any(k not in _STACK_KINDS for k in kinds) or \
            len(set(kinds)) < len(kinds):
        return None
    return Reading("*", parts)


_EVERYTHING = re.compile(r"\beverything(?:'s| is| runs| lives| goes)?\s+(?:on|in|through|to)\s+"
                         r"(?P<v>[^,;.!]+)", _I)
_INSTEAD = re.compile(r"\s+(?:now\s+)?instead of\s+(?P<from>.+)$|\s+(?:over|rather than|"
                      r"more than|than)\s+(?P<other>.+)$", _I)
_OWN = re.compile(
    r"^" + AUX + r"(?:have|has|got|bought|own|owns|drive|drives|am driving|leased|lease|"
    r"picked up|upgraded to|carry|ordered|treated myself to|finally got|got myself)\s+"
    r"(?:(?:an|a|the|my|new|brand new|this|another)\b)?\s*(?:(?:new|used|second-hand|old)\s+)?"
    r"(?P<v>.+)$", _I)
_STACK = (
    (re.compile(r"^" + AUX + r"(?:is|are|was|were|got|has been|have been)\s+(?:re)?(?:written|coded|"
                r"implemented|built|developed|ported|migrated|moved|switched|converted)\s+"
                r"(?:over\s+)?(?:in|with|using|on top of|on|to|onto|into)\s+(?P<v>.+)$", _I), None),
    (re.compile(r"^" + AUX + r"(?:runs|run|is|are)\s+(?:running\s+|hosted\s+|deployed\s+|"
                r"living\s+)?(?:on|in|at|to)\s+(?P<v>.+)$", _I), None),
    (re.compile(r"^" + AUX + r"(?:deploy|deploys|host|hosts)\s+(?:everything\s+|it\s+|"
                r"our (?:\w+ )?)?(?:on|to|in|at|with)\s+(?P<v>.+)$", _I), "cloud"),
    (re.compile(r"^" + AUX + r"(?:track|tracks|log|file|manage|keep|keeps)\s+(?:our\s+|all\s+|the\s+)?"
                r"(?:tickets|issues|bugs|work|tasks|sprints|stories)\s+(?:in|on|with|using)\s+"
                r"(?P<v>.+)$", _I), "issue_tracker"),
    (re.compile(r"^" + AUX + r"(?:talk|chat|communicate|hang out)\s+(?:on|in|over|via|"
                r"through)\s+(?P<v>.+)$", _I), "chat_tool"),
    (re.compile(r"^" + AUX + r"(?:keep|host|store|have)\s+(?:all\s+)?(?:our\s+|the\s+)?"
                r"(?:code|repos|repositories|source)\s+(?:on|in)\s+(?P<v>.+)$", _I),
     "code_host"),
    (re.compile(r"^" + AUX + r"(?:test|tests)\s+(?:everything\s+)?(?:with|using|in)\s+"
                r"(?P<v>.+)$", _I), "testing_framework"),
    (re.compile(r"^" + AUX + r"(?:store|stores|keep|keeps|put|puts|persist|persists)\s+(?:all\s+)?"
                r"(?:its\s+|our\s+|the\s+)?(?:data|everything|events|records)\s+(?:in|on)"
                r"\s+(?P<v>.+)$", _I), None),
)
_SCHEDULES = (
    ("deploy_day", re.compile(r"^" + AUX + r"(?:deploy|deploys|release|releases|ship|ships|"
                              r"push to prod(?:uction)?|go out|goes out)\s+(?:to \w+\s+)?"
                              r"(?:only\s+)?(?:on\s+|every\s+)?"
                              r"(?P<v>(?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b", _I)),
    ("standup_time", re.compile(r"^" + AUX + r"(?:have|hold|do|run|start)\s+(?:our\s+|the\s+)?"
                                r"(?:daily\s+)?stand-?ups?\s+(?:at|every day at)\s+"
                                r"(?P<v>\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\.?)?)", _I)),
    ("sprint_length", re.compile(r"^" + AUX + r"(?:run|do|work in|have|use|moved to|"
                                 r"switched to|went to|changed to|are on)\s+(?P<v>(?:one|"
                                 r"two|three|four|\d)[- ]weeks?)\s+sprints\b", _I)),
    ("release_schedule", re.compile(r"^" + AUX + r"(?:release|releases|ship|ships|(?:cut|do|"
                                    r"push|put out|ship)\s+(?:a\s+|new\s+)*releases?)\s+"
                                    r"(?P<v>weekly|daily|monthly|nightly|quarterly|every "
                                    r"(?:other )?(?:(?:\d+|two|three|four|five|six|seven|eight|"
                                    r"nine|ten|twelve|couple of|few)\s+)?(?:weeks?|months?|"
                                    r"sprints?|days?|quarters?|release train))\b", _I)),
)


def _tool(raw: str) -> tuple[str | None, str | None]:
    """(tool, purpose) of "X for <purpose> ..."."""
    tool = V.value(raw, V.TOOL, 5)
    tool = named(tool) if tool else tool  # "one big Postgres 15 instance": Postgres 15
    purpose = None
    if m := re.search(r"\bfor\s+(?P<p>.+)", raw, _I):
        p = V.value(m["p"], V.TOOL, 4)
        if p and p.lower().split()[0] not in {"now", "a", "years", "ages", "months", "weeks",
                                              "days", "work", "fun", "me", "everything",
                                              "all", "good", "life", "myself", "it"}:
            purpose = p
    return tool, purpose


def _keyed(tool: str, purpose: str | None, person: bool, additive: bool) -> str:
    attr = purpose_attribute(purpose) if purpose else None
    if attr is None or attr == "database" and category_of(tool) not in (None, "database"):
        return attribute_for(tool, person=person, additive=additive)
    return attr


def read(predicate: str, person: bool, additive: bool, verb_ok: bool = True
         ) -> Reading | None:
    """The tool, possession or stack fact the predicate states, or None."""
    p = predicate
    for attribute, pattern in _SCHEDULES:
        if m := pattern.match(p):
            return Reading(attribute, [m["v"]])
    if (m := _REWRITE.match(p)) and not purpose_attribute(m["what"]) and \
            (tool := V.value(m["v"], V.TOOL, 4)) and (category := category_of(tool)):
        return Reading(attribute_for(tool, person=False), [tool], about=m["what"].lower())
    if (m := _SWITCH.match(p) or _REPLACE.match(p)) and (found := _switch(m, person, additive)):
        return found
    if (m := _USE.match(p)) and (found := _use(m, person, additive)):
        return found
    if m := _OWN.match(p):
        tool = V.value(m["v"], V.TOOL, 5)
        tool = named(tool) if tool else tool  # "this beat up Jeep Wrangler": Jeep Wrangler
        category = category_of(tool or "")
        if tool and category in ("car", "phone", "laptop", "os", "keyboard_layout"):
            return Reading(category, [tool])
    if (m := _EVERYTHING.search(p)) and (tool := V.value(m["v"], V.TOOL, 4)) and \
            category_of(tool):
        return Reading(attribute_for(tool, person=person), [tool])
    if not person and (m := _IS_STACK.match(p)) and \
            (category := category_of(m["v"])) in _STACK_KINDS:
        return Reading(category, [m["v"]])
    if not person and (found := _stack_list(p)):
        return found
    if not person:
        for pattern, fixed in _STACK:
            if m := pattern.match(p):
                tool, purpose = _tool(m["v"])
                if not tool:
                    continue
                attr = fixed or category_of(tool)
                if attr:
                    return Reading(attr, [tool])
    return None


def _use(m: re.Match[str], person: bool, additive: bool) -> Reading | None:
    raw, verb = m["v"], m["verb"].lower()
    replaced: list[str] = []
    other = None
    if verb.startswith("prefer") and (pair := re.match(r"(?:to use\s+|using\s+)?(.+?)\s+to\s+(.+)$",
                                                       raw, _I)):
        if not re.match(r"(?:work|be|do|have|get|keep|go|stay)\b", pair[1], _I):
            raw = f"{pair[1]} over {pair[2]}"
    if alt := _INSTEAD.search(raw):
        if alt["from"]:
            replaced = [v for v in [V.value(alt["from"], V.TOOL, 5)] if v]
        else:
            other = V.value(alt["other"], V.TOOL, 5)
        raw = raw[: alt.start()]
    tool, purpose = _tool(raw)
    # "I'm on my brother's laptop", "using her iPad", "went with Sam's old Civic"
    if tool is None or theirs(raw, tool):
        return None
    unpurposed = re.sub(r"\s+for\s+.*$", "", raw, flags=_I) if purpose else raw
    if purpose and (purpose_attribute(purpose) is None
                    or len(V.items(unpurposed, V.LIST, 4)) > 1):
        # "for my side projects" names no attribute; "npm, Cypress for e2e tests" gives the
        # purpose to Cypress alone, not to npm: the list stays a list
        purpose, raw = None, unpurposed
    category = category_of(tool)
    if verb.endswith(("run", "runs", "running", "am on", "been on")) and category is None:
        return None  # "I run marathons", "I'm on it": only known tools count
    if verb.startswith(("prefer", "would")):
        if other is not None:
            return _pair(tool, other, person)
        if category is None and not purpose:
            return None  # "I prefer tea": a taste (many_frames), not a tool
    if other is not None and not verb.startswith(("prefer", "would")):
        return _pair(tool, other, person)
    items = V.items(raw, V.LIST + r"|\s(?:to|in order to)\s+[a-z]", 4) if not purpose else [tool]
    if len(items) > 1:
        # "We use Slack and Jira": tools used side by side, each its own `uses` value; a
        # person's list of one-at-a-time tools ("I use zsh and vim") keeps their categories
        # when no two share one.
        categories = [category_of(v) for v in items]
        if person and all(c in PERSONAL for c in categories) and \
                len(set(categories)) == len(categories):
            return Reading("*", items, replaced)
        return Reading("uses", items, replaced)
    return Reading(_keyed(tool, purpose, person, additive), [tool], replaced)


def _pair(tool: str, other: str, person: bool) -> Reading:
    """ "X over Y": the pair's category when both share one, else a key naming the pair."""
    category = category_of(tool)
    if category and category == category_of(other):
        return Reading(category, [tool])
    from recall_core.kit.attributes import canonical_key

    pair = sorted([canonical_key(tool), canonical_key(other)])
    return Reading("preference:" + "_vs_".join(pair), [tool])


def _switch(m: re.Match[str], person: bool, additive: bool) -> Reading | None:
    tool, purpose = _tool(m["v"])
    if tool is None:
        return None
    old = V.value(re.sub(r"\s+out$", "", m["from"]), V.TOOL, 5) if m["from"] else None
    what = m.groupdict().get("what")
    if purpose is None and what and purpose_attribute(what) in INVENTORY:
        purpose = what  # "we migrated our tickets to Linear"
    attr = _keyed(tool, purpose, person, additive)
    if attr == "uses" and not old and not purpose and category_of(tool) is None and \
            m.groupdict().get("verb", "").lower().startswith(("mov", "went", "chang")):
        return None  # "we moved to a monorepo", "I went to a support group": no tool named
    if attr == "uses" and old and category_of(old) and not additive:
        fallback = category_of(old)
        if fallback in PERSONAL or not person:
            attr = fallback  # "switched from Chrome to <an unknown browser>"
    return Reading(attr, [tool], [old] if old else [])
