"""The key migration's rule, checked the same way on every backend (issue 28).

A backend's migration test opens a database one step before its key migration, writes
`spelt_apart()` with `write_spelt_apart` (through the storage's own write transaction, as
an import or an LLM extractor of an older version did: keys as given), then opens it with
every migration and calls `check_merged`. The rule (`recall_core.kit.keys.respell`): every
key in `key_form`; of the current rows that meet, the newest stays current and the others
become its history; nothing crosses namespaces; keyless rows are untouched.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from ..contracts import Storage
from ..models import Memory

NS, OTHER = "keys-apart", "keys-other"
T0 = datetime(2026, 1, 5, 12, 0, tzinfo=timezone.utc)


def _m(ns: str, entity: str, attribute: str, value: str, days: int, text: str) -> Memory:
    at = T0 + timedelta(days=days)
    return Memory(namespace=ns, text=text, entity=entity, attribute=attribute, value=value,
                  valid_from=at, created_at=at, importance=0.5)


def spelt_apart() -> dict[str, list[Memory]]:
    """Rows per namespace whose keys differ only in what a reader cannot see."""
    return {NS: [
        _m(NS, "sarah", "location", "Berlin", 0, "Sarah lives in Berlin."),
        # a zero-width space and a capital: the same key, said later
        _m(NS, "Sa\u200brah", "Location", "Lisbon", 3, "Sarah moved to Lisbon."),
        # full width, said later than the plain spelling
        _m(NS, "user", "employer", "Initech", 1, "I work at Initech."),
        _m(NS, "\uff55\uff53\uff45\uff52", "employer", "Acme", 2, "I work at Acme."),
        # case folding beyond ASCII (ß/SS) and a no-break space, said earlier: history
        _m(NS, "big\u00a0stra\u00dfe", "color", "red", 5, "The big street is red."),
        _m(NS, "BIG STRASSE", "color", "blue", 4, "The big street is blue."),
        # decomposed é vs precomposed in a many-valued key, plus a soft hyphen
        _m(NS, "user", "likes:cafe\u0301", "caf\u00e9", 1, "I like the café."),
        _m(NS, "user", "li\u00adkes:caf\u00e9", "caf\u00e9", 6, "I still like the café."),
        Memory(namespace=NS, text="A note without a fact.", valid_from=T0, created_at=T0),
    ], OTHER: [
        # the same folded key in another namespace: never merged with NS's
        _m(OTHER, "SARAH", "location", "Oslo", 9, "Sarah lives in Oslo."),
    ]}


async def write_spelt_apart(storage: Storage) -> None:
    for ns, rows in spelt_apart().items():
        keys = sorted({m.key for m in rows if m.key is not None})
        async with storage.write(ns, keys) as tx:
            await tx.insert(rows)


async def check_merged(storage: Storage) -> None:
    async def history(ns: str, entity: str, attribute: str) -> list[tuple[Any, ...]]:
        rows = sorted(await storage.history(ns, entity, attribute), key=lambda m: m.valid_from)
        by_id = {m.id: m for m in rows}
        return [(m.value, m.valid_until is None,
                 by_id[m.superseded_by].value if m.superseded_by in by_id else None)
                for m in rows]

    assert await history(NS, "sarah", "location") == [("Berlin", False, "Lisbon"),
                                                       ("Lisbon", True, None)]
    assert await history(NS, "user", "employer") == [("Initech", False, "Acme"),
                                                      ("Acme", True, None)]
    assert await history(NS, "big strasse", "color") == [("blue", False, "red"),
                                                          ("red", True, None)]
    likes = await history(NS, "user", "likes:caf\u00e9")
    assert [current for _, current, _ in likes] == [False, True], likes
    assert await history(OTHER, "sarah", "location") == [("Oslo", True, None)]
    # the ended row was ended where the newest begins
    (berlin,) = [m for m in await storage.history(NS, "sarah", "location") if m.value == "Berlin"]
    assert berlin.valid_until == T0 + timedelta(days=3)
    # only current rows are listed and searched
    active, total = await storage.list_memories(NS, 50, 0)
    assert total == 5 and sorted(m.value or "-" for m in active) == \
        ["-", "Acme", "Lisbon", "caf\u00e9", "red"]
    assert await storage.search_fulltext(NS, ["berlin"], 5) == []
    assert [h.id for h in await storage.search_fulltext(NS, ["lisbon"], 5)] == \
        [m.id for m in active if m.value == "Lisbon"]
