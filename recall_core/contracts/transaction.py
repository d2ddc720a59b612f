"""The write transaction every change of memories goes through (`Storage.write`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from ..models import Memory, Operation
from .events import OutboxEvent


class WriteTx(Protocol):
    """One write transaction on one namespace, from `Storage.write`. Primitives only: the
    rules that decide what they do live in core (`memory.facts`, `memory.writes`, `memory.forget`).

    Committed when the `async with` block ends normally, rolled back entirely when it raises.
    While it is open, the fact keys it was opened with are locked against every other writer
    (of any process sharing the database), so what `timeline` returns stays true until commit.
    """

    namespace: str

    async def timeline(self, keys: Sequence[tuple[str, str]]) -> list[Memory]:
        """Every row (current and superseded) of these (entity, attribute) keys, oldest
        `valid_from` first. Keys are matched exactly (core normalises them)."""

    async def current(self, ids: Sequence[str]) -> list[Memory]:
        """The current (active) rows of this namespace among `ids`."""

    async def older_jobs_pending(self, before: datetime) -> bool:
        """Whether a job of this namespace stored before `before` is still queued or running:
        its statements may yet be written after this one, out of order (facts.place keeps a
        re-statement's time for them)."""

    async def insert(self, memories: Sequence[Memory]) -> None:
        """Insert rows as given (their namespace must be this one). Raises
        `errors.StorageConflict` for an existing id (kind `duplicate_id`) or a second current
        row of a key (kind `second_current`)."""

    async def end(self, ends: Sequence[tuple[str, datetime, str | None]]) -> None:
        """(id, valid_until, superseded_by): end rows of this namespace whose validity lasts
        past `valid_until` (current ones, or history rows being split by a late statement)."""

    async def refresh(self, items: Sequence[tuple[str, float]], at: datetime) -> None:
        """(id, importance): a current row was re-stated: base importance becomes the larger
        of its base and `importance` (any decay undone) and last_accessed_at = at. Rows that
        are no longer current are left alone."""

    async def set_pinned(self, ids: Sequence[str], pinned: bool) -> int:
        """Pin (decay never lowers its importance) or unpin current rows; returns how many."""

    async def delete(self, ids: Sequence[str]) -> int:
        """Hard-delete rows of this namespace (current or history) and their index entries.
        Returns how many were deleted."""

    async def predecessors(self, ids: Sequence[str]) -> list[Memory]:
        """Rows of this namespace whose `superseded_by` is one of `ids`."""

    async def scrub_context(self, session_ids: Sequence[str], texts: Sequence[str]) -> None:
        """Clear the session context (`Memory.context`, and its index entry) of rows of
        these sessions whose context contains one of `texts`, and their vector (it mixed in
        the forgotten neighbour's; the embedding backfill re-embeds them from their text)."""

    async def operations(self, ids: Sequence[str]) -> list[Operation]:
        """Operations of this namespace with these ids."""

    async def restated_by(self, ids: Sequence[str]) -> list[Operation]:
        """Operations of this namespace whose result lists one of `ids` among its
        `refreshed_ids` or `restated_ids` (stores that re-stated those memories, current or
        already history: their text says it too)."""

    async def set_payload(self, op_id: str, payload: dict[str, Any]) -> None:
        """Replace an operation's payload (forget scrubs its text)."""

    async def delete_tasks(self, task_ids: Sequence[str]) -> None:
        """Delete A2A tasks of this namespace."""

    async def finish_job(self, op_id: str, attempts: int | None,
                         result: dict[str, Any] | None = None) -> bool:
        """Mark the job done if it is still running under the claim with `attempts`
        (else False, and the caller rolls back by raising `errors.StaleClaim`). `result`
        (the ids written) is kept in the operation's payload under "result". With
        `attempts=None` the operation is a record created done (A2A): it only has to still
        exist in this namespace (an erase deletes it), and only `result` is written."""

    async def emit(self, event: OutboxEvent) -> int:
        """The transactional outbox: store `event` in this transaction with one pending
        delivery per subscription of this namespace (not erased) whose events include its
        type, and return how many; with none, store nothing. `event.texts` is kept only if
        one of those subscriptions has include_text. Every WriteTx has it: a backend without
        the `webhooks` capability stores nothing and returns 0."""
