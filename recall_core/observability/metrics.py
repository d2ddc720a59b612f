"""Prometheus metrics (prometheus-client), served on their own listener, off the public port.

`recall serve --metrics-port 9464` (env RECALL_METRICS_PORT, `metrics_port` in recall.toml)
answers `GET /metrics` on `metrics_host` (127.0.0.1 by default) with:

- recall_tool_calls_total{tool,status,code} and recall_tool_call_duration_seconds{tool}:
  every MCP tool call and A2A skill (`a2a:<skill>`), as the audit line records it;
- recall_ranker_duration_seconds{ranker} and recall_ranker_degraded_total{ranker,reason}:
  each ranker of each search, and the times one could not answer (warming up, failed);
- recall_extraction_duration_seconds{extractor,outcome}, recall_embedding_duration_seconds{kind}
  (kind = query or batch);
- recall_jobs{status} (queue depth and job outcomes, read from storage at scrape time),
  recall_webhook_deliveries{status} (the webhook outbox's depth: pending, delivered, dead,
  read at scrape time), recall_webhook_attempts_total{outcome} and
  recall_webhook_delivery_latency_seconds (commit to the receiver's 2xx),
  recall_embedder_ready, recall_storage_pool_connections{state} (backends that report a
  pool), recall_build_info{version}; plus prometheus-client's process and Python metrics.

Why a separate listener: the public port faces agents; metrics name tools, error codes and
timings an operator wants scraped inside the network, not published. Off unless a port is set.
The listener is a few lines of asyncio (one GET per connection, capped reads and timeouts) in
the server's own event loop, so a scrape can read queue depth from storage without a thread.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from typing import Any, Callable

from prometheus_client import (CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram,
                               disable_created_metrics, generate_latest)

from .. import __version__
from ..contracts import NotReady

log = logging.getLogger("recall.metrics")
disable_created_metrics()  # the *_created series double the output and nobody graphs them

# Tool calls span 1 ms (a store ack) to the 30 s tool timeout.
CALL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
WORK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

# Defined once per process (prometheus-client registries reject duplicates); labels keep
# several runtimes of one test process apart only by their values, which is fine for a server.
TOOL_CALLS = Counter("recall_tool_calls", "Tool calls (MCP tools and A2A skills) by outcome.",
                     ["tool", "status", "code"])
TOOL_SECONDS = Histogram("recall_tool_call_duration_seconds", "Tool call latency, server side.",
                         ["tool"], buckets=CALL_BUCKETS)
RANKER_SECONDS = Histogram("recall_ranker_duration_seconds", "One ranker's part of a search.",
                           ["ranker"], buckets=CALL_BUCKETS)
RANKER_DEGRADED = Counter("recall_ranker_degraded", "Searches a ranker could not answer.",
                          ["ranker", "reason"])
EXTRACTION_SECONDS = Histogram("recall_extraction_duration_seconds", "Extractor calls.",
                               ["extractor", "outcome"], buckets=WORK_BUCKETS)
EMBEDDING_SECONDS = Histogram("recall_embedding_duration_seconds",
                              "Embedding calls: a search's query, or a batch of stored texts.",
                              ["kind"], buckets=WORK_BUCKETS)
# multiprocess_mode: how a `--workers N` group's processes' values of a gauge combine
# (prometheus-client's multiprocess mode; ignored in one process). Values read from storage
# at scrape time are set by the scraped process: its latest write is the answer.
JOBS = Gauge("recall_jobs", "Jobs in the durable queue by status (read at scrape time).", ["status"],
             multiprocess_mode="mostrecent")
# Webhooks (recall_core/events): the outbox's deliveries, and how they end.
WEBHOOK_DELIVERIES = Gauge("recall_webhook_deliveries",
                           "Webhook deliveries by status (pending = outbox depth; read at "
                           "scrape time).", ["status"], multiprocess_mode="mostrecent")
WEBHOOK_ATTEMPTS = Counter("recall_webhook_attempts",
                           "Webhook delivery attempts by outcome (delivered, retried, dead).",
                           ["outcome"])
WEBHOOK_LATENCY = Histogram("recall_webhook_delivery_latency_seconds",
                            "From the change's commit to the receiver's 2xx.",
                            buckets=WORK_BUCKETS)
EMBEDDER_READY = Gauge("recall_embedder_ready", "1 when the embedding model is loaded.",
                       multiprocess_mode="mostrecent")
POOL = Gauge("recall_storage_pool_connections", "Storage connection pool (backends with a pool).",
             ["state"], multiprocess_mode="mostrecent")  # the scraped process's pool
BUILD = Gauge("recall_build_info", "Recall's version.", ["version"], multiprocess_mode="max")
BUILD.labels(version=__version__).set(1)
SCRAPE_FAILURES = Counter("recall_metrics_scrape_errors", "Scrapes whose storage reads failed.")


def observe_delivery(outcome: str, latency_s: float | None) -> None:
    """One webhook delivery attempt (events/deliverer.py): delivered, retried or dead."""
    WEBHOOK_ATTEMPTS.labels(outcome=outcome).inc()
    if latency_s is not None:
        WEBHOOK_LATENCY.observe(latency_s)


def observe_call(tool: str, status: str, code: str | None, seconds: float) -> None:
    TOOL_CALLS.labels(tool=tool, status=status, code=code or "").inc()
    TOOL_SECONDS.labels(tool=tool).observe(seconds)


def _timed(fn: Callable[..., Any], record: Callable[[float, BaseException | None], None]):
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            result = await fn(*args, **kwargs)
        except BaseException as exc:
            record(time.perf_counter() - started, exc)
            raise
        record(time.perf_counter() - started, None)
        return result

    wrapper.__recall_metrics__ = True  # type: ignore[attr-defined]
    return wrapper


def _wrap(obj: Any, method: str, record: Callable[[float, BaseException | None], None]) -> None:
    fn = getattr(obj, method, None)
    if fn is None or getattr(fn, "__recall_metrics__", False):
        return
    try:
        setattr(obj, method, _timed(fn, record))
    except (AttributeError, TypeError):  # __slots__ or a read-only attribute: not measured
        log.debug("cannot measure %r.%s", obj, method)


def instrument(runtime: Any) -> None:
    """Time the extractor, the embedder and each ranker in place (the same objects the worker,
    the search pipeline and the A2A skills hold), without touching their code."""
    name = getattr(runtime.extractor, "name", type(runtime.extractor).__name__)

    def extraction(seconds: float, exc: BaseException | None) -> None:
        outcome = "ok" if exc is None else type(exc).__name__
        EXTRACTION_SECONDS.labels(extractor=name, outcome=outcome).observe(seconds)

    _wrap(runtime.extractor, "extract", extraction)
    embedder = runtime.embedder
    if embedder is not None:
        for method, kind in (("embed", "batch"), ("embed_query", "query")):
            def embedding(seconds: float, exc: BaseException | None, _kind: str = kind) -> None:
                if exc is None:  # NotReady while loading is not a latency
                    EMBEDDING_SECONDS.labels(kind=_kind).observe(seconds)
            _wrap(embedder, method, embedding)
    for slot in runtime.rankers:
        ranker = slot.ranker.name

        def ranked(seconds: float, exc: BaseException | None, _ranker: str = ranker) -> None:
            if exc is None:
                RANKER_SECONDS.labels(ranker=_ranker).observe(seconds)
            else:
                reason = "not_ready" if isinstance(exc, NotReady) else "failed"
                RANKER_DEGRADED.labels(ranker=_ranker, reason=reason).inc()
        _wrap(slot.ranker, "rank", ranked)


async def refresh(runtime: Any) -> None:
    """Gauges read at scrape time: queue depth by status, model readiness, pool stats."""
    try:
        for status in ("queued", "running", "done", "failed"):
            JOBS.labels(status=status).set(await runtime.storage.count_jobs(None, status))
    except Exception:  # noqa: BLE001 - a scrape never fails because storage is slow
        SCRAPE_FAILURES.inc()
        log.warning("metrics: reading queue depth failed", exc_info=True)
    if runtime.storage.capabilities.webhooks:
        try:
            for status, n in (await runtime.storage.webhook_backlog()).items():
                WEBHOOK_DELIVERIES.labels(status=status).set(n)
        except Exception:  # noqa: BLE001 - as above
            SCRAPE_FAILURES.inc()
            log.warning("metrics: reading the webhook backlog failed", exc_info=True)
    emb = runtime.embedder
    EMBEDDER_READY.set(1 if emb is not None and emb.ready else 0)
    status = runtime.storage.status()
    pool = status.get("pool") if isinstance(status, dict) else None
    if isinstance(pool, dict):
        for state in ("size", "idle", "min", "max"):
            if isinstance(pool.get(state), int):
                POOL.labels(state=state).set(pool[state])


def _registry() -> Any:
    """This process's registry; in a `--workers N` group, the sum over every process's
    files in PROMETHEUS_MULTIPROC_DIR (set by the supervisor before any child starts, as
    prometheus-client requires; process and Python metrics are per process and absent)."""
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not path:
        return REGISTRY
    from prometheus_client import CollectorRegistry, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=path)
    return registry


async def serve_metrics(runtime: Any, sock: Any) -> asyncio.AbstractServer:
    """Start the /metrics listener on a bound socket in the running loop (the caller closes
    it)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
            parts = head.split(b"\r\n", 1)[0].split()
            method, path = (parts + [b"", b""])[:2]
            if method not in (b"GET", b"HEAD"):
                code, body, ctype = b"405 Method Not Allowed", b"GET /metrics\n", b"text/plain"
            elif path.split(b"?", 1)[0] != b"/metrics":
                code, body, ctype = b"404 Not Found", b"GET /metrics\n", b"text/plain"
            else:
                await refresh(runtime)
                code, body, ctype = b"200 OK", generate_latest(_registry()), CONTENT_TYPE_LATEST.encode()
            writer.write(b"HTTP/1.1 " + code + b"\r\nContent-Type: " + ctype
                         + b"\r\nContent-Length: " + str(len(body)).encode()
                         + b"\r\nConnection: close\r\n\r\n" + (body if method != b"HEAD" else b""))
            await writer.drain()
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, sock=sock, limit=16384)
