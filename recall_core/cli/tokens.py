"""`recall create-token` and `recall revoke-token`: bearer tokens, through AdminService (each
creation and revocation is in the admin audit log, actor `cli:<OS user>`). Both say which
database they wrote to: a token is only good on the server that uses that database."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ConfigError, InvalidParam
from .common import (config_from_args, database_label, db_arguments, json_argument, operator,
                     operator_name)


def add_commands(sub: Any) -> None:
    p = sub.add_parser("create-token", help="create a bearer token for a namespace (or --admin)",
                       description="Print a new token for NAMESPACE (or an admin token with "
                                   "--admin) once; only its SHA-256 is stored, in the database "
                                   "--db names, which must exist (--create to start one).")
    p.add_argument("namespace", nargs="?",
                   help="whose memories the token reads and writes (a user or agent identity); "
                        "omitted with --admin")
    db_arguments(p, create=True)
    json_argument(p)
    p.add_argument("--admin", action="store_true",
                   help="an admin token: the admin API (/admin) and the inspector (/ui) for "
                        "every namespace; never valid on /mcp or /a2a")
    p.add_argument("--name", default="admin",
                   help="an admin token's name, shown in the audit log (default: admin)")
    p.add_argument("--agent", metavar="NAME",
                   help="bind the token to this agent inside NAMESPACE (default: the "
                        "namespace's owner)")
    p.add_argument("--scopes", metavar="SCOPES",
                   help="what the token may do, comma-separated: memory:read (search, "
                        "inspect, stats), memory:write (store, consolidate), memory:forget "
                        "(delete, erase); default: all three")
    p.set_defaults(afunc=create_token)

    p = sub.add_parser("revoke-token", help="revoke a bearer token",
                       description="Revoke a token (given in full); its next request gets 401.")
    p.add_argument("token", help="the token, as printed by create-token")
    db_arguments(p)
    p.set_defaults(afunc=revoke_token)


async def create_token(args: argparse.Namespace) -> int:
    if args.admin and args.namespace:
        raise ConfigError("An admin token belongs to no namespace: use `recall create-token "
                          "--admin [--name NAME]` without NAMESPACE.")
    if args.admin and (args.agent is not None or args.scopes is not None):
        raise ConfigError("--agent and --scopes are for namespace tokens; an admin token "
                          "reaches the admin API and the inspector only. Leave them out, or "
                          "drop --admin and name a NAMESPACE.")
    namespace = (args.namespace or "").strip()
    if not args.admin and not namespace:
        raise ConfigError("NAMESPACE must not be empty.")
    config = config_from_args(args)
    async with operator(config, create=args.create) as admin:
        try:
            if args.admin:
                made = await admin.create_admin_token(operator_name(), args.name)
            else:
                made = await admin.create_token(operator_name(), namespace, args.agent,
                                                args.scopes)
        except InvalidParam as exc:
            raise ConfigError(exc.message) from None
    db = database_label(config)
    if args.json:
        key = "admin" if args.admin else "namespace"
        grant = {} if args.admin else {"agent": made["agent"], "scopes": made["scopes"]}
        print(json.dumps({key: made[key], **grant, "token": made["token"], "db": db}))
    elif args.admin:
        print(f"Admin token {made['admin']!r} (shown once, store it safely; it works on /admin "
              f"and /ui, never on /mcp):")
        print(made["token"])
        print(f"Stored in {db}: valid on a server that uses this database.")
    else:
        who = f"agent {made['agent']!r} in namespace" if made["agent"] else "namespace"
        print(f"Token for {who} {namespace!r}, scopes {', '.join(made['scopes'])} (shown "
              f"once, store it safely):")
        print(made["token"])
        print(f"Stored in {db}: valid on a server that uses this database.")
    return 0


async def revoke_token(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    async with operator(config) as admin:
        from ..admin.service import NotFound  # (after the plugins: see operator())

        try:
            await admin.revoke_raw_token(operator_name(), args.token)
        except (NotFound, InvalidParam):
            print(f"No active token matches in {database_label(config)}; nothing was revoked.",
                  file=sys.stderr)
            return 1
    print(f"Token revoked in {database_label(config)}.")
    return 0
