"""Which place a statement names: the one its subject already has.

The same frames read an employer, a school and a gym ("Mia started at St Joseph's this term",
"Nora's at Bright Horizons now", "I joined a crossfit box called Ironhouse"): the rules key
them by the wording's usual sense, an employer. When the wording does not say which (no word
of work, school or training) and the subject has a known school or gym and no employer, the
statement gives a new value of that one, so the fact model supersedes it ("My daughter
Mia goes to Oakwood Primary" ... "Mia started at St Joseph's"). A wording that does say
which keeps its own reading, unless it says the one the subject has ("I joined Movement,
the climbing gym down the street" after "I go to Planet Fitness"). Only the usual sense
gives way: a gym or school the rules read by its name ("I go to Planet Fitness") stays one
whatever is known.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from recall_core.contracts import KnownFact

_I = re.IGNORECASE

#: The attributes one frame reads, and the words that say which one a statement means.
SAYS = {
    "employer": re.compile(r"\b(?:work|job|employ|hired|company|firm|office|intern|shift)\w*",
                           _I),
    "school": re.compile(r"\b(?:school|class|pupil|student|grade|semester|term|daycare|"
                         r"nursery|preschool|kindergarten|college|uni|university)\w*", _I),
    "gym": re.compile(r"\b(?:gym|membership|member|workout|training|lifting|climbing|"
                      r"crossfit)\b", _I),
}


def known_place(entity: str, attribute: str, clause: str, known: Sequence[KnownFact]) -> str:
    """The attribute a place statement about `entity` gives a new value of."""
    if attribute != "employer":
        return attribute
    have = {k.attribute for k in known if k.entity == entity and k.attribute in SAYS}
    if attribute in have or len(have) != 1:
        return attribute
    said = [a for a, words in SAYS.items() if words.search(clause)]
    if not said or said == list(have):
        return have.pop()
    return attribute
