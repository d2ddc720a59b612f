"""OpenTelemetry tracing, switched on by config and read back with the SDK's in-memory
exporter: a tool call's span holds its rankers' and storage's spans; extraction in the worker
is traced too; off by default."""

from __future__ import annotations

import asyncio
import json

import pytest
from fastmcp import Client

from recall_core.server.mcp.server import build_mcp
from recall_core.server.runtime import build_runtime
from recall_core.server.auth import set_stdio_namespace
from recall_core.config import load_config

from recall_testkit.backends import bundled

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")


async def _runtime(tmp_path, **tracing):
    config = load_config(None, db=str(tmp_path / "r.db"), tracing=tracing)
    return await build_runtime(config, bundled())


async def extracted(client) -> None:
    """Wait until the worker has extracted every store."""
    for _ in range(100):
        stats = (await client.call_tool("get_memory_stats", {})).structured_content["data"]
        if stats["pending_extractions"] == 0:
            return
        await asyncio.sleep(0.05)


async def test_tool_ranker_storage_and_extraction_spans(tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_DISABLE_PLUGINS", "embeddings")
    runtime = await _runtime(tmp_path, enabled=True, exporter="memory")
    try:
        exporter = runtime.tracing.exporter
        mcp = await build_mcp(runtime, auth=False)
        set_stdio_namespace("traced")
        async with Client(mcp) as c:
            await c.call_tool("store_memory", {"text": "I prefer tea over coffee."})
            await extracted(c)
            await c.call_tool("search_memories", {"query": "tea"})
            await c.call_tool("delete_memory", {"memory_id": "nope"}, raise_on_error=False)
        spans = exporter.get_finished_spans()
    finally:
        await runtime.close()
    by_name = {}
    for s in spans:
        by_name.setdefault(s.name, []).append(s)
    search = by_name["tool search_memories"][0]
    assert search.attributes["recall.status"] == "ok"
    # Inside the tool span, the GenAI memory span; inside that, the rankers' spans.
    op = by_name["search_memory"][0]
    assert op.parent.span_id == search.context.span_id
    children = [s for s in spans if s.parent is not None and s.parent.span_id == op.context.span_id]
    assert any(s.name == "rank bm25" for s in children), [s.name for s in children]
    assert any(s.name.startswith("storage.") for s in spans
               if s.context.trace_id == search.context.trace_id)
    failed = by_name["tool delete_memory"][0]
    assert failed.attributes["recall.code"] == "MEMORY_NOT_FOUND"
    assert failed.status.status_code.name == "ERROR"
    assert by_name["extract"][0].attributes["recall.extractor"] == "stub"  # in the worker
    assert "traced" not in str([dict(s.attributes) for s in spans])  # tenants by hash only
    assert spans[0].resource.attributes["service.name"] == "recall"


async def _traced_calls(tmp_path, monkeypatch, **tracing):
    monkeypatch.setenv("RECALL_DISABLE_PLUGINS", "embeddings")
    runtime = await _runtime(tmp_path, enabled=True, exporter="memory", **tracing)
    try:
        mcp = await build_mcp(runtime, auth=False)
        set_stdio_namespace("genai")
        async with Client(mcp) as c:
            await c.call_tool("store_memory", {"text": "I live in Lisbon. I like green tea."})
            await extracted(c)
            found = (await c.call_tool("search_memories", {"query": "Where do I live?"}
                                       )).structured_content["data"]["results"]
            await c.call_tool("delete_memory", {"memory_id": found[0]["id"]})
            await c.call_tool("delete_memory", {"memory_id": "nope"}, raise_on_error=False)
            await c.call_tool("delete_namespace_data", {"confirm": "DELETE MY DATA"})
        return found, runtime.tracing.exporter.get_finished_spans()
    finally:
        await runtime.close()


async def test_genai_memory_spans_follow_the_conventions(tmp_path, monkeypatch):
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    found, spans = await _traced_calls(tmp_path, monkeypatch)
    ops = [(s.name, dict(s.attributes)) for s in spans if "gen_ai.operation.name" in s.attributes]
    names = [n for n, _ in ops]
    assert names == ["upsert_memory", "search_memory", "delete_memory", "delete_memory",
                     "delete_memory_store"], names
    for name, attrs in ops:
        assert attrs["gen_ai.operation.name"] == name
        assert len(attrs["gen_ai.memory.store.id"]) == 16  # the namespace's hash, not its name
    search = ops[1][1]
    assert search["gen_ai.memory.record.count"] == len(found) > 0
    deleted, missing, erased = ops[2][1], ops[3][1], ops[4][1]
    assert deleted["gen_ai.memory.record.id"] == found[0]["id"]
    assert deleted["gen_ai.memory.record.count"] >= 1
    assert missing["error.type"] == "MEMORY_NOT_FOUND"
    assert erased["gen_ai.memory.record.count"] >= 1
    # No content unless asked: neither the query nor any memory's text.
    text = str([dict(s.attributes) for s in spans])
    assert "Lisbon" not in text and "Where do I live" not in text and "genai" not in text


async def test_genai_content_is_opt_in(tmp_path, monkeypatch):
    found, spans = await _traced_calls(tmp_path, monkeypatch, capture_content=True)
    search = next(s for s in spans if s.name == "search_memory")
    assert search.attributes["gen_ai.memory.query.text"] == "Where do I live?"
    records = json.loads(search.attributes["gen_ai.memory.records"])
    assert [r["id"] for r in records] == [r["id"] for r in found]
    assert records[0]["content"] == found[0]["text"] and "score" in records[0]


async def test_tracing_is_off_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_DISABLE_PLUGINS", "embeddings")
    runtime = await _runtime(tmp_path)
    try:
        assert runtime.tracing is None
        assert not hasattr(runtime.storage.count_jobs, "__recall_traced__")
    finally:
        await runtime.close()


async def test_stdio_serves_with_console_spans_and_json_logs(tmp_path):
    # With --transport stdio, stdout carries MCP: spans (exported to stderr) and JSON logs
    # must not break the channel.
    import json
    import os
    import sys

    from fastmcp.client.transports import StdioTransport

    from recall_testkit.serverproc import recall_cli

    env = {"RECALL_DISABLE_PLUGINS": "embeddings"}
    db = str(tmp_path / "r.db")
    token = json.loads(recall_cli("create-token", "stdio", "--db", db, "--create", "--json", env=env).stdout)["token"]
    err = tmp_path / "stderr.log"
    transport = StdioTransport(
        command=sys.executable,
        args=["-m", "recall_core.cli", "serve", "--transport", "stdio", "--db", db,
              "--log-format", "json"],
        env={**os.environ, **env, "RECALL_TOKEN": token, "RECALL_TRACING__ENABLED": "true",
             "RECALL_TRACING__EXPORTER": "console"},
        log_file=err)
    async with Client(transport) as c:
        result = await c.call_tool("get_memory_stats", {})
        assert result.structured_content["status"] == "ok"
    text = err.read_text()
    assert '"name": "tool get_memory_stats"' in text  # the span, on stderr
