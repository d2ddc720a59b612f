"""Shared by every test folder of the repository (tests/, plugins/*/tests, examples, bench).

A developer's `RECALL_*` variables (a database URL, an extractor, plugins to load or skip)
must never change what a test sees: they are removed before any test or fixture runs, so
in-process configs and the servers tests start as subprocesses read only what the test
gives them. The test suite's own knobs are kept: `RECALL_TEST_*` (RECALL_TEST_PG_URL opts
into the PostgreSQL tests) and TEST_KNOBS. Tests build their plugin managers with
`recall_core.testing.plugin_manager`, so installed entry points do not leak in either.
"""

from __future__ import annotations

import os

#: Variables that tune the tests themselves, not the product.
TEST_KNOBS = {"RECALL_FACT_MODEL_EXAMPLES", "RECALL_FUZZ_EXAMPLES", "RECALL_SCREENSHOTS"}


def pytest_configure(config) -> None:
    for name in list(os.environ):
        if (name.startswith("RECALL_") and not name.startswith("RECALL_TEST_")
                and name not in TEST_KNOBS):
            os.environ.pop(name)
