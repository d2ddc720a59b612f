"""The fact inventory as a model prompt says it (`attributes.INVENTORY` rendered): what the LLM
extractors tell their model, so switching extractors does not change what a key means."""

from __future__ import annotations

from collections.abc import Sequence

from .attributes import INVENTORY


#: Attributes whose name alone is ambiguous: prompts carry their description too.
HINTED = frozenset({"location", "hometown", "occupation", "partner", "learning", "phone",
                    "pets", "uses", "language", "framework", "cloud", "answer_language",
                    "code_host"})


def inventory_lines(about: str | None = None) -> list[str]:
    """One line per attribute: `name` (one value | several values): description."""
    lines = []
    for a in INVENTORY.values():
        if about is None or a.about == about:
            many = "several values" if a.many else "one value"
            lines.append(f"- `{a.name}` ({many}): {a.description}")
    return lines


def inventory_summary(about: str, many: bool) -> str:
    """The attributes of one kind as one compact line for a model prompt: the names, with
    the description of those whose name alone is ambiguous (prompts stay short enough for
    a small local model's context)."""
    return ", ".join(f"`{a.name}` ({a.description})" if a.name in HINTED else f"`{a.name}`"
                     for a in INVENTORY.values() if a.about == about and a.many == many)


def known_facts_text(known: Sequence[tuple[str, ...]]) -> str:
    """The facts already current about a text's subjects, as an extractor's model reads them
    before the text (`Extractor.reads_known`), or "" when there are none: a statement giving
    one of them a new value reuses its (entity, attribute), so the new value supersedes it."""
    if not known:
        return ""
    lines = "\n".join(f"- {k[0]}.{k[1]} = {k[2]}" for k in known)
    return ("<known>\nCurrent facts already stored (context only: extract nothing from this "
            "block). When the text gives one of these facts a new value, however it is "
            "phrased, use the same entity and attribute; when unsure whether it is the same "
            f"fact, use a key of its own.\n{lines}\n</known>\n")
