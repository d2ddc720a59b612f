"""Conformance suites and test helpers for Recall plugins.

Subclass the suites in a plugin's tests::

    from recall_core.testing import RankerContract, StorageContract

    class TestMyStorage(StorageContract):
        def make_storage(self, location):
            return MyStorage(location)

- `StorageContract`: the `Storage` protocol and every capability a backend declares;
- `AdminStorageContract`: the admin capability;
- `RankerContract`: the `Ranker` base class's promises;
- `plugin_manager(*plugins)`: a fresh plugin manager holding core's built-ins and exactly
  the given plugins (no installed entry point, no `RECALL_*` plugin variable leaks in);
- `registrations(pm, hook)`: what those plugins register with a registry hook.

The classes are imported lazily so that loading the pytest plugin
(`recall_core.testing.pytest_plugin`, registered under `pytest11`) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .admin_contract import AdminStorageContract
    from .storage_contract import StorageContract
    from .plugin_helpers import plugin_manager, registrations
    from .ranker_contract import RankerContract

__all__ = ["AdminStorageContract", "RankerContract", "StorageContract", "plugin_manager",
           "registrations"]

_WHERE = {"StorageContract": ".storage_contract", "AdminStorageContract": ".admin_contract",
          "RankerContract": ".ranker_contract", "plugin_manager": ".plugin_helpers",
          "registrations": ".plugin_helpers"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
