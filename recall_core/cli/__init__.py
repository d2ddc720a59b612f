"""`recall` command line: serve, tokens, status, plugins, history (+ plugin commands)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import threading
from typing import Any

from ..config import LOG_LEVELS, RecallConfig, load_config
from ..memory.facts import norm_key, told
from ..errors import ConfigError, StorageConflict

log = logging.getLogger("recall")


def _setup_logging(level: str, fmt: str = "text") -> None:
    from ..observability.logs import setup_logging

    setup_logging(level, fmt)


def _config(args: argparse.Namespace, **extra: Any) -> RecallConfig:
    return load_config(getattr(args, "config", None), db=getattr(args, "db", None), **extra)


async def _open_storage(config: RecallConfig):
    from ..plugins import Registries, build_storage
    from ..plugins import get_plugin_manager

    storage = build_storage(config, Registries.from_pm(get_plugin_manager()))
    await storage.open()
    return storage


# -- serve ----------------------------------------------------------------------------------
def _bind(host: str, port: int):
    """Listen before anything else starts: a busy port is one line and exit 2 within a
    second, and the server never announces an address it does not hold."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"Cannot listen on {host}:{port}: {exc.strerror}. Use an address of "
                          f"this machine for --host (127.0.0.1, or 0.0.0.0 for all).") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        hint = {errno.EADDRINUSE: "another process (another recall serve?) is using that port; "
                                  "stop it or pass another --port",
                errno.EACCES: "ports below 1024 need privileges; use a port above 1024",
                errno.EADDRNOTAVAIL: "this machine has no such address; use 127.0.0.1, or "
                                     "0.0.0.0 for all addresses"}.get(exc.errno, "check --host and --port")
        raise ConfigError(f"Cannot listen on {host}:{port}: {exc.strerror}; {hint}.") from None
    sock.set_inheritable(True)
    return sock


async def _serve_http(runtime, sock) -> None:
    import uvicorn

    from ..server.app import build_http_app

    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    public_url = runtime.config.public_url or f"http://{host}:{port}"
    app = await build_http_app(runtime, public_url=public_url)
    from ..server.warmup import warm_up

    await warm_up(runtime.mcp)
    # log_config=None: uvicorn logs through our handler (text or JSON), not its own formats.
    server = uvicorn.Server(uvicorn.Config(
        app, log_level="warning", lifespan="on", log_config=None,
        timeout_graceful_shutdown=runtime.config.shutdown_grace))

    async def announce() -> None:
        while not server.started and not server.should_exit:
            await asyncio.sleep(0.02)
        if server.started:
            log.info("serving MCP on http://%s:%d/mcp (A2A card at /.well-known/agent-card.json)",
                     host, port)

    announcer = asyncio.create_task(announce())
    # uvicorn stops on SIGTERM/SIGINT, then re-raises the signal to the handler that was in
    # place before it: with Python's defaults that killed the process before the runtime was
    # closed (worker stopped, audit batch written). This handler just notes the signal, so
    # serve() returns and shutdown finishes; exit code 0 for a requested stop.
    import signal

    def noted(signum, frame) -> None:
        log.info("stopping on %s", signal.Signals(signum).name)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, noted) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        await server.serve(sockets=[sock])
    finally:
        announcer.cancel()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _serve_stdio(runtime) -> None:
    from ..server.mcp.server import build_mcp
    from ..server.auth import hash_token, set_stdio_namespace

    token = os.environ.get("RECALL_TOKEN", "")
    namespace = await runtime.storage.namespace_for_token(hash_token(token)) if token else None
    if namespace is None:
        raise ConfigError("stdio transport needs a valid token in RECALL_TOKEN (unset, unknown "
                          "or revoked). Create one with `recall create-token NAMESPACE`.")
    set_stdio_namespace(namespace, runtime.storage, token)
    mcp = await build_mcp(runtime, auth=False)
    await mcp.run_stdio_async(show_banner=False)


async def _serve(args: argparse.Namespace) -> int:
    from ..server.runtime import build_runtime

    config = _config(args, host=args.host, port=args.port, transport=args.transport,
                     log_level=args.log_level, log_format=args.log_format,
                     metrics_port=args.metrics_port)
    _setup_logging(config.log_level, config.log_format)
    socks = []
    if config.transport == "http":
        from ..server.app import allowed_hosts

        allowed_hosts(config)  # a wildcard bind without public_url/allowed_hosts: refused now
    try:
        if config.transport == "http":
            socks.append(_bind(config.host, config.port))
        if config.metrics_port is not None:
            socks.append(_bind(config.metrics_host, config.metrics_port))
        runtime = await build_runtime(config)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    metrics_server = None
    try:
        if config.metrics_port is not None:
            from ..observability.metrics import instrument, serve_metrics

            instrument(runtime)
            metrics_server = await serve_metrics(runtime, socks[-1])
            host, port = socks[-1].getsockname()[:2]
            log.info("metrics on http://%s:%d/metrics", host, port)
        if config.transport == "stdio":
            await _serve_stdio(runtime)
        else:
            await _serve_http(runtime, socks[0])
    finally:
        if metrics_server is not None:
            metrics_server.close()
        # Bounded like the requests: a worker stuck in a slow extraction must not keep a
        # stopping server alive (its job is re-queued at the next start).
        try:
            await asyncio.wait_for(runtime.close(), timeout=max(config.shutdown_grace, 1.0))
        except TimeoutError:
            log.warning("shutdown: closing the runtime took over %gs; exiting anyway "
                        "(running jobs are re-queued at the next start)", config.shutdown_grace)
    log.info("stopped")
    return 0


# -- tokens ---------------------------------------------------------------------------------
async def _create_token(args: argparse.Namespace) -> int:
    from ..admin.tokens import create_token

    if args.admin:
        return await _create_admin_token(args)
    if not (args.namespace or "").strip():
        raise ConfigError("NAMESPACE must not be empty.")
    storage = await _open_storage(_config(args))
    try:
        token = await create_token(storage, args.namespace)
    finally:
        await storage.close()
    if args.json:
        print(json.dumps({"namespace": args.namespace.strip(), "token": token}))
    else:
        print(f"Token for namespace {args.namespace.strip()!r} (shown once, store it safely):")
        print(token)
    return 0


async def _create_admin_token(args: argparse.Namespace) -> int:
    from ..admin.tokens import create_admin_token

    if args.namespace:
        raise ConfigError("An admin token belongs to no namespace: use `recall create-token "
                          "--admin [--name NAME]` without NAMESPACE.")
    storage = await _open_storage(_config(args))
    try:
        if not storage.capabilities.admin:
            raise ConfigError(f"{storage.description} does not support admin tokens.")
        token = await create_admin_token(storage, args.name)
    finally:
        await storage.close()
    if args.json:
        print(json.dumps({"admin": args.name, "token": token}))
    else:
        print(f"Admin token {args.name!r} (shown once, store it safely; it works on /admin and "
              f"/ui, never on /mcp):")
        print(token)
    return 0


async def _revoke_token(args: argparse.Namespace) -> int:
    from ..admin.tokens import hash_token

    storage = await _open_storage(_config(args))
    try:
        revoked = await storage.revoke_token(hash_token(args.token))
        if not revoked and storage.capabilities.admin:
            revoked = await storage.revoke_admin_token(hash_token(args.token))
    finally:
        await storage.close()
    if not revoked:
        print("No active token matches; nothing was revoked.", file=sys.stderr)
        return 1
    print("Token revoked.")
    return 0


# -- status / plugins / history ---------------------------------------------------------
async def _status(args: argparse.Namespace) -> int:
    from ..plugins import Registries, choose_extractor_name
    from ..plugins import get_plugin_manager

    config = _config(args)
    registries = Registries.from_pm(get_plugin_manager())
    storage = await _open_storage(config)
    try:
        jobs = {s: await storage.count_jobs(None, s) for s in ("queued", "running", "done", "failed")}
        extra = storage.status()
        failures = await storage.recent_failures(None, 5)
        expired = await storage.expired_leases()
        only = args.namespace
        vectors = (await storage.embedding_models(only)
                   if storage.capabilities.embedding_models else {})
        sources = (await storage.memory_sources(only)
                   if storage.capabilities.memory_sources else None)
        namespaces, ns_total = [], None
        if storage.capabilities.admin:
            rows, ns_total = await storage.list_namespaces(args.namespaces, 0)
            namespaces = [r.model_dump(mode="json") for r in rows]
    finally:
        await storage.close()
    info = {"storage": storage.description, "db": redact(config.db_url), "jobs": jobs,
            "extractor": choose_extractor_name(config, registries),
            "rankers": config.rankers or {n: e.options["default_weight"]
                                          for n, e in registries.rankers.entries.items()},
            "storage_status": extra, "recent_failures": failures,
            # stored vectors per embedding model id ("unrecorded": before ids were kept)
            "vectors": {m or "unrecorded": n for m, n in vectors.items()},
            # what made the current memories (of --namespace, or all): the provenance their
            # store recorded; extractor null = no store (verbatim import), "" = not recorded
            "memory_sources": sources, "scope": only,
            "workers": {"ok": expired == 0, "jobs_past_lease": expired},
            "namespace_count": ns_total, "namespaces": namespaces}
    if args.json:
        print(json.dumps(info, default=str))
    else:
        print(f"storage:   {info['storage']}")
        print(f"extractor: {info['extractor']}")
        print(f"rankers:   {', '.join(f'{k}={v}' for k, v in info['rankers'].items())}")
        print("jobs:      " + ", ".join(f"{k} {v}" for k, v in jobs.items()))
        if sources:
            scope = f" of {only!r}" if only else ""
            print(f"memories{scope} made by: " + "; ".join(
                f"{s['memories']} {_source_label(s)}" for s in sources))
        if info["vectors"]:
            print("vectors:   " + ", ".join(f"{n} by {m}" for m, n in info["vectors"].items())
                  + ("  (several models: `recall reindex` re-embeds all with the configured one)"
                     if len(info["vectors"]) > 1 else ""))
        print("workers:   " + ("ok" if not expired else
                               f"{expired} running job(s) past their lease: a worker died or is "
                               f"stuck (they are re-run up to worker.max_attempts; check the "
                               f"server log and /health)"))
        for key, val in extra.items():
            print(f"{key}: {val}")
        for f in failures:
            print(f"failed job {f.get('id')}: {f.get('error')}")
        if ns_total is not None:
            shown = f" (first {len(namespaces)})" if ns_total > len(namespaces) else ""
            print(f"namespaces: {ns_total}{shown}")
            if namespaces:
                print(f"  {'namespace':<24} {'memories':>8} {'superseded':>10} {'tokens':>6} "
                      f"{'queued':>6} {'failed':>6}  last activity")
            for n in namespaces:
                print(f"  {n['namespace'][:24]:<24} {n['active_memories']:>8} "
                      f"{n['superseded_memories']:>10} {n['active_tokens']:>6} "
                      f"{n['queued_jobs']:>6} {n['failed_jobs']:>6}  {n['last_activity'] or '-'}")
    return 0


def _source_label(source: dict[str, Any]) -> str:
    if source["extractor"] is None:
        return "imported verbatim (no extractor)"
    if not source["extractor"]:
        return "by an extractor not recorded (stored before provenance was kept)"
    detail = ", ".join(f"{k} {source[k]}" for k in ("model", "prompt_version") if source.get(k))
    return f"by {source['extractor']}" + (f" ({detail})" if detail else "")


def redact(url: str) -> str:
    """Hide a password in a database URL (user:PASSWORD@ or ?password=...) before printing it."""
    import re
    from urllib.parse import urlsplit

    password = urlsplit(url).password
    if password:
        url = url.replace(f":{password}@", ":***@", 1)
    return re.sub(r"(?i)([?&](?:ssl)?password=)[^&#]*", r"\1***", url)


def _plugins(args: argparse.Namespace) -> int:
    from ..plugins import describe_plugins, get_plugin_manager

    rows = describe_plugins(get_plugin_manager())
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"{r['name']} {r['version'] or ''}  [{r['plugin']}]  hooks: {', '.join(r['hooks']) or '-'}")
    return 0


async def _history(args: argparse.Namespace) -> int:
    storage = await _open_storage(_config(args))
    try:
        rows = told(await storage.history(args.namespace, norm_key(args.entity),
                                          norm_key(args.attribute)))
    finally:
        await storage.close()
    out = [{"id": m.id, "value": m.value, "text": m.text,
            "valid_from": m.valid_from.isoformat(),
            "valid_until": m.valid_until.isoformat() if m.valid_until else None,
            "active": m.valid_until is None} for m in rows]
    if args.json:
        print(json.dumps(out))
    elif not out:
        print(f"No history for {args.entity}/{args.attribute} in {args.namespace!r}.")
    else:
        for r in out:
            until = r["valid_until"] or "now (active)"
            print(f"{r['valid_from']} -> {until}: {r['value']!r}  ({r['text']})")
    return 0


async def _export(args: argparse.Namespace) -> int:
    from ..memory.transfer import export_lines

    storage = await _open_storage(_config(args))
    count = 0
    try:
        async for line in export_lines(storage, args.namespace, active_only=args.active_only):
            sys.stdout.write(line + "\n")
            count += 1
    finally:
        await storage.close()
    print(f"exported {count} memories from {args.namespace!r}", file=sys.stderr)
    return 0


async def _import(args: argparse.Namespace) -> int:
    import time

    from tqdm import tqdm

    from ..server.runtime import build_runtime
    from ..memory.transfer import MalformedLine, import_extract, import_verbatim, parse_lines

    try:
        with (sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")) as fh:
            rows = parse_lines(fh)
    except (MalformedLine, OSError) as exc:
        raise ConfigError(f"{args.file}: {exc}") from None
    config = _config(args)
    _setup_logging("WARNING")
    runtime = await build_runtime(config, start_worker=args.extract)
    started = time.perf_counter()
    try:
        bar = tqdm(total=len(rows), unit="mem", file=sys.stderr, disable=args.quiet)
        if args.extract:
            queued, cached = await import_extract(runtime.storage, args.namespace, rows, bar.update)
            runtime.service.job_signal.set()
            bar.close()
            bar = tqdm(total=queued + cached, unit="job", desc="extracting", file=sys.stderr,
                       disable=args.quiet)
            while True:
                pending = await runtime.storage.count_jobs(args.namespace, ("queued", "running"))
                bar.n = queued + cached - pending
                bar.refresh()
                if pending == 0:
                    break
                await asyncio.sleep(0.2)
            failed = await runtime.storage.count_jobs(args.namespace, "failed")
            summary = {"namespace": args.namespace, "lines": len(rows), "queued": queued,
                       "already_queued": cached, "failed_jobs": failed}
        else:
            embedder = runtime.embedder if not args.no_embed else None
            if embedder is not None:
                await asyncio.to_thread(embedder.wait_ready, 300)
                if not embedder.ready:
                    raise ConfigError("the embedding model did not load; retry with --no-embed "
                                      "(vectors are backfilled by the server later)")
            try:
                n = await import_verbatim(runtime.storage, args.namespace, rows, embedder,
                                          keep_ids=args.keep_ids, progress=bar.update)
            except StorageConflict as exc:
                fix = ("Import without --keep-ids (new ids are given), or import into the "
                       "namespace the rows came from." if exc.kind == "duplicate_id" else
                       "Export with history and import the whole file, or import plain lines "
                       "(without valid_from) so the fact rules settle contradictions.")
                raise ConfigError(f"import refused, nothing was imported: {exc.message} {fix}"
                                  ) from None
            summary = {"namespace": args.namespace, "lines": len(rows), "imported": n,
                       "embedded": embedder is not None}
        bar.close()
    finally:
        await runtime.close()
    summary["seconds"] = round(time.perf_counter() - started, 3)
    print(json.dumps(summary))
    return 0


async def _reindex(args: argparse.Namespace) -> int:
    import time

    from tqdm import tqdm

    from ..server.runtime import build_runtime
    from ..memory.reindex import reindex

    if args.namespace is not None and not args.namespace.strip():
        raise ConfigError("NAMESPACE must not be empty (omit it to reindex every namespace).")
    config = _config(args)
    _setup_logging("WARNING")
    runtime = await build_runtime(config, start_worker=False)
    started = time.perf_counter()
    try:
        embedder = runtime.embedder
        if embedder is None:
            raise ConfigError("no embedding model is configured (the dense ranker is off or "
                              "recall-embeddings is not installed): there is nothing to "
                              "re-embed with.")
        await asyncio.to_thread(embedder.wait_ready, 300)
        if not embedder.ready:
            status = embedder.status()
            raise ConfigError(f"the embedding model did not load: {status.get('error') or status}")
        bar = tqdm(unit="vec", desc="reindexing", file=sys.stderr, disable=args.quiet)

        def total(n: int) -> None:
            bar.total = n
            bar.refresh()

        try:
            summary = await reindex(runtime.storage, embedder, args.namespace, batch=args.batch,
                                    limit=args.limit, progress=bar.update, total=total)
        finally:
            bar.close()
    finally:
        await runtime.close()
    summary["seconds"] = round(time.perf_counter() - started, 3)
    print(json.dumps(summary))
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _db_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="PATH|URL",
                   help="SQLite file path or database URL, e.g. postgresql://user@host/db "
                        "(default: ./recall.db; env RECALL_DB_URL; db in recall.toml)")
    p.add_argument("--config", metavar="FILE", help="recall.toml to read (default: none)")


def _json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def build_parser() -> tuple[argparse.ArgumentParser, Any]:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="recall", description="Recall: self-hosted long-term memory for AI agents (MCP + A2A).",
        epilog="Flags override RECALL_* environment variables, which override recall.toml. "
               "Run `recall COMMAND --help` for a command's flags.")
    parser.add_argument("--version", action="version", version=f"recall {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("serve", help="run the server (MCP at /mcp, A2A, /health; or MCP over stdio)",
                       description="Run the server until SIGTERM or Ctrl-C.")
    _db_args(p)
    p.add_argument("--host", help="address to listen on (default: 127.0.0.1; env RECALL_HOST)")
    p.add_argument("--port", type=int, help="TCP port (default: 8765; env RECALL_PORT)")
    p.add_argument("--transport", choices=["http", "stdio"],
                   help="http: streamable HTTP at /mcp plus A2A; stdio: one MCP client on "
                        "stdin/stdout, token in RECALL_TOKEN (default: http)")
    p.add_argument("--metrics-port", type=int, metavar="PORT",
                   help="serve Prometheus metrics at http://127.0.0.1:PORT/metrics (host: "
                        "metrics_host in recall.toml) (default: off; env RECALL_METRICS_PORT)")
    p.add_argument("--log-level", type=str.upper, choices=list(LOG_LEVELS),
                   help="default: INFO; env RECALL_LOG_LEVEL")
    p.add_argument("--log-format", choices=["text", "json"],
                   help="json: one JSON object per line, third-party loggers included "
                        "(default: text; env RECALL_LOG_FORMAT)")
    p.set_defaults(afunc=_serve)

    p = sub.add_parser("create-token", help="create a bearer token for a namespace (or --admin)",
                       description="Print a new token for NAMESPACE (or an admin token with "
                                   "--admin) once; only its SHA-256 is stored.")
    p.add_argument("namespace", nargs="?",
                   help="whose memories the token reads and writes (a user or agent identity); "
                        "omitted with --admin")
    _db_args(p)
    _json_arg(p)
    p.add_argument("--admin", action="store_true",
                   help="an admin token: the admin API (/admin) and the inspector (/ui) for "
                        "every namespace; never valid on /mcp or /a2a")
    p.add_argument("--name", default="admin",
                   help="an admin token's name, shown in the audit log (default: admin)")
    p.set_defaults(afunc=_create_token)

    p = sub.add_parser("revoke-token", help="revoke a bearer token",
                       description="Revoke a token (given in full); its next request gets 401.")
    p.add_argument("token", help="the token, as printed by create-token")
    _db_args(p)
    p.set_defaults(afunc=_revoke_token)

    p = sub.add_parser("status", help="storage, queue, namespaces and plugin status")
    _db_args(p)
    _json_arg(p)
    p.add_argument("--namespaces", type=int, default=50, metavar="N",
                   help="list at most N namespaces, most recently active first (default: 50)")
    p.add_argument("--namespace", metavar="NS",
                   help="which extractor made NS's memories and vectors per model for NS only "
                        "(default: over every namespace)")
    p.set_defaults(afunc=_status)

    p = sub.add_parser("plugins", help="list installed plugins and their hooks")
    _json_arg(p)
    p.set_defaults(func=_plugins)

    p = sub.add_parser("history", help="timeline of one entity/attribute, superseded rows included")
    p.add_argument("namespace", help="the namespace to read")
    p.add_argument("--entity", required=True, help="e.g. user")
    p.add_argument("--attribute", required=True, help="e.g. editor")
    _db_args(p)
    _json_arg(p)
    p.set_defaults(afunc=_history)

    p = sub.add_parser("export", help="write a namespace's memories (current and history) as "
                                      "JSON lines to stdout")
    p.add_argument("namespace", help="the namespace to export")
    p.add_argument("--active-only", action="store_true",
                   help="only current memories (plain lines: no history, no validity times)")
    _db_args(p)
    p.set_defaults(afunc=_export)

    p = sub.add_parser("import", help="load memories from a JSON-lines file")
    p.add_argument("file", help="JSON-lines file, or - for stdin")
    p.add_argument("--namespace", required=True, help="the namespace to import into")
    _db_args(p)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--verbatim", action="store_true", default=True,
                      help="store each line as one memory (default)")
    mode.add_argument("--extract", action="store_true",
                      help="queue each line for extraction, like store_memory")
    p.add_argument("--keep-ids", action="store_true",
                   help="keep the ids in the file (re-running skips lines already imported)")
    p.add_argument("--no-embed", action="store_true", help="skip embeddings (backfilled later)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(afunc=_import)

    p = sub.add_parser(
        "reindex", help="re-embed vectors made by another embedding model (after a model change)",
        description="Re-embed every stored vector whose recorded model differs from the "
                    "configured one, in small batches, each its own transaction: a running "
                    "server keeps answering (it leaves the old vectors out of semantic search "
                    "until then). Run it again to continue after an interruption.")
    p.add_argument("namespace", nargs="?", metavar="NAMESPACE",
                   help="only this namespace (default: every namespace)")
    _db_args(p)
    p.add_argument("--batch", type=_positive, default=32, metavar="N",
                   help="vectors per batch and transaction (default: 32)")
    p.add_argument("--limit", type=_positive, metavar="N",
                   help="stop after N vectors (default: all); run again to continue")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(afunc=_reindex)

    from .admin import add_admin_commands
    add_admin_commands(sub, _db_args)
    return parser, sub


def run_async(coro):
    """asyncio.run, on uvloop when it is installed (recall-core depends on it where it
    builds): the event loop's own overhead was a measurable share of a tool call."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)


def _exit_on_sigterm() -> None:
    """As PID 1 in a container (docker run without --init) a signal with the default action
    is ignored: a `docker stop` during start-up waited its 10 s and killed (exit 137). An
    explicit handler makes SIGTERM end start-up at once; `serve` replaces it with a graceful
    one while it serves."""
    import signal

    def terminate(signum, frame) -> None:
        raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, terminate)


def add_plugin_commands(sub: Any, pm: Any) -> None:
    """The subcommands plugins register (`register_commands`), beside core's."""
    import inspect

    from ..registration import CommandRegistry

    for command in CommandRegistry.collect(pm):
        p = sub.add_parser(command.name, help=command.help, description=command.description)
        if command.database:
            _db_args(p)
        if command.arguments is not None:
            command.arguments(p)
        handler = "afunc" if inspect.iscoroutinefunction(command.handler) else "func"
        p.set_defaults(**{handler: command.handler})


def main(argv: list[str] | None = None) -> int:
    # numpy's OpenBLAS threads spin ~0.1 s after every call before they sleep: between the
    # vector searches of a busy server they burned a core (hybrid search at 100k memories:
    # 72 -> 51 ms of CPU per call over HTTP, same latency). Read once, when numpy loads, which
    # is after this line; an explicit setting in the environment wins.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    from ..plugins import get_plugin_manager

    _exit_on_sigterm()
    parser, sub = build_parser()
    try:
        add_plugin_commands(sub, get_plugin_manager())
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        if getattr(args, "afunc", None) is not None:
            return run_async(args.afunc(args))
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"recall: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `recall export ... | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141

