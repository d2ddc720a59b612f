"""The words that say a value was given up, in one place.

Seven rules read them (a cue that something changed, the value a change ends, the value a
swap replaces, a subject's verb, ...). Each kept its own list, so a word taught to one was
unknown to the others: "We ditched Teams for Slack" was a swap while "We dumped Teams for
Slack" kept Teams current. The rules now build their patterns from these alternations, so
the vocabulary grows here and reaches all of them.

`DISCARDED`: past forms that end the value they name ("dumped LastPass", "scrapped the
monolith"); every word here reads the same in all seven rules. A word that ends a value
only in some frames ("left", "moved", "switched", "over") stays in the rule that knows
its frame.
"""

from __future__ import annotations

#: Regex alternation (no groups) of past forms that end the value they name.
DISCARDED = (r"ditched|dumped|dropped|scrapped|binned|axed|junked|abandoned|"
             r"got rid of|gave up(?: on)?|given up(?: on)?|kicked out|phased out|"
             r"decommissioned|deprecated|sunsetted|retired|killed off|killed|"
             r"said goodbye to|waved goodbye to|bid farewell to|parted ways with|"
             r"walked away from|moved on from|ripped out|tore out|torn out|"
             r"grown out of|grew out of|outgrown|outgrew|lost interest in|"
             r"fell out of love with|fallen out of love with")

#: Past forms of a swap: "<verb> X for/with Y" says X ended and Y is current.
SWAPPED = r"replaced|swapped(?: out)?|traded(?: in)?|exchanged|" + DISCARDED

#: Words that say a value holds now, or changed (a cue the likelier reading and the known
#: facts' readings both need: "Neovim now", "we went with Litestar").
NOW = (r"now|these days|nowadays|currently|at the moment|anymore|no more|instead|switched|"
       r"moved (?:to|over)|migrated|went with|going with|all in on|converted")

#: Words that place a statement in the past ("I used to drive a Civic", "years ago"): no
#: value said with one is current (`kinds`, `known.said_against`).
PAST_SAID = r"used to|back then|years ago|last year"

#: Words that deny what follows ("I haven't switched to VS Code"): no value said with one is
#: current (`kinds.by_kind`, `known.said_against`).
NEGATED = (r"don't|doesn't|didn't|haven't|hasn't|hadn't|isn't|aren't|wasn't|weren't|won't|"
           r"never|not")
