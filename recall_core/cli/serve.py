"""`recall serve`: the server over streamable HTTP (MCP at /mcp, A2A, the admin API, the
inspector at /ui) or MCP over stdio, until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shlex
import threading
from typing import Any

from ..config import LOG_LEVELS
from ..errors import ConfigError
from .common import config_from_args, database_label, db_arguments, setup_logging

log = logging.getLogger("recall")


def add_commands(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the server (MCP at /mcp, A2A, /health; or MCP over stdio)",
                       description="Run the server until SIGTERM or Ctrl-C. It creates the "
                                   "database file when it does not exist.")
    db_arguments(p)
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
    p.set_defaults(afunc=serve)


def bind(host: str, port: int):
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


def announce(runtime: Any, base: str, listening: str) -> None:
    """The start-up lines: where agents connect, where a person looks, and the exact command
    that makes a token this server accepts (a token made on another database gets 401)."""
    where = "" if base == listening else f"listening on {listening}; "
    log.info("serving MCP on %s/mcp (%sA2A card at /.well-known/agent-card.json)", base, where)
    if runtime.inspector is not None:
        log.info("inspector on %s/ui, admin API on %s/admin (sign in with a token)", base, base)
    db = database_label(runtime.config)
    log.info("database %s; create a token with: recall create-token NAMESPACE --db %s "
             "(--admin instead of NAMESPACE: every namespace in the inspector)",
             db, shlex.quote(db))


async def serve_http(runtime: Any, sock: Any) -> None:
    import signal

    import uvicorn

    from ..server.app import build_http_app
    from ..server.warmup import warm_up

    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    listening = f"http://{host}:{port}"
    public_url = runtime.config.public_url or listening
    app = await build_http_app(runtime, public_url=public_url)
    await warm_up(runtime.mcp)
    # log_config=None: uvicorn logs through our handler (text or JSON), not its own formats.
    server = uvicorn.Server(uvicorn.Config(
        app, log_level="warning", lifespan="on", log_config=None,
        timeout_graceful_shutdown=runtime.config.shutdown_grace))

    async def started() -> None:
        while not server.started and not server.should_exit:
            await asyncio.sleep(0.02)
        if server.started:
            announce(runtime, public_url, listening)

    announcer = asyncio.create_task(started())
    # uvicorn stops on SIGTERM/SIGINT, then re-raises the signal to the handler that was in
    # place before it: with Python's defaults that killed the process before the runtime was
    # closed (worker stopped, audit batch written). This handler just notes the signal, so
    # serve() returns and shutdown finishes; exit code 0 for a requested stop.
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


async def serve_stdio(runtime: Any) -> None:
    from ..server.auth import hash_token, principal_of, set_stdio_namespace
    from ..server.mcp.server import build_mcp

    token = os.environ.get("RECALL_TOKEN", "")
    grant = await runtime.storage.grant_for_token(hash_token(token)) if token else None
    if grant is None:
        raise ConfigError("stdio transport needs a valid token in RECALL_TOKEN (unset, unknown "
                          "or revoked). Create one with `recall create-token NAMESPACE --db "
                          f"{shlex.quote(database_label(runtime.config))}`.")
    set_stdio_namespace(grant.namespace, runtime.storage, token, principal_of(grant))
    mcp = await build_mcp(runtime, auth=False)
    await mcp.run_stdio_async(show_banner=False)


async def serve(args: argparse.Namespace) -> int:
    from ..plugins import Registries, get_plugin_manager
    # Imported before setup_logging: importing fastmcp installs its own (rich) handler on
    # the "fastmcp" logger, which setup_logging then replaces; imported later, fastmcp 4.2's
    # warnings bypassed --log-format json as multi-line rich text.
    from ..server.app import allowed_hosts
    from ..server.runtime import build_runtime
    from .preflight import check_config

    config = config_from_args(args, host=args.host, port=args.port, transport=args.transport,
                              log_level=args.log_level, log_format=args.log_format,
                              metrics_port=args.metrics_port)
    setup_logging(config.log_level, config.log_format)
    pm = get_plugin_manager()
    check_config(config, Registries.from_pm(pm), middleware=True)  # before anything is created
    socks = []
    if config.transport == "http":
        allowed_hosts(config)  # a wildcard bind without public_url/allowed_hosts: refused now
    try:
        if config.transport == "http":
            socks.append(bind(config.host, config.port))
        if config.metrics_port is not None:
            socks.append(bind(config.metrics_host, config.metrics_port))
        runtime = await build_runtime(config, pm)
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
            await serve_stdio(runtime)
        else:
            await serve_http(runtime, socks[0])
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
