"""`recall admin ...`: the admin API's operations from the command line, through AdminService
on the database --db names (like `recall create-token`). Audit rows name the actor
`cli:<OS user>`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import ConfigError, RecallError
from .common import config_from_args, db_arguments, json_argument, operator, operator_name


async def _with_admin(args: argparse.Namespace, body: Any) -> int:
    async with operator(config_from_args(args)) as admin:
        from ..admin.service import Unsupported  # (after the plugins: see operator())

        try:
            out = await body(admin)
        except Unsupported as exc:
            raise ConfigError(str(exc)) from None
        except RecallError as exc:
            print(f"recall: {exc.code}: {exc.message}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(out, default=str))
    else:
        _print(out)
    return 0


def _print(out: dict[str, Any]) -> None:
    if "namespaces" in out:
        for n in out["namespaces"]:
            print(f"{n['namespace']}\tmemories {n['active_memories']} (+{n['superseded_memories']} "
                  f"superseded)\ttokens {n['active_tokens']}\tjobs {n['queued_jobs']} queued, "
                  f"{n['failed_jobs']} failed\tlast activity {n['last_activity'] or '-'}")
        print(f"{out['total']} namespaces")
    elif "tokens" in out:
        for t in out["tokens"]:
            state = f"revoked {t['revoked_at']}" if t["revoked_at"] else "active"
            agent = f"agent {t['agent']}" if t.get("agent") else "owner"
            print(f"{t['token_id']}\tcreated {t['created_at']}\t{state}\t{agent}\t"
                  f"{','.join(t.get('scopes') or [])}")
    elif "jobs" in out:
        for j in out["jobs"]:
            print(f"{j['id']}\t{j['namespace']}\t{j['status']}\tattempts {j['attempts']}\t"
                  f"{j['error'] or ''}")
        print("counts: " + ", ".join(f"{k} {v}" for k, v in out["counts"].items()))
    elif "actions" in out:
        for a in out["actions"]:
            print(f"{a['at']}\t{a['actor']}\t{a['action']}\t{a['namespace'] or '-'}\t{a['result']}"
                  f"\t{a['error'] or json.dumps(a['detail'])}")
    else:
        print(json.dumps(out))


async def _namespaces(args: argparse.Namespace) -> int:
    return await _with_admin(args, lambda a: a.namespaces(args.limit, args.offset))


async def _tokens(args: argparse.Namespace) -> int:
    return await _with_admin(args, lambda a: a.tokens(args.namespace))


async def _revoke(args: argparse.Namespace) -> int:
    return await _with_admin(args, lambda a: a.revoke_token(operator_name(), args.namespace, args.token_id))


async def _erase(args: argparse.Namespace) -> int:
    return await _with_admin(args, lambda a: a.erase_namespace(operator_name(), args.namespace, args.confirm))


async def _jobs(args: argparse.Namespace) -> int:
    return await _with_admin(args, lambda a: a.jobs(args.namespace, args.status, args.limit, args.offset))


async def _retry(args: argparse.Namespace) -> int:
    return await _with_admin(args, lambda a: a.retry_job(operator_name(), args.job_id))


async def _audit(args: argparse.Namespace) -> int:
    return await _with_admin(args, lambda a: a.audit(args.limit, args.offset))


def add_commands(sub: Any) -> None:
    p = sub.add_parser("admin", help="operator commands: namespaces, tokens, erasure, jobs, audit")
    admin = p.add_subparsers(dest="admin_command", required=True)

    def cmd(name: str, func: Any, help: str) -> argparse.ArgumentParser:
        c = admin.add_parser(name, help=help)
        db_arguments(c)
        json_argument(c)
        c.set_defaults(afunc=func)
        return c

    c = cmd("namespaces", _namespaces, "namespaces with counts and last activity")
    c.add_argument("--limit", type=int, default=1000, help="at most this many (default: 1000)")
    c.add_argument("--offset", type=int, default=0, help="skip this many first (default: 0)")
    c = cmd("tokens", _tokens, "a namespace's tokens (ids, never the tokens)")
    c.add_argument("namespace", help="the namespace's name")
    c = cmd("revoke", _revoke, "revoke a namespace's token by its token_id")
    c.add_argument("namespace", help="the namespace's name")
    c.add_argument("token_id", help="16 hex digits, as `recall admin tokens` lists them")
    c = cmd("erase", _erase, "erase a namespace (memories, jobs, tasks; revokes its tokens)")
    c.add_argument("namespace", help="the namespace's name")
    c.add_argument("--confirm", required=True, help="the namespace's name again (required)")
    c = cmd("jobs", _jobs, "jobs of the queue by status")
    c.add_argument("--namespace", help="only this namespace's jobs (default: all)")
    c.add_argument("--status", default="failed", choices=["queued", "running", "done", "failed"],
                   help="default: failed")
    c.add_argument("--limit", type=int, default=50, help="at most this many (default: 50)")
    c.add_argument("--offset", type=int, default=0, help="skip this many first (default: 0)")
    c = cmd("retry", _retry, "queue a failed job again")
    c.add_argument("job_id", help="the failed job's id")
    c = cmd("audit", _audit, "audit log of admin actions, newest first")
    c.add_argument("--limit", type=int, default=50, help="at most this many (default: 50)")
    c.add_argument("--offset", type=int, default=0, help="skip this many first (default: 0)")
