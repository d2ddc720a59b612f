"""The fact model: which value of an (entity, attribute) is current. Pure functions, no I/O.

Every row of one fact key forms a timeline ordered by `valid_from`; at most one row (the
newest) is current (`valid_until` None). The rules, in one place for every backend and every
write path (worker, A2A, consolidation, verbatim import):

* A statement is placed at the time it was **said** (the store's `created_at`), not when its
  job happens to finish. So of two stores racing through two workers, the one stored later is
  current whichever finishes first; an earlier statement that arrives late becomes history.
* Within one text, the **last** statement of a key decides; earlier different values of that
  text are kept as zero-length history rows (they were said, and superseded at once).
* Re-stating the current value **refreshes** the current row (importance back to at least the
  new statement's, last access now) instead of adding a duplicate. A superseded row is never
  refreshed: re-stating an old value after a newer one makes a new current row.
* A row being superseded is never also refreshed (one decision per key per write).
* A re-statement of the current value while an older store may still arrive (its job not yet
  written) also leaves a **marker**: a zero-length history row of the same value at the
  re-statement's time. When that older store then writes a different value, it becomes
  history up to the marker and the value is current again from there, as if the two had been
  written in the order they were said (found by the fact-model state machine: v1 current; v2
  said, then v1 said again; the v1 job written first left v2 current).

Storage enforces the invariant independently (a unique index on the current row of a key), so
a bug in a caller fails loudly instead of leaving two current values.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..kit import representable
from ..kit.attributes import normalise_triple
from ..kit.keys import key_form
from ..models import Memory, new_id

Key = tuple[str, str]

log = logging.getLogger("recall.facts")


def norm_key(value: str | None) -> str:
    """Names and values compare as a person reads them: case, Unicode normal form and width,
    invisible characters and spacing aside ("User " == "user", `kit.keys.key_form`)."""
    return key_form(value)


def same_value(a: str | None, b: str | None) -> bool:
    return norm_key(a) == norm_key(b)


def normalise(memory: Memory) -> Memory:
    """The memory with its triple in canonical form (or none at all when incomplete), by the
    inventory's rules (`attributes.normalise_triple`): canonical entity and attribute names,
    and a many-valued attribute keyed per value, so that only a newer statement of the *same*
    value (an ending) supersedes it. Every write path calls this."""
    memory.text = representable.repaired_text(memory.text)
    triple = normalise_triple(memory.entity, memory.attribute, memory.value)
    if triple is not None and not representable.storable_triple(*triple):
        # An extractor's (a model's) key beyond what storage indexes, or with NUL: the memory
        # is kept as text, without a fact (every entry refuses such a key instead).
        log.warning("a fact key or value too long or unstorable was dropped (entity %d, "
                    "attribute %d, value %d characters); the memory is kept as text",
                    *(len(part) for part in triple))
        triple = None
    if triple is None:
        memory.entity = memory.attribute = memory.value = None
    else:
        memory.entity, memory.attribute, memory.value = triple
    return memory


def respell_key(memory: Memory) -> Memory:
    """The memory with its entity and attribute in `key_form` and nothing else changed: for a
    row restored exactly (an exported row), whose key a file may spell another way. What
    the storage migrations apply to stored keys."""
    if memory.entity is not None:
        memory.entity = key_form(memory.entity) or None
    if memory.attribute is not None:
        memory.attribute = key_form(memory.attribute) or None
    return memory


@dataclass
class Changes:
    """What one write does to the memories table, in the order storage must apply it:
    first `ends` (so no key ever has two current rows), then `inserts`, then `refresh`."""

    inserts: list[Memory] = field(default_factory=list)
    #: (id, valid_until, superseded_by)
    ends: list[tuple[str, datetime, str | None]] = field(default_factory=list)
    #: (id, importance of the re-statement)
    refresh: list[tuple[str, float]] = field(default_factory=list)
    #: history rows the text re-stated, written after they were replaced: nothing changes,
    #: but the store's text says them too (forget scrubs it with them)
    restated: list[str] = field(default_factory=list)

    def extend(self, other: Changes) -> None:
        self.inserts.extend(other.inserts)
        self.ends.extend(other.ends)
        self.refresh.extend(other.refresh)
        self.restated.extend(other.restated)


def _covering(rows: Sequence[Memory], at: datetime) -> Memory | None:
    """The row whose validity interval holds `at` (zero-length rows hold no instant)."""
    best = None
    for r in rows:
        if r.valid_from <= at and (r.valid_until is None or r.valid_until > at):
            if best is None or r.valid_from >= best.valid_from:
                best = r
    return best


def _restated_after(timeline: Sequence[Memory], row: Memory, at: datetime) -> Memory | None:
    """The earliest marker of `row`'s value re-stated after `at` (see the module docstring)."""
    marks = [r for r in timeline if r.valid_from > at and is_marker(r, {row.id: row})]
    return min(marks, key=lambda r: r.valid_from, default=None)


def is_marker(row: Memory, by_id: dict[str, Memory]) -> bool:
    """A re-statement marker: a zero-length row of the same value as the row it points to.
    (A statement replaced within its own text is zero-length too, but of another value.)"""
    to = by_id.get(row.superseded_by) if row.superseded_by else None
    return (row.valid_until == row.valid_from and to is not None
            and same_value(row.value, to.value))


def told(timeline: Sequence[Memory]) -> list[Memory]:
    """A key's history as users read it: markers are bookkeeping of the order statements were
    said in, not values anyone held, so history views leave them out (they hold no instant,
    so `as_of` never finds them either)."""
    by_id = {r.id: r for r in timeline}
    return [r for r in timeline if not is_marker(r, by_id)]


def place(timeline: Sequence[Memory], statements: Sequence[Memory], at: datetime,
          keep_restatement: bool = False) -> Changes:
    """Place one text's `statements` of a single key (in text order) at time `at` into the
    key's `timeline` (every stored row of the key, current and history). `keep_restatement`:
    an older store may still be written, so a re-statement of the current value leaves a
    marker."""
    changes = Changes()
    if not statements:
        return changes
    final = statements[-1]
    cover = _covering(timeline, at)
    if cover is not None and same_value(cover.value, final.value):
        if cover.valid_until is None:
            changes.refresh.append((cover.id, final.importance))
            if keep_restatement and at > cover.valid_from:
                mark = final.model_copy(update={"id": new_id()})
                mark.valid_from = mark.valid_until = at
                mark.superseded_by = cover.id
                changes.inserts.append(mark)
        else:
            changes.restated.append(cover.id)
        winner = cover.id
    else:
        final.valid_from = at
        again = (_restated_after(timeline, cover, at)
                 if cover is not None and cover.valid_until is None else None)
        if again is not None:
            # Said again after this older statement, which was written late: this value is
            # history until then, and the re-stated one current from then on.
            back = cover.model_copy(update={"id": new_id()})
            back.valid_from, back.valid_until, back.superseded_by = again.valid_from, None, None
            changes.ends.append((cover.id, at, final.id))
            final.valid_until, final.superseded_by = again.valid_from, back.id
            changes.inserts.append(back)
        elif cover is not None:
            changes.ends.append((cover.id, at, final.id))
            final.valid_until = cover.valid_until
            final.superseded_by = cover.superseded_by
        else:
            later = sorted((r for r in timeline if r.valid_from > at), key=lambda r: r.valid_from)
            if later:
                final.valid_until, final.superseded_by = later[0].valid_from, later[0].id
        changes.inserts.append(final)
        winner = final.id
    said: set[str] = {norm_key(final.value)}
    earlier_rows = []
    for earlier in statements[:-1]:
        if norm_key(earlier.value) in said:
            continue
        said.add(norm_key(earlier.value))
        earlier.valid_from = earlier.valid_until = at
        earlier.superseded_by = winner
        earlier_rows.append(earlier)
    changes.inserts[:0] = earlier_rows  # in text order, before the final statement
    return changes


def group_by_key(memories: Iterable[Memory]) -> tuple[dict[Key, list[Memory]], list[Memory]]:
    """Split into fact statements per key (text order kept) and keyless memories."""
    keyed: dict[Key, list[Memory]] = {}
    keyless: list[Memory] = []
    for m in memories:
        key = m.key
        if key is None:
            keyless.append(m)
        else:
            keyed.setdefault(key, []).append(m)
    return keyed, keyless


def plan(timeline: Sequence[Memory], memories: Sequence[Memory], at: datetime,
         keep_restatement: bool = False) -> Changes:
    """Changes for one text's memories said at `at`, given every stored row of their keys
    (`keep_restatement`: see `place`)."""
    keyed, keyless = group_by_key(memories)
    by_key: dict[Key, list[Memory]] = {}
    for r in timeline:
        if r.key is not None:
            by_key.setdefault(r.key, []).append(r)
    changes = Changes()
    for key, statements in keyed.items():
        changes.extend(place(by_key.get(key, []), statements, at, keep_restatement))
    for m in keyless:
        m.valid_from = at
        changes.inserts.append(m)
    return changes
