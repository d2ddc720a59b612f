"""OpenTelemetry GenAI memory spans (semantic conventions for generative AI, "Memory" spans,
development status): each MCP tool call that is a memory operation gets a span named for the
operation (`search_memory`, `upsert_memory`, `delete_memory`, `delete_memory_store`) inside
Recall's own `tool <name>` span, with the `gen_ai.*` attributes dashboards that know the
conventions read.

What Recall maps (the conventions ask each system to document it):
- `gen_ai.memory.store.id`: the namespace's hash (`recall.namespace_hash`), never its name;
- `store_memory` and `consolidate_memories` are `upsert_memory` (the caller does not choose
  whether records are created, superseded or merged); `search_memories` and
  `inspect_memories` are `search_memory`; `delete_memory` is `delete_memory` with
  `gen_ai.memory.record.id`; `delete_namespace_data` is `delete_memory_store`;
- `gen_ai.memory.record.count`: results returned (search), memories listed (inspect), memories
  forgotten (delete), memories erased (erase);
- `error.type`: the envelope's error code.
Content (`gen_ai.memory.query.text`, `gen_ai.memory.records`) is opt-in, as the conventions
require: `[tracing] capture_content = true`, or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
=true in the environment."""

from __future__ import annotations

import json
import os
from typing import Any

OPERATIONS = {"store_memory": "upsert_memory", "consolidate_memories": "upsert_memory",
              "search_memories": "search_memory", "inspect_memories": "search_memory",
              "delete_memory": "delete_memory", "delete_namespace_data": "delete_memory_store"}
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def capture_content(configured: bool) -> bool:
    return configured or os.environ.get(CAPTURE_ENV, "").strip().lower() in ("1", "true", "yes")


def request_attributes(operation: str, args: Any, store_id: str | None,
                       capture: bool) -> dict[str, Any]:
    """What is known when the call starts (sampling decisions may read them)."""
    attrs: dict[str, Any] = {"gen_ai.operation.name": operation}
    if store_id is not None:
        attrs["gen_ai.memory.store.id"] = store_id
    args = args if isinstance(args, dict) else {}
    if operation == "delete_memory" and isinstance(args.get("memory_id"), str):
        attrs["gen_ai.memory.record.id"] = args["memory_id"]
    if capture and operation == "search_memory" and isinstance(args.get("query"), str):
        attrs["gen_ai.memory.query.text"] = args["query"]
    return attrs


def result_attributes(operation: str, data: Any, capture: bool) -> dict[str, Any]:
    """What the answer tells: how many records, and (opt-in) which, with their content."""
    if not isinstance(data, dict):
        return {}
    rows = data.get("results") if "results" in data else data.get("memories")
    attrs: dict[str, Any] = {}
    if operation == "search_memory" and isinstance(rows, list):
        attrs["gen_ai.memory.record.count"] = len(rows)
        if capture:
            attrs["gen_ai.memory.records"] = json.dumps(
                [{"id": r.get("id"), "content": r.get("text"),
                  **({"score": r["score"]} if "score" in r else {})}
                 for r in rows if isinstance(r, dict)], ensure_ascii=False)
    elif operation == "delete_memory":
        ids = data.get("forgotten_ids")
        attrs["gen_ai.memory.record.count"] = len(ids) if isinstance(ids, list) else 1
    elif operation == "delete_memory_store":
        erased = data.get("memories_deleted")
        if isinstance(erased, int) and not isinstance(erased, bool):
            attrs["gen_ai.memory.record.count"] = erased
    return attrs
