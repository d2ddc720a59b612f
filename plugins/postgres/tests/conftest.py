"""Fixtures live in pg_support (importable by name; `conftest` is ambiguous across suites)."""

from pg_support import *  # noqa: F401,F403
