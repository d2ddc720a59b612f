"""tool_call_records rows, written in batches after the answer (see batching.py).

The audit middleware logs each call's JSON line at once; the row follows within
FLUSH_DELAY_S. Writing it before answering put a write transaction on every tool call's
path (measured with bench/speed.py: store ack over HTTP).
"""

from __future__ import annotations

from .batching import Batcher
from .models import ToolCallRecord
from .protocols import Storage

FLUSH_DELAY_S = 0.25


class AuditLog(Batcher):
    what = "tool_call_records rows"

    def __init__(self, storage: Storage, delay_s: float = FLUSH_DELAY_S):
        super().__init__(delay_s)
        self.storage = storage
        self._rows: list[ToolCallRecord] = []

    def record(self, record: ToolCallRecord) -> None:
        self._rows.append(record)
        self._schedule()

    @property
    def pending(self) -> bool:
        return bool(self._rows)

    def _take(self) -> list[ToolCallRecord]:
        rows, self._rows = self._rows, []
        return rows

    async def _write(self, rows: list[ToolCallRecord]) -> None:
        many = getattr(self.storage, "record_tool_calls", None)
        if many is not None:
            await many(rows)
            return
        for row in rows:
            await self.storage.record_tool_call(row)
