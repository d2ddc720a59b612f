"""`recall oauth-grants NAMESPACE` and `recall revoke-grant GRANT_ID`: the OAuth grants Recall's
own authorization server made ([oauth] mode = "builtin"), on the database --db names. A revoke
is in the admin audit log (actor `cli:<OS user>`); the client's tokens answer 401 at once."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ConfigError, RecallError
from .common import config_from_args, database_label, db_arguments, json_argument, operator, operator_name


def add_commands(sub: Any) -> None:
    p = sub.add_parser("oauth-grants", help="list a namespace's OAuth grants (built-in OAuth)",
                       description="The OAuth grants of NAMESPACE, revoked ones too, newest "
                                   "first: grant id, client, agent, scopes, state.")
    p.add_argument("namespace")
    db_arguments(p)
    json_argument(p)
    p.set_defaults(afunc=list_grants)

    p = sub.add_parser("revoke-grant", help="revoke an OAuth grant (its tokens get 401)",
                       description="Revoke the OAuth grant GRANT_ID (from `recall oauth-grants`): "
                                   "its access and refresh tokens stop working at once.")
    p.add_argument("grant_id")
    p.add_argument("--namespace", help="only if the grant is this namespace's")
    db_arguments(p)
    json_argument(p)
    p.set_defaults(afunc=revoke_grant)


async def _run(args: argparse.Namespace, body: Any) -> tuple[int, Any]:
    config = config_from_args(args)
    async with operator(config) as admin:
        from ..admin.oauth_grants import OAuthGrants  # (after the plugins: see operator())
        from ..admin.service import Unsupported

        try:
            return 0, await body(OAuthGrants(admin.storage))
        except Unsupported as exc:
            raise ConfigError(str(exc)) from None
        except RecallError as exc:
            print(f"recall: {exc.code}: {exc.message} (database {database_label(config)})",
                  file=sys.stderr)
            return 1, None


async def list_grants(args: argparse.Namespace) -> int:
    code, out = await _run(args, lambda g: g.list(args.namespace))
    if code or args.json:
        if out is not None:
            print(json.dumps(out))
        return code
    for g in out["grants"]:
        state = f"revoked {g['revoked_at']}" if g["revoked_at"] else "active"
        print(f"{g['grant_id']}\t{g['client_name'] or g['client_id']}\t"
              f"{g['agent'] or 'owner'}\t{' '.join(g['scopes'])}\tgranted {g['created_at']}"
              f"\t{state}")
    print(f"{len(out['grants'])} grants")
    return 0


async def revoke_grant(args: argparse.Namespace) -> int:
    code, out = await _run(args, lambda g: g.revoke(operator_name(), args.namespace,
                                                     args.grant_id))
    if out is not None:
        print(json.dumps(out) if args.json else
              f"OAuth grant {args.grant_id} of {out['grant']['namespace']!r} revoked.")
    return code
