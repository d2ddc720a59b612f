"""`recall status` (storage, queue, workers, what made the memories, namespaces, through
AdminService.status) and `recall plugins` (what is installed, which hooks each implements)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import config_from_args, db_arguments, json_argument, operator, positive, redact


def add_commands(sub: Any) -> None:
    p = sub.add_parser("status", help="storage, queue, namespaces and plugin status")
    db_arguments(p)
    json_argument(p)
    p.add_argument("--namespaces", type=positive, default=50, metavar="N",
                   help="list at most N namespaces, most recently active first (default: 50)")
    p.add_argument("--namespace", metavar="NS",
                   help="which extractor made NS's memories and vectors per model for NS only "
                        "(default: over every namespace)")
    p.set_defaults(afunc=status)

    p = sub.add_parser("plugins", help="list installed plugins and their hooks")
    json_argument(p)
    p.set_defaults(func=plugins)


async def status(args: argparse.Namespace) -> int:
    from ..plugins import Registries, choose_extractor_name, get_plugin_manager
    from .preflight import check_config

    config = config_from_args(args)
    registries = Registries.from_pm(get_plugin_manager())
    check_config(config, registries)
    async with operator(config) as admin:
        report = await admin.status(args.namespace, args.namespaces)
    info = {"storage": report.pop("storage"), "db": redact(config.db_url),
            "extractor": choose_extractor_name(config, registries),
            "rankers": config.rankers or {n: e.options["default_weight"]
                                          for n, e in registries.rankers.entries.items()},
            **report}
    if args.json:
        print(json.dumps(info, default=str))
    else:
        _print(info)
    return 0


def _print(info: dict[str, Any]) -> None:
    print(f"storage:   {info['storage']}")
    print(f"extractor: {info['extractor']}")
    print(f"rankers:   {', '.join(f'{k}={v}' for k, v in info['rankers'].items())}")
    print("jobs:      " + ", ".join(f"{k} {v}" for k, v in info["jobs"].items()))
    if info["memory_sources"]:
        scope = f" of {info['scope']!r}" if info["scope"] else ""
        print(f"memories{scope} made by: " + "; ".join(
            f"{s['memories']} {_source_label(s)}" for s in info["memory_sources"]))
    if info["vectors"]:
        print("vectors:   " + ", ".join(f"{n} by {m}" for m, n in info["vectors"].items())
              + ("  (several models: `recall reindex` re-embeds all with the configured one)"
                 if len(info["vectors"]) > 1 else ""))
    expired = info["workers"]["jobs_past_lease"]
    print("workers:   " + ("ok" if not expired else
                           f"{expired} running job(s) past their lease: a worker died or is "
                           f"stuck (they are re-run up to worker.max_attempts; check the "
                           f"server log and /health)"))
    for key, val in info["storage_status"].items():
        print(f"{key}: {val}")
    for f in info["recent_failures"]:
        print(f"failed job {f.get('id')}: {f.get('error')}")
    if info.get("webhooks"):
        w = info["webhooks"]
        print(f"webhooks:  {w['pending']} pending, {w['delivered']} delivered, {w['dead']} dead"
              + ("  (`recall webhooks deliveries NS --status dead`, then replay)"
                 if w["dead"] else ""))
    _print_namespaces(info["namespace_count"], info["namespaces"])


def _print_namespaces(total: int | None, namespaces: list[dict[str, Any]]) -> None:
    if total is None:  # storage without the admin capability
        return
    shown = f" (first {len(namespaces)})" if total > len(namespaces) else ""
    print(f"namespaces: {total}{shown}")
    if namespaces:
        print(f"  {'namespace':<24} {'memories':>8} {'superseded':>10} {'tokens':>6} "
              f"{'queued':>6} {'failed':>6}  last activity")
    for n in namespaces:
        print(f"  {n['namespace'][:24]:<24} {n['active_memories']:>8} "
              f"{n['superseded_memories']:>10} {n['active_tokens']:>6} "
              f"{n['queued_jobs']:>6} {n['failed_jobs']:>6}  {n['last_activity'] or '-'}")


def _source_label(source: dict[str, Any]) -> str:
    if source["extractor"] is None:
        return "imported verbatim (no extractor)"
    if not source["extractor"]:
        return "by an extractor not recorded (stored before provenance was kept)"
    detail = ", ".join(f"{k} {source[k]}" for k in ("model", "prompt_version") if source.get(k))
    return f"by {source['extractor']}" + (f" ({detail})" if detail else "")


def plugins(args: argparse.Namespace) -> int:
    from ..plugins import describe_plugins, get_plugin_manager

    rows = describe_plugins(get_plugin_manager())
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(f"{r['name']} {r['version'] or ''}  [{r['plugin']}]  hooks: {', '.join(r['hooks']) or '-'}")
    return 0
