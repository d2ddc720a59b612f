"""Conformance suites for Recall plugins.

Subclass `StorageContract` in a backend's tests to check it against the `Storage` protocol::

    from recall_core.testing import StorageContract

    class TestMyStorage(StorageContract):
        def make_storage(self, location):
            return MyStorage(location)

The contract classes are imported lazily so that loading the pytest plugin
(`recall_core.testing.pytest_plugin`, registered under `pytest11`) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .contract import StorageContract

__all__ = ["StorageContract"]


def __getattr__(name: str) -> Any:
    if name == "StorageContract":
        from .contract import StorageContract

        return StorageContract
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
