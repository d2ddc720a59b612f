"""Recall storage plugin: PostgreSQL.

`pip install recall-postgres` and `RECALL_DB_URL=postgresql://user:pw@host/db`: nothing else
changes. Settings: `[plugins.postgres]` (see settings.py / README).
"""

from __future__ import annotations

from typing import Any

from recall_core import hookimpl

from .settings import PostgresSettings
from .storage import PostgresStorage

__version__ = "0.1.0"
__all__ = ["PostgresSettings", "PostgresStorage", "make_postgres", "register_storage"]


def make_postgres(url: str, settings: PostgresSettings | dict[str, Any] | None = None) -> PostgresStorage:
    if settings is None:
        settings = PostgresSettings()
    elif isinstance(settings, dict):
        settings = PostgresSettings.model_validate(settings)
    return PostgresStorage(url, settings)


@hookimpl
def register_storage(register):
    # libpq accepts both spellings; so do we. Core reads settings from [plugins.<scheme>]
    # today; `config_name` says which table we would rather share (see README).
    register("postgresql", make_postgres, settings=PostgresSettings, config_name="postgres")
    register("postgres", make_postgres, settings=PostgresSettings, config_name="postgres")
