"""The `recall` command: one module per command group adds its subcommands (serve, tokens,
status, data, admin), plugins add theirs (`register_commands`), and `main` runs the one asked
for. What commands share (arguments, config, database, services) is in `common`."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import threading
from typing import Any

from ..errors import ConfigError
from . import admin, data, oauth, serve, status, tokens, webhooks
from .common import db_arguments, run_async

__all__ = ["add_plugin_commands", "build_parser", "main", "run_async"]

#: The modules whose `add_commands(sub)` make the built-in subcommands, in `--help` order.
COMMAND_GROUPS = (serve, tokens, status, data, admin, oauth, webhooks)


def build_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The parser with every built-in command, and its subparsers for plugin commands."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="recall", description="Recall: self-hosted long-term memory for AI agents (MCP + A2A).",
        epilog="Flags override RECALL_* environment variables, which override recall.toml. "
               "Run `recall COMMAND --help` for a command's flags.")
    parser.add_argument("--version", action="version", version=f"recall {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_commands(sub)
    return parser, sub


def add_plugin_commands(sub: Any, pm: Any) -> None:
    """The subcommands plugins register (`register_commands`), beside core's."""
    from ..registration import CommandRegistry

    for command in CommandRegistry.collect(pm):
        p = sub.add_parser(command.name, help=command.help, description=command.description)
        if command.database:
            db_arguments(p)
        if command.arguments is not None:
            command.arguments(p)
        handler = "afunc" if inspect.iscoroutinefunction(command.handler) else "func"
        p.set_defaults(**{handler: command.handler})


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
        # `serve --workers N` starts its children with the same arguments.
        args.argv = list(sys.argv[1:] if argv is None else argv)
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
