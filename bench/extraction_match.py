"""The matcher of the extraction benchmark: when does an extracted memory count as a labelled one.

Meaning, not wording: "I moved to Berlin last month" and "The user lives in Berlin" say the
same thing, so string similarity is the wrong test. Each labelled memory in
`extraction_set.jsonl` carries `must`, the few words a memory must contain to say the same
thing ("berlin"; "make release"; "dana" and "platform"). A term may list alternatives with
`|` ("vs code|vscode"). An extracted memory matches a labelled one when every term matches
its text: case-insensitive, at a word start, so "deploy" matches "deploying", "hik" matches
"hiking", and "go" does not match "google".

Assignment is one-to-one: labelled memories are taken in order and each gets the first
unassigned extracted memory that matches it. Extracted memories left over are false
positives (every memory extracted from chit-chat is one). So:

- precision = matched extracted / all extracted;
- recall = matched labelled / all labelled;
- type accuracy = matched pairs whose type agrees / matched pairs;
- triple accuracy = labelled triples found exactly among the snippet's extracted triples,
  entity and attribute equal and value equal after folding case, articles and punctuation
  (or one value's words contained in the other's: "Acme" for "Acme Corp") / labelled triples.

The terms were written with the labels, before any extractor was run on the set, and are
never tuned to an extractor's output.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any


def fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(text.lower().replace("\u2019", "'").split())


def term_matches(term: str, text: str) -> bool:
    folded = fold(text)
    return any(re.search(r"(?<![a-z0-9])" + re.escape(fold(alt)), folded)
               for alt in term.split("|"))


def matches(gold: dict[str, Any], text: str) -> bool:
    return all(term_matches(t, text) for t in gold["must"])


def assign(golds: Sequence[dict[str, Any]], predicted: Sequence[Any]) -> list[int | None]:
    """For each labelled memory, the index of the extracted memory assigned to it (or None)."""
    taken: set[int] = set()
    out: list[int | None] = []
    for g in golds:
        hit = next((i for i, p in enumerate(predicted) if i not in taken and matches(g, p.text)),
                   None)
        if hit is not None:
            taken.add(hit)
        out.append(hit)
    return out


_ARTICLE = re.compile(r"^(the|a|an)\s+")
_PUNCT = re.compile(r"[^\w@./:+-]+")


def norm_value(value: str) -> str:
    v = fold(value)
    v = _ARTICLE.sub("", v)
    return " ".join(_PUNCT.sub(" ", v).split()).strip(" .")


def value_matches(gold: str, got: str | None) -> bool:
    if got is None:
        return False
    a, b = norm_value(gold), norm_value(got)
    if a == b:
        return True
    wa, wb = set(a.split()), set(b.split())
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def in_inventory(triple: Sequence[str]) -> tuple[str, str, str]:
    """A label written before issue 27's inventory, in its spelling: `opinion:x` likes /
    dislikes -> `likes:x` / `dislikes:x`, `<pet>_name` -> `pets`, and names folded as every
    extractor's are (recall_core.kit.attributes, recall_extractors.keys). For `--inventory`: the
    same labels, asked in the key spelling the extractors now share."""
    from recall_extractors.keys import canonical_triple

    entity, attribute, value = triple
    if attribute.startswith("opinion:") and value in ("likes", "dislikes"):
        attribute, value = value, attribute.split(":", 1)[1].replace("_", " ")
    elif attribute.endswith("_name") and attribute != "name":
        attribute = "pets"
    return canonical_triple(entity, attribute, value) or (entity, attribute, value)


def triple_found(triple: Sequence[str], predicted: Sequence[Any]) -> bool:
    entity, attribute, value = triple
    return any(p.entity == entity and p.attribute == attribute
               and value_matches(value, p.value) for p in predicted)
