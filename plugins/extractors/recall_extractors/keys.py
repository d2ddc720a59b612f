"""A triple from any source (the rules, or a model's reply) in the inventory's spelling.

Core's `recall_core.kit.attributes.normalise_triple` is the rule every write path applies
(canonical names, aliases folded, many-valued facts keyed per value). A model also writes
attributes no alias list can foresee but the lexicon can read: a generic "uses" / "tool"
for a tool held one at a time ("uses: Firefox" is the `browser`), a purpose for a tool with
a category ("storage: Postgres" is the `database`), a favourite tool ("favorite_editor:
vim" is the `editor`). `canonical_triple` folds those first, so switching extractors does
not change what a fact key means.
"""

from __future__ import annotations

from recall_core.kit.attributes import (INVENTORY, TEAM, base_attribute, canonical_attribute,
                                    canonical_entity, normalise_triple)

from .lexicon import PERSONAL, attribute_for, category_of, purpose_attribute

#: Favourite tools are the tools in use ("my favourite editor is vim" -> editor).
FAVORITE_TOOLS = frozenset(PERSONAL - {"phone", "laptop", "car"})


def canonical_triple(entity: str | None, attribute: str | None, value: str | None
                     ) -> tuple[str, str, str] | None:
    """Normalise a triple from any source; None unless all three parts are present and
    name a fact (see `recall_core.kit.attributes`)."""
    if not entity or not attribute or value is None:
        return None
    attr = canonical_attribute(str(attribute))
    base = base_attribute(attr)
    if base == "uses" and ":" not in attr:
        person = canonical_entity(str(entity)) != TEAM
        attr = attribute_for(str(value), person=person)
    elif base.startswith("favorite_") and canonical_attribute(base[9:]) in FAVORITE_TOOLS:
        attr = canonical_attribute(base[9:])
    elif base not in INVENTORY and ":" not in attr:
        category = category_of(str(value))
        if category is not None and purpose_attribute(base.replace("_", " ")) == category:
            attr = category  # "storage: Postgres" -> database
    return normalise_triple(entity, attr, str(value))
