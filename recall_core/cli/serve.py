"""`recall serve`: the server over streamable HTTP (MCP at /mcp, A2A, the admin API, the
inspector at /ui) or MCP over stdio, until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shlex
import socket
import sys
import threading
from typing import Any

from ..config import LOG_LEVELS
from ..errors import ConfigError
from ..server.group import heartbeat
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
    p.add_argument("--workers", metavar="N", type=_workers,
                   help="server processes behind the one port, each using a core: a number, "
                        "or auto (one per CPU); HTTP only (default: 1; env RECALL_WORKERS)")
    p.add_argument("--metrics-port", type=int, metavar="PORT",
                   help="serve Prometheus metrics at http://127.0.0.1:PORT/metrics (host: "
                        "metrics_host in recall.toml) (default: off; env RECALL_METRICS_PORT)")
    p.add_argument("--log-level", type=str.upper, choices=list(LOG_LEVELS),
                   help="default: INFO; env RECALL_LOG_LEVEL")
    p.add_argument("--log-format", choices=["text", "json"],
                   help="json: one JSON object per line, third-party loggers included "
                        "(default: text; env RECALL_LOG_FORMAT)")
    p.set_defaults(afunc=serve)


def _workers(value: str) -> int | str:
    if value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 1 <= n <= 64:
        raise argparse.ArgumentTypeError(f"{value!r}: use a number of processes 1..64, or auto")
    return n


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


async def serve_http(runtime: Any, sock: Any) -> None:  # noqa: C901
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
        if server.started and (runtime.group is None or runtime.group.leader):
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

    from ..server.group import Group
    from .supervisor import resolve_workers

    config = config_from_args(args, host=args.host, port=args.port, transport=args.transport,
                              log_level=args.log_level, log_format=args.log_format,
                              metrics_port=args.metrics_port, workers=args.workers)
    setup_logging(config.log_level, config.log_format)
    pm = get_plugin_manager()
    check_config(config, Registries.from_pm(pm), middleware=True)  # before anything is created
    if config.transport == "http":
        allowed_hosts(config)  # a wildcard bind without public_url/allowed_hosts: refused now
    group = Group.from_env()
    if group is None:
        workers = resolve_workers(config.workers, config.transport)
        if workers > 1:
            return await supervise(config, pm, workers, getattr(args, "argv", None))
    socks = []
    try:
        if group is not None:  # a child of --workers: the parent bound the sockets
            socks.append(socket.socket(fileno=group.listen_fd))
            if group.metrics_fd is not None:
                socks.append(socket.socket(fileno=group.metrics_fd))
        else:
            if config.transport == "http":
                socks.append(bind(config.host, config.port))
            if config.metrics_port is not None:
                socks.append(bind(config.metrics_host, config.metrics_port))
        runtime = await build_runtime(config, pm, group=group)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    metrics_server = None
    beating = None
    try:
        if config.metrics_port is not None:
            from ..observability.metrics import instrument, serve_metrics

            instrument(runtime)  # every process records; one serves the group's sum
            if group is None or group.metrics_fd is not None:
                metrics_server = await serve_metrics(runtime, socks[-1])
                host, port = socks[-1].getsockname()[:2]
                log.info("metrics on http://%s:%d/metrics", host, port)
        if group is not None:
            beating = asyncio.create_task(heartbeat(group, lambda: beat_state(runtime)))
        if config.transport == "stdio":
            await serve_stdio(runtime)
        else:
            await serve_http(runtime, socks[0])
    finally:
        if beating is not None:
            beating.cancel()
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


def beat_state(runtime: Any) -> dict[str, Any]:
    """What this child's heartbeat tells the group's /health (server/group.py)."""
    from ..server.health import degraded

    worker = runtime.worker.health() if runtime.worker is not None else {"ok": True}
    return {"ok": worker["ok"], "degraded": degraded(runtime, detail=False, group=False)}


async def supervise(config: Any, pm: Any, workers: int, argv: list[str] | None) -> int:
    """The parent of `--workers N` (supervisor.py): bind, migrate and re-queue once, then
    keep N children serving until SIGTERM."""
    from ..plugins import Registries, build_storage
    from .supervisor import Supervisor, bind_group

    if argv is None:
        argv = sys.argv[1:]
    socks = bind_group(config.host, config.port, workers, bind)
    metrics = None
    try:
        if config.metrics_port is not None:
            metrics = bind(config.metrics_host, config.metrics_port)
        storage = build_storage(config, Registries.from_pm(pm))
        await storage.open()  # migrations run here, once, before any child opens it
        try:
            requeued = await storage.requeue_running()
        finally:
            await storage.close()
    except BaseException:
        for sock in [*socks, metrics]:
            if sock is not None:
                sock.close()
        raise
    if requeued:
        log.info("re-queued %d job(s) that were running when the server last stopped", requeued)
    how = ("SO_REUSEPORT, one socket each" if len(socks) > 1
           else "one shared socket (no balancing SO_REUSEPORT on this platform)")
    host, port = socks[0].getsockname()[:2]
    log.info("serving on %s:%d with %d worker processes (%s)", host, port, workers, how)
    return await Supervisor(argv, workers, socks, metrics, config.shutdown_grace).run()
