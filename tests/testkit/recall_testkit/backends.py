"""The two storage backends core tests run on: SQLite always, Postgres when
RECALL_TEST_PG_URL points at a database (skipped with the reason otherwise)."""

from __future__ import annotations

import os

import pytest

PG_URL = os.environ.get("RECALL_TEST_PG_URL")
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.skipif(
    not PG_URL, reason="RECALL_TEST_PG_URL not set: the Postgres half of this test"))]


def bundled(*, postgres: bool = False, embeddings: bool = False):
    """A fresh plugin manager with the bundled plugins a test needs (SQLite and the
    extractors; PostgreSQL and the embeddings on request), never what else is installed."""
    import recall_extractors
    import recall_sqlite
    from recall_core.testing import plugin_manager

    plugins, names = [recall_sqlite, recall_extractors], ["sqlite", "extractors"]
    if postgres:
        import recall_postgres

        plugins.append(recall_postgres)
        names.append("postgres")
    if embeddings:
        import recall_embeddings

        plugins.append(recall_embeddings)
        names.append("embeddings")
    return plugin_manager(*plugins, names=names)
