"""Recall storage plugin: embedded SQLite (aiosqlite, WAL, FTS5, numpy vectors).

Registered for the `sqlite` URL scheme: `sqlite:////abs/path/recall.db` (a bare path in the
config means the same), `sqlite:///relative.db`, or `sqlite:///:memory:` (one process only).
Settings come from `[plugins.sqlite]`, see `SQLiteSettings`.
"""

from __future__ import annotations

from typing import Any

from recall_core import hookimpl

from .connection import path_from_url
from .settings import SQLiteSettings
from .storage import SQLiteStorage

__all__ = ["SQLiteSettings", "SQLiteStorage", "make_storage", "register_storage"]


def make_storage(url: str, settings: SQLiteSettings | dict[str, Any] | None = None) -> SQLiteStorage:
    """Storage factory for `sqlite://` URLs (not opened yet: core calls `open()`)."""
    if not isinstance(settings, SQLiteSettings):
        settings = SQLiteSettings.model_validate(settings or {})
    return SQLiteStorage(path_from_url(url), settings)


@hookimpl
def register_storage(register: Any) -> None:
    register("sqlite", make_storage, settings=SQLiteSettings)


@hookimpl
def register_commands(register: Any) -> None:
    from . import backup

    register("backup", backup.run, help="copy the SQLite database while the server runs",
             description="Write a consistent copy of the SQLite database to DEST (online: the "
                         "server may keep running). PostgreSQL: use pg_dump.",
             arguments=backup.arguments, database=True)
