"""`recall` command line: serve, tokens, status, plugins, history (+ plugin commands)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from typing import Any

from .config import RecallConfig, load_config
from .errors import ConfigError

log = logging.getLogger("recall")


def _setup_logging(level: str, stream=sys.stderr) -> None:
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), stream=stream,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _config(args: argparse.Namespace, **extra: Any) -> RecallConfig:
    return load_config(getattr(args, "config", None), db=getattr(args, "db", None), **extra)


async def _open_storage(config: RecallConfig):
    from .compose import Registries, build_storage
    from .plugins import get_plugin_manager

    storage = build_storage(config, Registries.from_pm(get_plugin_manager()))
    await storage.open()
    return storage


# -- serve ----------------------------------------------------------------------------------
async def _serve_http(runtime, host: str, port: int) -> None:
    import uvicorn

    from .http import build_http_app

    public_url = runtime.config.public_url or f"http://{host}:{port}"
    app = await build_http_app(runtime, public_url=public_url)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                           lifespan="on"))
    log.info("serving MCP on http://%s:%d/mcp", host, port)
    await server.serve()


async def _serve_stdio(runtime) -> None:
    from .app import build_mcp
    from .auth import hash_token, set_stdio_namespace

    token = os.environ.get("RECALL_TOKEN", "")
    namespace = await runtime.storage.namespace_for_token(hash_token(token)) if token else None
    if namespace is None:
        raise ConfigError("stdio transport needs a valid token in RECALL_TOKEN (unset, unknown "
                          "or revoked). Create one with `recall create-token NAMESPACE`.")
    set_stdio_namespace(namespace)
    mcp = await build_mcp(runtime, auth=False)
    await mcp.run_stdio_async(show_banner=False)


async def _serve(args: argparse.Namespace) -> int:
    from .app import build_runtime

    config = _config(args, host=args.host, port=args.port, transport=args.transport)
    _setup_logging(config.log_level)
    runtime = await build_runtime(config)
    try:
        if config.transport == "stdio":
            await _serve_stdio(runtime)
        else:
            await _serve_http(runtime, config.host, config.port)
    finally:
        await runtime.close()
    return 0


# -- tokens ---------------------------------------------------------------------------------
async def _create_token(args: argparse.Namespace) -> int:
    from .tokens import create_token

    if not args.namespace.strip():
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


async def _revoke_token(args: argparse.Namespace) -> int:
    from .tokens import hash_token

    storage = await _open_storage(_config(args))
    try:
        revoked = await storage.revoke_token(hash_token(args.token))
    finally:
        await storage.close()
    if not revoked:
        print("No active token matches; nothing was revoked.", file=sys.stderr)
        return 1
    print("Token revoked.")
    return 0


# -- status / plugins / history ---------------------------------------------------------
async def _status(args: argparse.Namespace) -> int:
    from .compose import Registries, choose_extractor_name
    from .plugins import get_plugin_manager

    config = _config(args)
    registries = Registries.from_pm(get_plugin_manager())
    storage = await _open_storage(config)
    try:
        jobs = {s: await storage.count_jobs(None, s) for s in ("queued", "running", "done", "failed")}
        extra = storage.status() if hasattr(storage, "status") else {}
        failures = await storage.recent_failures(None, 5)
    finally:
        await storage.close()
    info = {"storage": storage.description, "db": redact(config.db_url), "jobs": jobs,
            "extractor": choose_extractor_name(config, registries),
            "rankers": config.rankers or {n: e.extra.get("default_weight", 1.0)
                                          for n, e in registries.rankers.entries.items()},
            "storage_status": extra, "recent_failures": failures}
    if args.json:
        print(json.dumps(info, default=str))
    else:
        print(f"storage:   {info['storage']}")
        print(f"extractor: {info['extractor']}")
        print(f"rankers:   {', '.join(f'{k}={v}' for k, v in info['rankers'].items())}")
        print("jobs:      " + ", ".join(f"{k} {v}" for k, v in jobs.items()))
        for key, val in extra.items():
            print(f"{key}: {val}")
        for f in failures:
            print(f"failed job {f.get('id')}: {f.get('error')}")
    return 0


def redact(url: str) -> str:
    """Hide a password in a database URL (user:PASSWORD@ or ?password=...) before printing it."""
    import re
    from urllib.parse import urlsplit

    password = urlsplit(url).password
    if password:
        url = url.replace(f":{password}@", ":***@", 1)
    return re.sub(r"(?i)([?&](?:ssl)?password=)[^&#]*", r"\1***", url)


def _plugins(args: argparse.Namespace) -> int:
    from .plugins import describe_plugins, get_plugin_manager

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
        rows = await storage.history(args.namespace, args.entity.strip().lower(),
                                     args.attribute.strip().lower())
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
    from .transfer import export_lines

    storage = await _open_storage(_config(args))
    count = 0
    try:
        async for line in export_lines(storage, args.namespace):
            sys.stdout.write(line + "\n")
            count += 1
    finally:
        await storage.close()
    print(f"exported {count} memories from {args.namespace!r}", file=sys.stderr)
    return 0


async def _import(args: argparse.Namespace) -> int:
    import time

    from tqdm import tqdm

    from .app import build_runtime
    from .transfer import MalformedLine, import_extract, import_verbatim, parse_lines

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
            if embedder is not None and hasattr(embedder, "wait_ready"):
                await asyncio.to_thread(embedder.wait_ready, 300)
                if not embedder.ready:
                    raise ConfigError("the embedding model did not load; retry with --no-embed "
                                      "(vectors are backfilled by the server later)")
            n = await import_verbatim(runtime.storage, args.namespace, rows, embedder,
                                      keep_ids=args.keep_ids, progress=bar.update)
            summary = {"namespace": args.namespace, "lines": len(rows), "imported": n,
                       "embedded": embedder is not None}
        bar.close()
    finally:
        await runtime.close()
    summary["seconds"] = round(time.perf_counter() - started, 3)
    print(json.dumps(summary))
    return 0


def _db_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="database path or URL (default: ./recall.db; env RECALL_DB_URL)")
    p.add_argument("--config", help="recall.toml to read")


def build_parser() -> tuple[argparse.ArgumentParser, Any]:
    parser = argparse.ArgumentParser(prog="recall", description="Recall: long-term memory for AI agents")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("serve", help="run the MCP server (HTTP at /mcp, or stdio)")
    _db_args(p)
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--transport", choices=["http", "stdio"])
    p.set_defaults(afunc=_serve)

    p = sub.add_parser("create-token", help="create a bearer token for a namespace")
    p.add_argument("namespace")
    _db_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(afunc=_create_token)

    p = sub.add_parser("revoke-token", help="revoke a bearer token")
    p.add_argument("token")
    _db_args(p)
    p.set_defaults(afunc=_revoke_token)

    p = sub.add_parser("status", help="storage, queue and plugin status")
    _db_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(afunc=_status)

    p = sub.add_parser("plugins", help="list installed plugins and their hooks")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_plugins)

    p = sub.add_parser("history", help="timeline of one entity/attribute, superseded rows included")
    p.add_argument("namespace")
    p.add_argument("--entity", required=True)
    p.add_argument("--attribute", required=True)
    _db_args(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(afunc=_history)

    p = sub.add_parser("export", help="write a namespace's active memories as JSON lines to stdout")
    p.add_argument("namespace")
    _db_args(p)
    p.set_defaults(afunc=_export)

    p = sub.add_parser("import", help="load memories from a JSON-lines file")
    p.add_argument("file", help="JSON-lines file, or - for stdin")
    p.add_argument("--namespace", required=True)
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


def main(argv: list[str] | None = None) -> int:
    # numpy's OpenBLAS threads spin ~0.1 s after every call before they sleep: between the
    # vector searches of a busy server they burned a core (hybrid search at 100k memories:
    # 72 -> 51 ms of CPU per call over HTTP, same latency). Read once, when numpy loads, which
    # is after this line; an explicit setting in the environment wins.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    from .plugins import get_plugin_manager

    parser, sub = build_parser()
    try:
        get_plugin_manager().hook.register_commands(cli=sub)
        args = parser.parse_args(argv)
        if getattr(args, "afunc", None) is not None:
            return run_async(args.afunc(args))
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"recall: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
