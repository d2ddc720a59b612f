"""tool_call_records rows, written in batches after the answer (see batching.py).

The audit middleware logs each call's JSON line at once; the row follows within
FLUSH_DELAY_S. Writing it before answering put a write transaction on every tool call's
path (measured with bench/speed.py: store ack over HTTP).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..jobs.batching import Batcher
from ..models import ToolCallRecord, utcnow
from ..contracts import Storage

FLUSH_DELAY_S = 0.25
#: How long an erase is remembered: longer than any tool call that began before it can run.
ERASE_MEMORY = timedelta(minutes=15)


class AuditLog(Batcher):
    what = "tool_call_records rows"

    def __init__(self, storage: Storage, delay_s: float = FLUSH_DELAY_S):
        super().__init__(delay_s)
        self.storage = storage
        self._rows: list[ToolCallRecord] = []
        self._erased: dict[str, datetime] = {}

    def record(self, record: ToolCallRecord) -> None:
        self._rows.append(self._scrubbed(record))
        self._schedule()

    def forget_namespace(self, namespace: str, at: datetime | None = None) -> None:
        """An erase of `namespace` finished at `at`: rows of calls that began before it
        (the erase call's own, and any still pending or in flight) are written without the
        namespace, so the erased namespace leaves no row in tool_call_records."""
        at = at or utcnow()
        now = utcnow()
        self._erased = {ns: t for ns, t in self._erased.items() if now - t < ERASE_MEMORY}
        self._erased[namespace] = at
        self._rows = [self._scrubbed(r) for r in self._rows]

    def _scrubbed(self, record: ToolCallRecord) -> ToolCallRecord:
        erased = self._erased.get(record.namespace or "")
        began = record.at - timedelta(milliseconds=record.duration_ms)
        if erased is not None and began <= erased:
            return record.model_copy(update={"namespace": None})
        return record

    @property
    def pending(self) -> bool:
        return bool(self._rows)

    def _take(self) -> list[ToolCallRecord]:
        rows, self._rows = self._rows, []
        return rows

    async def _write(self, rows: list[ToolCallRecord]) -> None:
        await self.storage.record_tool_calls(rows)
