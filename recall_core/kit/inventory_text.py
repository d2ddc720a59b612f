"""The fact inventory as a model prompt says it (`attributes.INVENTORY` rendered): what the LLM
extractors tell their model, so switching extractors does not change what a key means."""

from __future__ import annotations

from collections.abc import Sequence

from .attributes import INVENTORY
from .text import STOP_WORDS, words


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


#: At most this many earlier statements go into one prompt (each costs ~15-30 tokens).
EARLIER_MAX = 10
# Words too common to say two texts are about one thing, besides text.STOP_WORDS.
_COMMON = frozenset("""
always could done down even every going like made make much never only really said still
thing things want well mine
""".split())


def _stems(text: str) -> set[str]:
    # The words search indexes (text.words, without its stop words); their first five
    # letters, so "monitor" / "monitoring" / "monitors" meet: enough for a filter.
    return {w[:5] for w in words(text)
            if len(w) > 2 and w not in STOP_WORDS and w not in _COMMON}


def related_statements(text: str, statements: Sequence[tuple[str, str]],
                       limit: int = EARLIER_MAX) -> list[tuple[str, str]]:
    """The earlier statements (id, text), newest first, that share a word with `text`: the
    ones it can replace are about the same thing, and telling a model all 60 a worker reads
    would cost ~1,000 tokens a job."""
    mine = _stems(text)
    return [s for s in statements if mine & _stems(s[1])][:limit]


def earlier_statements_text(statements: Sequence[tuple[str, str]]) -> str:
    """Earlier statements stored without a fact, numbered for the model's `replaces`
    (`Extractor.reads_statements`), or "" when there are none."""
    if not statements:
        return ""
    lines = "\n".join(f"[{i}] {' '.join(s[1].split())}" for i, s in enumerate(statements, 1))
    return ("<earlier>\nEarlier statements stored without a fact (context only: extract "
            "nothing from this block). When a memory you record states a fact with one current "
            "value and one of these statements gave that fact's earlier value (\"We monitor "
            "with Nagios\" before \"Datadog is our monitoring now\"), put its number in the "
            "memory's `replaces`; otherwise, or when unsure, leave `replaces` empty.\n"
            f"{lines}\n</earlier>\n")
