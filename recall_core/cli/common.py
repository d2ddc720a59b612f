"""What every `recall` command shares: its --db/--config/--json arguments, the config read
from them, the database they name (opened only when it exists, unless asked to create it),
the operator services on it, and the event loop commands run on. Public: plugin commands
(`register_commands`) may use these too."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import re
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from ..config import DEFAULT_DB_PATH, RecallConfig, load_config
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..admin.service import AdminService
    from ..contracts import Storage

T = TypeVar("T")


# -- arguments ------------------------------------------------------------------------------
def db_arguments(p: argparse.ArgumentParser, *, create: bool = False) -> None:
    """--db and --config; with `create`, also --create (the command may start a new database)."""
    p.add_argument("--db", metavar="PATH|URL",
                   help="SQLite file path or database URL, e.g. postgresql://user@host/db "
                        "(default: ./recall.db; env RECALL_DB_URL; db in recall.toml)")
    p.add_argument("--config", metavar="FILE", help="recall.toml to read (default: none)")
    if create:
        p.add_argument("--create", action="store_true",
                       help="create the database file when it does not exist yet (without it, "
                            "a missing file is an error: only `recall serve` creates one)")


def json_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def positive(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def config_from_args(args: argparse.Namespace, **flags: Any) -> RecallConfig:
    """The config as every command reads it: --config FILE and --db, then `flags` (a None
    flag is not set), over RECALL_* variables, over the file, over defaults."""
    return load_config(getattr(args, "config", None), db=getattr(args, "db", None), **flags)


# -- the database ---------------------------------------------------------------------------
def redact(url: str) -> str:
    """Hide a password in a database URL (user:PASSWORD@ or ?password=...) before printing it."""
    password = urlsplit(url).password
    if password:
        url = url.replace(f":{password}@", ":***@", 1)
    return re.sub(r"(?i)([?&](?:ssl)?password=)[^&#]*", r"\1***", url)


def _db_file(config: RecallConfig) -> Path | None:
    """The file a bare-path `db` names (the default ./recall.db included); None for a URL,
    which its storage plugin interprets, and for :memory:."""
    value = config.db or DEFAULT_DB_PATH
    if "://" in value or value == ":memory:":
        return None
    return Path(value).expanduser().resolve()


def database_label(config: RecallConfig) -> str:
    """How commands name the database to a person: the absolute file path, or the URL with
    any password hidden."""
    path = _db_file(config)
    return str(path) if path is not None else redact(config.db_url)


def require_database(config: RecallConfig, *, create: bool | None = None) -> None:
    """Refuse a database file that does not exist. Run in the wrong folder, `recall
    create-token` used to create an empty ./recall.db there and print a token the server (on
    another file) answered 401. Only `recall serve` starts a new database, and commands that
    offer --create when given it: `create` is True then, False when such a command was not
    given it, None for commands without the flag."""
    path = _db_file(config)
    if create or path is None or path.exists():
        return
    where = (f"{path} (--db not given: recall.db in the current folder)" if config.db is None
             else str(path))
    folder = ""
    if not path.parent.is_dir():
        above = next(p for p in path.parent.parents if p.exists())
        folder = (f" Its folder {path.parent} cannot exist: it is under {above}, which is a file."
                  if not above.is_dir() else f" Its folder {path.parent} does not exist.")
    other = ", or add --create to start a new, empty one there" if create is False else ""
    raise ConfigError(f"No Recall database at {where}.{folder} Pass --db with the database "
                      f"your server uses (`recall serve` prints it when it starts){other}. "
                      f"Nothing was created.")


async def open_storage(config: RecallConfig, *, create: bool | None = None) -> Storage:
    """The configured storage, opened (migrated), after `require_database(config, create)`."""
    from ..plugins import Registries, build_storage, get_plugin_manager

    storage = build_storage(config, Registries.from_pm(get_plugin_manager()))
    require_database(config, create=create)
    await storage.open()
    return storage


def operator_name() -> str:
    """Who the admin audit log says acted: `cli:<OS user>`."""
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # noqa: BLE001 - no user name in some containers
        return "cli"


@asynccontextmanager
async def operator(config: RecallConfig, *, create: bool | None = None
                   ) -> AsyncIterator[AdminService]:
    """The operator's use cases (AdminService over a MemoryService without engines) on the
    configured storage, closed afterwards. Commands read and write through it, never storage."""
    storage = await open_storage(config, create=create)
    try:
        # Imported late, after the plugin manager has loaded the plugins: importing
        # memory.service first, on its own, trips the recall_core.kit <-> search.relevance
        # import cycle (ImportError); once a storage plugin has imported kit it loads fine.
        from ..admin.service import AdminService
        from ..memory.service import MemoryService

        yield AdminService(MemoryService(storage, config), page_cap=10_000)
    finally:
        await storage.close()


# -- running --------------------------------------------------------------------------------
def setup_logging(level: str, fmt: str = "text") -> None:
    from ..observability.logs import setup_logging as setup

    setup(level, fmt)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, on uvloop when it is installed (recall-core depends on it where it
    builds): the event loop's own overhead was a measurable share of a tool call."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)
