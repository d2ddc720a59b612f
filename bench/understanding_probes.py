"""Quick probes of the offline extractor, in process (no server, no storage): two kinds of
small sets of my own in bench/understanding/probes/, used as extra **tune** sets (never as
held-out: they were written while tuning, see bench/RESULTS.md "Understanding a change,
seventh round").

    python bench/understanding_probes.py                 # every set
    python bench/understanding_probes.py others_4 changes_2 -v

* `others_*.txt`: one statement a line, about someone else or not a standing fact ("She left
  Acme.", "I'm in Lisbon on holiday."), extracted with a dozen of the user's and the team's
  facts known (`KNOWN`). Counted: statements that write any key of a known fact (lower is
  better; a restatement of the same value counts too, so read the -v lines).
* `changes_*.txt`: `first text || later text` a line. The first is extracted alone, its facts
  become the known ones, the later is extracted with them. Counted: pairs where the later
  text gives one of the first's keys another value (higher is better; a new value of a
  many-valued fact, such as a second pet, counts as a miss, so read the -v lines).
* `keys_*.txt`: `text | entity attribute` a line: one statement and the fact it states.
  Counted: statements with a fact of that entity and attribute (before its `:`).
* `ends_*.txt`: `first text || later text | word` a line: the later text ends the value of
  the first's many-valued facts whose key holds `word`. Counted: pairs with that ending.
* `compound_*.txt`: `text | terms ; terms ...` a line: the statements one text makes.
  Counted: texts where each statement's terms (`a|b`: either; every word of the one taken)
  are in a memory of its own.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from recall_core.contracts import KnownFact as K

SETS = Path(__file__).resolve().parent / "understanding" / "probes"

# With the text of the memory that states each, as the worker gives them (memory.known).
KNOWN = [K("user", "location", "Berlin", "I live in Berlin."),
         K("user", "employer", "Acme", "I work at Acme."),
         K("user", "editor", "vim", "I use vim."),
         K("user", "commute", "bus", "I take the bus to work."),
         K("user", "car", "Honda Civic", "I drive a Honda Civic."),
         K("user", "diet", "vegan", "I'm vegan."),
         K("user", "manager", "Priya", "My manager is Priya."),
         K("user", "os", "Ubuntu", "I run Ubuntu."),
         K("team", "database", "Postgres", "We use Postgres."),
         K("team", "ci", "Jenkins", "Our CI is Jenkins."),
         K("user", "partner", "Sam", "My partner is Sam."),
         K("user", "phone", "Pixel 7", "I have a Pixel 7."),
         K("team", "code_host", "GitHub", "Our code is on GitHub."),
         K("team", "chat_tool", "Slack", "We chat on Slack."),
         K("team", "cloud", "AWS", "We're on AWS."),
         K("user", "school", "MIT", "I study at MIT.")]


def lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


async def others(ex, path: Path, verbose: bool) -> tuple[int, int]:
    keys = {(k.entity, k.attribute) for k in KNOWN}
    touched = 0
    for text in lines(path):
        out = [(m.entity, m.attribute, m.value) for m in await ex.extract(text, known=KNOWN)
               if m.attribute]
        hit = any((e, a) in keys for e, a, _ in out)
        touched += hit
        if verbose:
            print(f"  {'CHANGED' if hit else '       '} {text} {out}")
    return touched, len(lines(path))


async def _pair(ex, first: str, later: str) -> tuple[list[K], list[tuple[str, str, str]]]:
    """The first text's facts (as known ones) and the later text's, read with them."""
    # with the text of the memory that states it, as the worker gives them (memory.known)
    known = [K(m.entity, m.attribute, m.value, m.text) for m in await ex.extract(first)
             if m.attribute]
    out = [(m.entity, m.attribute, m.value) for m in await ex.extract(later, known=known)
           if m.attribute]
    return known, out


async def changes(ex, path: Path, verbose: bool) -> tuple[int, int]:
    done = 0
    for line in lines(path):
        first, later = line.split(" || ")
        known, out = await _pair(ex, first, later)
        keys = {(k.entity, k.attribute) for k in known}
        old = {k.value.lower() for k in known}
        hit = any((e, a) in keys and v.lower() not in old for e, a, v in out)
        done += hit
        if verbose:
            print(f"  {'ok  ' if hit else 'MISS'} {first} -> {later} {out}")
    return done, len(lines(path))


async def keys(ex, path: Path, verbose: bool) -> tuple[int, int]:
    done = 0
    for line in lines(path):
        text, want = (x.strip() for x in line.split("|"))
        entity, attribute = want.rsplit(None, 1)  # "billing service language"
        out = [(m.entity, m.attribute, m.value) for m in await ex.extract(text) if m.attribute]
        hit = any(e == entity and a.split(":")[0] == attribute for e, a, _ in out)
        done += hit
        if verbose:
            print(f"  {'ok  ' if hit else 'MISS'} {text} {out}")
    return done, len(lines(path))


async def ends(ex, path: Path, verbose: bool) -> tuple[int, int]:
    from recall_core.kit.attributes import is_ended

    done = 0
    for line in lines(path):
        pair, word = (x.strip() for x in line.rsplit("|", 1))
        first, later = pair.split(" || ")
        _, out = await _pair(ex, first, later)
        hit = any(word in a.lower() and is_ended(v) for _, a, v in out)
        done += hit
        if verbose:
            print(f"  {'ok  ' if hit else 'MISS'} {first} -> {later} {out}")
    return done, len(lines(path))


async def compound(ex, path: Path, verbose: bool) -> tuple[int, int]:
    done = 0
    for line in lines(path):
        text, want = (x.strip() for x in line.split("|", 1))
        parts = [p.strip() for p in want.split(";")]
        texts = [m.text.lower() for m in await ex.extract(text)]

        def holds(part: str, t: str) -> bool:
            # every word of one alternative ("partner meat": both words, in any order)
            return any(all(w in t for w in alt.split()) for alt in part.split("|"))
        hit = all(sum(holds(p, t) for p in parts) <= 1 for t in texts) and \
            all(any(holds(p, t) for t in texts) for p in parts)
        done += hit
        if verbose:
            print(f"  {'ok  ' if hit else 'MISS'} {text} {texts}")
    return done, len(lines(path))


#: How each kind of set is run and what its count says.
_KINDS = {"others": (others, "change a known fact"), "changes": (changes, "changes supersede"),
          "keys": (keys, "keyed as labelled"), "ends": (ends, "end the value"),
          "compound": (compound, "split into their statements")}


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="*", help="set names (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    from recall_extractors import StubSettings, make_stub

    ex = make_stub(StubSettings())
    names = args.sets or sorted(p.stem for p in SETS.glob("*.txt"))
    for name in names:
        path = SETS / f"{name}.txt"
        run, says = _KINDS[name.rsplit("_", 1)[0]]
        n, total = await run(ex, path, args.verbose)
        print(f"{name}: {n} of {total} {says}")


if __name__ == "__main__":
    asyncio.run(main())
