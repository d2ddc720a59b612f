"""The two storage backends core tests run on: SQLite always, Postgres when
RECALL_TEST_PG_URL points at a database (skipped with the reason otherwise)."""

from __future__ import annotations

import os

import pytest

PG_URL = os.environ.get("RECALL_TEST_PG_URL")
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.skipif(
    not PG_URL, reason="RECALL_TEST_PG_URL not set: the Postgres half of this test"))]
