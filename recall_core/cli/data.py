"""A namespace's data from the command line: `recall history` (one fact's timeline, through
MemoryService.history), `recall export` and `recall import` (JSON lines) and `recall reindex`
(vectors of another embedding model), through AdminService."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from ..errors import ConfigError, StorageConflict
from .common import (config_from_args, db_arguments, json_argument, operator, operator_name,
                     positive, require_database, setup_logging)


def add_commands(sub: Any) -> None:
    p = sub.add_parser("history", help="timeline of one entity/attribute, superseded rows included")
    p.add_argument("namespace", help="the namespace to read")
    p.add_argument("--entity", required=True, help="e.g. user")
    p.add_argument("--attribute", required=True, help="e.g. editor")
    db_arguments(p)
    json_argument(p)
    p.set_defaults(afunc=history)

    p = sub.add_parser("export", help="write a namespace's memories (current and history) as "
                                      "JSON lines to stdout")
    p.add_argument("namespace", help="the namespace to export")
    p.add_argument("--active-only", action="store_true",
                   help="only current memories (plain lines: no history, no validity times)")
    db_arguments(p)
    p.set_defaults(afunc=export)

    p = sub.add_parser("import", help="load memories from a JSON-lines file")
    p.add_argument("file", help="JSON-lines file, or - for stdin")
    p.add_argument("--namespace", required=True, help="the namespace to import into")
    db_arguments(p, create=True)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--verbatim", action="store_true", default=True,
                      help="store each line as one memory (default)")
    mode.add_argument("--extract", action="store_true",
                      help="queue each line for extraction, like store_memory")
    p.add_argument("--keep-ids", action="store_true",
                   help="keep the ids in the file (re-running skips lines already imported)")
    p.add_argument("--no-embed", action="store_true", help="skip embeddings (backfilled later)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(afunc=import_)

    p = sub.add_parser(
        "reindex", help="re-embed vectors made by another embedding model (after a model change)",
        description="Re-embed every stored vector whose recorded model differs from the "
                    "configured one, in small batches, each its own transaction: a running "
                    "server keeps answering (it leaves the old vectors out of semantic search "
                    "until then). Run it again to continue after an interruption.")
    p.add_argument("namespace", nargs="?", metavar="NAMESPACE",
                   help="only this namespace (default: every namespace)")
    db_arguments(p)
    p.add_argument("--batch", type=positive, default=32, metavar="N",
                   help="vectors per batch and transaction (default: 32)")
    p.add_argument("--limit", type=positive, metavar="N",
                   help="stop after N vectors (default: all); run again to continue")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(afunc=reindex)


async def history(args: argparse.Namespace) -> int:
    async with operator(config_from_args(args)) as admin:
        rows = await admin.service.history(args.namespace, args.entity, args.attribute)
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


async def export(args: argparse.Namespace) -> int:
    count = 0
    async with operator(config_from_args(args)) as admin:
        lines = await admin.export(operator_name(), args.namespace, active_only=args.active_only)
        async for line in lines:
            sys.stdout.write(line + "\n")
            count += 1
    print(f"exported {count} memories from {args.namespace!r}", file=sys.stderr)
    return 0


async def _runtime(args: argparse.Namespace, *, start_worker: bool,
                   create: bool | None = None) -> Any:
    """A runtime with the configured engines (the embedding model, the extractor), after
    the config and the database are checked."""
    from ..plugins import Registries, get_plugin_manager
    from ..server.runtime import build_runtime
    from .preflight import check_config

    config = config_from_args(args)
    pm = get_plugin_manager()
    check_config(config, Registries.from_pm(pm))
    require_database(config, create=create)
    setup_logging("WARNING")
    return await build_runtime(config, pm, start_worker=start_worker)


async def _ready(embedder: Any, fix: str) -> None:
    await asyncio.to_thread(embedder.wait_ready, 300)
    if not embedder.ready:
        status = embedder.status()
        raise ConfigError(f"the embedding model did not load ({status.get('error') or status}); "
                          f"{fix}")


async def import_(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..memory.transfer import MalformedLine, parse_lines

    try:
        with (sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")) as fh:
            rows = parse_lines(fh)
    except (MalformedLine, OSError) as exc:
        raise ConfigError(f"{args.file}: {exc}") from None
    lines = [line for _, line in rows]
    runtime = await _runtime(args, start_worker=args.extract, create=args.create)
    started = time.perf_counter()
    try:
        from ..admin.service import AdminService

        admin = AdminService(runtime.service, page_cap=10_000)
        embed = not args.extract and not args.no_embed and runtime.embedder is not None
        if embed:
            await _ready(runtime.embedder, "retry with --no-embed (vectors are backfilled by "
                                           "the server later)")
        bar = tqdm(total=len(rows), unit="mem", file=sys.stderr, disable=args.quiet)
        try:
            done = await admin.import_memories(operator_name(), args.namespace, lines,
                                               extract=args.extract, keep_ids=args.keep_ids,
                                               embed=embed, progress=bar.update)
        except StorageConflict as exc:
            fix = ("Import without --keep-ids (new ids are given), or import into the "
                   "namespace the rows came from." if exc.kind == "duplicate_id" else
                   "Export with history and import the whole file, or import plain lines "
                   "(without valid_from) so the fact rules settle contradictions.")
            raise ConfigError(f"import refused, nothing was imported: {exc.message} {fix}") from None
        finally:
            bar.close()
        summary = {"namespace": args.namespace, **done}
        if args.extract:
            summary["failed_jobs"] = await _extracted(admin, args, done)
        else:
            summary["embedded"] = embed
    finally:
        await runtime.close()
    summary["seconds"] = round(time.perf_counter() - started, 3)
    print(json.dumps(summary))
    return 0


async def _extracted(admin: Any, args: argparse.Namespace, done: dict[str, Any]) -> int:
    """Wait until the namespace's queue is empty (the worker extracts); its failed jobs."""
    from tqdm import tqdm

    jobs = done["queued"] + done["already_queued"]
    bar = tqdm(total=jobs, unit="job", desc="extracting", file=sys.stderr, disable=args.quiet)
    try:
        while True:
            counts = (await admin.jobs(args.namespace, "failed", 1, 0))["counts"]
            pending = counts["queued"] + counts["running"]
            bar.n = jobs - pending
            bar.refresh()
            if pending == 0:
                return counts["failed"]
            await asyncio.sleep(0.2)
    finally:
        bar.close()


async def reindex(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    if args.namespace is not None and not args.namespace.strip():
        raise ConfigError("NAMESPACE must not be empty (omit it to reindex every namespace).")
    runtime = await _runtime(args, start_worker=False)
    started = time.perf_counter()
    try:
        from ..admin.service import AdminService

        if runtime.embedder is None:
            raise ConfigError("no embedding model is configured (the dense ranker is off or "
                              "recall-embeddings is not installed): there is nothing to "
                              "re-embed with.")
        await _ready(runtime.embedder, "check the embeddings plugin's settings")
        bar = tqdm(unit="vec", desc="reindexing", file=sys.stderr, disable=args.quiet)

        def total(n: int) -> None:
            bar.total = n
            bar.refresh()

        try:
            summary = await AdminService(runtime.service).reindex(
                operator_name(), args.namespace, batch=args.batch, limit=args.limit,
                progress=bar.update, total=total)
        finally:
            bar.close()
    finally:
        await runtime.close()
    summary["seconds"] = round(time.perf_counter() - started, 3)
    print(json.dumps(summary))
    return 0
