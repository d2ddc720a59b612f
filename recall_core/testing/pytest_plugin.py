"""pytest plugin shipped with recall-core (entry point `pytest11: recall`).

Loaded into every pytest run of an environment where recall-core is installed, so it must stay
cheap to import: it registers the markers the conformance suites use and one fixture, and
imports nothing heavy at module level.
"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "recall_contract: a test from a recall_core.testing conformance suite")
    config.addinivalue_line(
        "markers", "recall_capability(name): needs an optional backend capability "
                   "(fulltext, vectors); skipped when the backend declares it unsupported")


@pytest.fixture
def recall_plugin_manager() -> Any:
    """A fresh plugin manager without installed entry points, core's built-ins or `RECALL_*`
    plugin variables, so a test sees only the plugins it registers itself (register in the
    test, unregister in `finally`)."""
    from ..plugins import get_plugin_manager

    return get_plugin_manager(load_entrypoints=False, defaults=False, environment=False)
