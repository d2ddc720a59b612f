"""Plugin managers for tests that see exactly the plugins a test gives them."""

from __future__ import annotations

import pluggy

from ..plugins import get_plugin_manager
from ..registration import Registry, collect


def plugin_manager(*plugins: object, names: list[str] | None = None) -> pluggy.PluginManager:
    """A fresh plugin manager with core's built-in plugins and `plugins` (modules or
    objects with hookimpls), registered under `names` (default: their module name or
    `test-plugin-N`). Installed entry points and `RECALL_LOAD_PLUGINS` /
    `RECALL_DISABLE_PLUGINS` / `RECALL_PLUGIN_MODULES` are ignored, so what a developer has
    installed or exported never changes a test."""
    pm = get_plugin_manager(load_entrypoints=False, environment=False)
    for i, plugin in enumerate(plugins):
        name = names[i] if names else getattr(plugin, "__name__", f"test-plugin-{i}")
        pm.register(plugin, name=name)
    return pm


def registrations(pm: pluggy.PluginManager, hook: str) -> Registry:
    """What the plugins of `pm` register with `hook` ("register_storage", "register_rankers",
    "register_extractors" or "register_middleware"), as the server collects it at start-up."""
    return collect(pm, hook)
