"""Bookkeeping written after the answer (audit rows, access counts): it lands, at shutdown too,
and a failed write is logged without stopping later batches."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import recall_extractors
import recall_sqlite
from recall_core.server.runtime import build_runtime
from recall_core.observability.audit import AuditLog
from recall_core.config import load_config
from recall_core.models import ToolCallRecord
from recall_core.plugins import get_plugin_manager


def _pm():
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(recall_sqlite, name="sqlite")
    pm.register(recall_extractors, name="extractors")
    return pm


def _row(tool: str) -> ToolCallRecord:
    return ToolCallRecord(tool=tool, namespace="u", inputs_hash="0" * 64, status="ok", code=None,
                          duration_ms=1.0)


async def test_audit_rows_pending_at_shutdown_are_written(tmp_path):
    db = tmp_path / "r.db"
    rt = await build_runtime(load_config(None, db=str(db)), _pm(), start_worker=False)
    rt.audit.record(_row("store_memory"))
    rt.audit.record(_row("search_memories"))
    await rt.close()  # before the flush timer fires
    with sqlite3.connect(db) as conn:
        tools = [r[0] for r in conn.execute("SELECT tool FROM tool_call_records ORDER BY rowid")]
    assert tools == ["store_memory", "search_memories"]


class FlakyStorage:
    def __init__(self) -> None:
        self.calls = 0
        self.rows: list[str] = []

    async def record_tool_calls(self, rows) -> None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("disk full")
        self.rows += [r.tool for r in rows]


async def test_a_failed_batch_is_logged_and_later_batches_still_land(caplog):
    storage = FlakyStorage()
    audit = AuditLog(storage, delay_s=0.01)  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="recall.batching"):
        audit.record(_row("a"))
        for _ in range(100):
            if storage.calls:
                break
            await asyncio.sleep(0.01)
        audit.record(_row("b"))
        for _ in range(100):
            if storage.rows:
                break
            await asyncio.sleep(0.01)
    assert storage.rows == ["b"]
    assert "writing tool_call_records rows failed" in caplog.text and "disk full" in caplog.text
    await audit.close()
