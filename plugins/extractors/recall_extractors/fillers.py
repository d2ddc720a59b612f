"""Words of casual talk that say nothing of a fact, dropped before the rules read a statement.

People pad what they say ("my boss is this guy Pete", "I work from like 7am to 3pm", "all our
repos are on GitHub") and spell one noun several ways ("front end", "front-end"). The rules
read one plain form; the memory keeps the words as said (only the reading is plainer).

* a person introduced by what they are ("this guy Pete", "a woman called Ines") is the name;
* "like" before a number or an amount ("from like 7am", "it's like a 20 min walk");
* "all (of) our X" is "our X" at the start of a statement;
* "front end" / "back end" are "frontend" / "backend"; "my X of choice" is "my X";
* a change said done ("finished migrating to X") is the change ("migrated to X");
* a statement that leaves its owner out of "<attribute>'s" ("name's Kwame") is the speaker's;
* what one was told or found about oneself ("allergist says I'm ...", "turns out I'm ...") is
  said as one's own statement.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_I = re.IGNORECASE

_INTRODUCED = re.compile(r"\b(?i:this|some|a|one)\s+(?i:guy|girl|dude|chap|bloke|lady|woman|man|"
                         r"person|fella|gal|kid)\s+(?:(?i:called|named)\s+)?(?=[A-Z][a-z])")
# "like" as a filler only after a word that takes a number ("from like 7", "is like a 20
# min walk"), never the verb ("I like 90s music").
_LIKE = re.compile(r"\b(from|at|by|is|are|am|was|for|till|until|to|every|about|around|"
                   r"takes?|took)\s+like\s+(?=(?:a\s+|an\s+)?\d)", _I)
_ALL_OF = re.compile(r"^(?:all|all of)\s+(our|my)\s+", _I)
_END = re.compile(r"\b(front|back)[- ]end\b", _I)
# "my terminal of choice" is "my terminal"
_OF_CHOICE = re.compile(r"\b((?:my|our|the)\s+[\w-]+(?:\s[\w-]+)?)\s+of\s+choice\b", _I)
_OWNERLESS = re.compile(r"^([A-Za-z]+)'s\s+(?=\S)")
# "allergist says I'm not allergic to latex anymore", "turns out I'm allergic to shellfish":
# what one was told or found about oneself, said as one's own statement.
_TOLD = re.compile(r"^(?:(?:my|the|our)\s+)?(?:doctor|doc|gp|allergist|dentist|vet|boss|manager|"
                   r"tests?|results?|blood work)\s+(?:says|said|confirmed|told me)\s+(?:that\s+)?"
                   r"|^(?:turns out|it turns out|apparently|found out|just found out)\s+(?:that\s+)?",
                   _I)


# "finished migrating to CockroachDB", "just wrapped up moving to Leeds": the change done, as
# "migrated to", "moved to" say it
_DONE_ING = re.compile(r"\b(?:finished|completed|done|wrapped up)\s+(?P<v>migrat|mov|switch|port|"
                       r"transition|upgrad|relocat|convert)ing\b", _I)
_PAST = {"migrat": "migrated", "mov": "moved", "switch": "switched", "port": "ported",
         "transition": "transitioned", "upgrad": "upgraded", "relocat": "relocated",
         "convert": "converted"}


def drop_fillers(text: str, names_attribute: Callable[[str], bool]) -> str:
    """`text` without the fillers above; `names_attribute(word)` says whether a word is an
    attribute of a person ("name", "birthday")."""
    out = _INTRODUCED.sub("", text)
    out = _LIKE.sub(r"\1 ", out)
    out = _ALL_OF.sub(r"\1 ", out)
    out = _END.sub(lambda m: m[1] + "end", out)
    out = _OF_CHOICE.sub(r"\1", out)
    out = _DONE_ING.sub(lambda m: _PAST[m["v"].lower()], out)
    if (m := _TOLD.match(out)) and re.match(r"(?:i|i'm|i've|im)\b", out[m.end():], _I):
        out = out[m.end():]
        out = out[:1].upper() + out[1:]
    if (m := _OWNERLESS.match(out)) and names_attribute(m[1].lower()):
        out = f"{'My' if m[1][0].isupper() else 'my'} {m[1]} is {out[m.end():]}"
    return out
