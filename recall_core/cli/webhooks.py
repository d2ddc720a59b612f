"""`recall webhooks ...`: a namespace's webhook subscriptions and delivery log from the
shell, through the same use cases as the admin API (recall_core.events.subscriptions); every
change is in the admin audit log (actor `cli:<OS user>`), never a secret. A new secret is
printed once."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import ConfigError, RecallError
from .common import config_from_args, db_arguments, json_argument, operator, operator_name


def add_commands(sub: Any) -> None:
    p = sub.add_parser("webhooks", help="webhook subscriptions and deliveries of a namespace",
                       description="Signed webhooks (Standard Webhooks) from the outbox: "
                                   "subscribe a URL to a namespace's events, see the delivery "
                                   "log, replay a dead delivery, rotate a secret.")
    actions = p.add_subparsers(dest="webhooks_command", metavar="ACTION", required=True)
    for name, help_, extra in (
            ("list", "list a namespace's subscriptions (never their secrets)", ()),
            ("create", "subscribe URL to EVENTS (the secret is printed once)",
             (("url", {}), ("events", {"nargs": "+", "help": "event types, e.g. "
                                                         "extraction.completed"}))),
            ("delete", "delete a subscription and its deliveries", (("subscription_id", {}),)),
            ("rotate", "add a new secret (both sign until --finish)", (("subscription_id", {}),)),
            ("deliveries", "the delivery log, newest first", ()),
            ("replay", "send a dead delivery again", (("delivery_id", {}),))):
        a = actions.add_parser(name, help=help_, description=help_)
        a.add_argument("namespace")
        for arg, kw in extra:
            a.add_argument(arg, **kw)
        if name == "create":
            a.add_argument("--include-text", action="store_true",
                           help="add memory texts to extraction events")
        if name == "rotate":
            a.add_argument("--finish", action="store_true", help="keep only the newest secret")
        if name == "deliveries":
            a.add_argument("--status", choices=("pending", "delivered", "dead"))
            a.add_argument("--limit", type=int, default=50)
        db_arguments(a)
        json_argument(a)
        a.set_defaults(afunc=run)


async def run(args: argparse.Namespace) -> int:
    from ..events.subscriptions import WebhookAdmin

    config = config_from_args(args)
    async with operator(config) as admin:
        hooks = WebhookAdmin(admin.storage, admin.service.config)
        who, ns = operator_name(), args.namespace
        command = args.webhooks_command
        try:
            if command == "list":
                out: Any = await hooks.list(ns)
            elif command == "deliveries":
                out = await hooks.deliveries(ns, args.status, args.limit)
            else:
                out = await admin._audited(who, f"{command}_webhook", ns, _detail(args),
                                           lambda: _change(hooks, args))
        except RecallError as exc:
            raise ConfigError(exc.message) from None
    if args.json or command in ("list", "deliveries"):
        print(json.dumps(out, indent=None if args.json else 2))
    else:
        _say(command, out)
    return 0


def _detail(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in vars(args).items()
            if k in ("url", "events", "subscription_id", "delivery_id", "finish")}


async def _change(hooks: Any, args: argparse.Namespace) -> dict[str, Any]:
    ns, command = args.namespace, args.webhooks_command
    if command == "create":
        return await hooks.create(ns, args.url, args.events, args.include_text)
    if command == "delete":
        return await hooks.delete(ns, args.subscription_id)
    if command == "rotate":
        return await hooks.rotate(ns, args.subscription_id, args.finish)
    return await hooks.replay(ns, args.delivery_id)


def _say(command: str, out: dict[str, Any]) -> None:
    if "secret" in out:
        print(f"Subscription {out['id']} of namespace {out['namespace']!r} -> {out['url']} "
              f"({', '.join(out['events'])}).")
        print("Its signing secret (shown once; give it to the receiver, store it safely):")
        print(out["secret"])
    else:
        print(json.dumps(out))
