"""Fixtures live in pg_support (importable by name; `conftest` is ambiguous across suites)."""

from recall_testkit.postgres import *  # noqa: F401,F403
