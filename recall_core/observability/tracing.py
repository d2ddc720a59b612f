"""Optional OpenTelemetry tracing: off by default, `[tracing] enabled = true` to switch it on.

Needs the `otel` extra (`pip install -e '.[otel]'`: the OpenTelemetry SDK and its OTLP/HTTP
exporter). Spans:

- `tool <name>`: every MCP tool call (attributes: recall.tool, recall.status, recall.code,
  recall.namespace_hash);
- `rank <ranker>`: each ranker of a search, children of the tool span;
- `storage.<method>`: every storage call, wherever it comes from (tools, worker, A2A);
- `extract` and `embed` / `embed_query`: extraction and embedding, in the worker too.

The exporter is OTLP over HTTP, configured by the standard OTEL_EXPORTER_OTLP_* variables
(default http://localhost:4318), or `console` (spans as JSON on stderr), or `memory` (kept in
`runtime.tracing.exporter`, for tests). The tracer provider is Recall's own, not the
process-global one, so an embedding application's tracing is left alone.

Like the metrics, the objects are instrumented in place by wrapping their methods: no plugin
needs to know about tracing.
"""

from __future__ import annotations

import functools
import inspect
import logging
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .. import __version__
from ..errors import ConfigError

log = logging.getLogger("recall.tracing")


class TracingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    exporter: Literal["otlp", "console", "memory"] = "otlp"
    service_name: str = "recall"
    #: GenAI memory spans carry the query and the returned memories' text (opt-in, as the
    #: conventions require; also OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
    capture_content: bool = False


@dataclass
class Tracing:
    """The tracer the runtime's objects report to, its provider (shut down with the
    runtime: that flushes batched spans) and, with the `memory` exporter, the exporter."""

    tracer: Any
    provider: Any
    exporter: Any = None


def setup(runtime: Any) -> Tracing | None:
    """Build the tracer (None when tracing is off) and instrument the runtime's objects."""
    settings: TracingSettings = runtime.config.tracing
    if not settings.enabled:
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (BatchSpanProcessor, ConsoleSpanExporter,
                                                    SimpleSpanProcessor)
    except ImportError:
        raise ConfigError("[tracing] enabled = true needs the OpenTelemetry SDK: install Recall "
                          "with the otel extra (pip install -e '.[otel]'), or set enabled = "
                          "false.") from None
    provider = TracerProvider(resource=Resource.create(
        {"service.name": settings.service_name, "service.version": __version__}))
    exporter = None
    if settings.exporter == "memory":
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    elif settings.exporter == "console":
        import sys

        # stderr: with --transport stdio, stdout is the MCP channel
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise ConfigError("[tracing] exporter = \"otlp\" needs "
                              "opentelemetry-exporter-otlp-proto-http (the otel extra).") from None
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("recall", __version__)
    _instrument(runtime, tracer)
    log.info("tracing on: exporter %s, service %s", settings.exporter, settings.service_name)
    return Tracing(tracer, provider, exporter)


def _spanned(fn: Any, tracer: Any, name: str, attributes: dict[str, Any]) -> Any:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        with tracer.start_as_current_span(name, attributes=attributes):
            return await fn(*args, **kwargs)

    wrapper.__recall_traced__ = True  # type: ignore[attr-defined]
    return wrapper


def _wrap(obj: Any, method: str, tracer: Any, name: str, **attributes: Any) -> None:
    fn = getattr(obj, method, None)
    if fn is None or getattr(fn, "__recall_traced__", False) or not inspect.iscoroutinefunction(fn):
        return
    try:
        setattr(obj, method, _spanned(fn, tracer, name, attributes))
    except (AttributeError, TypeError):
        log.debug("cannot trace %r.%s", obj, method)


def _instrument(runtime: Any, tracer: Any) -> None:
    storage = runtime.storage
    for method in dir(type(storage)):
        if not method.startswith("_") and method not in ("open", "close"):
            _wrap(storage, method, tracer, f"storage.{method}")
    extractor = runtime.extractor
    _wrap(extractor, "extract", tracer, "extract",
          **{"recall.extractor": getattr(extractor, "name", type(extractor).__name__)})
    if runtime.embedder is not None:
        _wrap(runtime.embedder, "embed", tracer, "embed")
        _wrap(runtime.embedder, "embed_query", tracer, "embed_query")
    for slot in runtime.rankers:
        _wrap(slot.ranker, "rank", tracer, f"rank {slot.ranker.name}",
              **{"recall.ranker": slot.ranker.name})


def tool_middleware(tracer: Any, capture: bool = False) -> Any:
    """`tool <name>` spans around every MCP tool call and, inside, the GenAI memory span of
    a memory operation (genai.py)."""
    from fastmcp.server.middleware import Middleware

    from ..server.auth import current_namespace_or_none
    from ..server.mcp.default_middleware import call_outcome, namespace_hash
    from . import genai

    capture = genai.capture_content(capture)

    class ToolSpans(Middleware):
        async def on_call_tool(self, context, call_next):
            name = context.message.name
            with tracer.start_as_current_span(f"tool {name}", attributes={"recall.tool": name}) as span:
                ns = current_namespace_or_none()
                store_id = namespace_hash(ns) if ns is not None else None
                if store_id is not None:
                    span.set_attribute("recall.namespace_hash", store_id)
                operation = genai.OPERATIONS.get(name)
                if operation is None:
                    result = await call_next(context)
                else:
                    with tracer.start_as_current_span(operation, attributes=genai.request_attributes(
                            operation, context.message.arguments, store_id, capture)) as op_span:
                        result = await call_next(context)
                        _finish(op_span, operation, result, capture)
                status, code = call_outcome(result)
                span.set_attribute("recall.status", status)
                if code:
                    span.set_attribute("recall.code", code)
                    span.set_status(_error(code))
                return result

    def _finish(op_span: Any, operation: str, result: Any, capture: bool) -> None:
        status, code = call_outcome(result)
        if code:
            op_span.set_attribute("error.type", code)
            op_span.set_status(_error(code))
            return
        sc = getattr(result, "structured_content", None)
        data = sc.get("data") if isinstance(sc, dict) else None
        for key, value in genai.result_attributes(operation, data, capture).items():
            op_span.set_attribute(key, value)

    return ToolSpans()


def _error(code: str) -> Any:
    from opentelemetry.trace import Status, StatusCode

    return Status(StatusCode.ERROR, code)
