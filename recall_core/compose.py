"""Build plugin objects from the registries and the config: storage by URL scheme, the
extractor by name, rankers by weight. Free of the MCP server stack, so storage-only CLI
commands (create-token, status, export) start fast."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pluggy

from .config import RecallConfig, plugin_settings
from .errors import ConfigError, PluginError
from .plugins import Registry, collect
from .protocols import Storage
from .search import RankerSlot


# Our plugins' folders in the Recall checkout, for "what to install" hints only.
OUR_STORAGE_PLUGINS = {"sqlite": "sqlite", "postgres": "postgres", "postgresql": "postgres"}


def checkout_install(plugin: str) -> str:
    """How to install one of our plugins: from the checkout, never by name from an index
    (recall-core and recall-sqlite are other projects' names there)."""
    return (f"recall-{plugin} comes from the Recall checkout: pip install -e plugins/{plugin}; "
            f"it is not on PyPI, where that name may be another project")


@dataclass
class Registries:
    storage: Registry
    rankers: Registry
    extractors: Registry
    middleware: Registry

    @classmethod
    def from_pm(cls, pm: pluggy.PluginManager) -> Registries:
        return cls(collect(pm, "register_storage", "storage backend"),
                   collect(pm, "register_rankers", "ranker"),
                   collect(pm, "register_extractors", "extractor"),
                   collect(pm, "register_middleware", "middleware"))


def build_plugin(entry, config: RecallConfig, *args: Any) -> Any:
    # A plugin can name its config table (postgres registers two URL schemes, one table).
    settings = plugin_settings(config, entry.extra.get("config_name", entry.name), entry.settings)
    try:
        return entry.factory(*args, settings)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - start-up failure names the plugin
        raise PluginError(f'Plugin "{entry.plugin}" failed to build {entry.name!r}: '
                          f"{type(exc).__name__}: {exc}") from exc


def build_storage(config: RecallConfig, registries: Registries) -> Storage:
    url = config.db_url
    scheme = url.split("://", 1)[0].split("+", 1)[0].lower()
    try:
        entry = registries.storage.get(scheme)
    except PluginError:
        installed = ", ".join(registries.storage.names()) or "none"
        ours = OUR_STORAGE_PLUGINS.get(scheme)
        hint = f" ({checkout_install(ours)})" if ours else ""
        raise PluginError(f"No storage plugin handles database URLs starting with {scheme}://. "
                          f"Installed schemes: {installed}. Install the matching plugin{hint} "
                          f"or change --db / RECALL_DB_URL.") from None
    return build_plugin(entry, config, url)


def choose_extractor_name(config: RecallConfig, registries: Registries) -> str:
    if config.extractor != "auto":
        return config.extractor
    if os.environ.get("ANTHROPIC_API_KEY") and "haiku" in registries.extractors.entries:
        return "haiku"
    if "stub" in registries.extractors.entries:
        return "stub"
    names = registries.extractors.names()
    if not names:
        raise PluginError(f"No extractor is installed ({checkout_install('extractors')}).")
    return names[0]


def build_rankers(config: RecallConfig, registries: Registries) -> list[RankerSlot]:
    # No [rankers] table: every installed ranker at its default weight (0 = installed but
    # off until configured).
    wanted = config.rankers or {name: float(e.extra.get("default_weight", 1.0))
                                for name, e in registries.rankers.entries.items()}
    slots = []
    for name, weight in wanted.items():
        if weight < 0:
            raise ConfigError(f"Ranker weight for {name!r} is {weight}; weights must be >= 0.")
        entry = registries.rankers.get(name)
        if weight == 0:
            continue
        slots.append(RankerSlot(build_plugin(entry, config), float(weight)))
    if not slots:
        raise ConfigError("No ranker is enabled. Set at least one positive weight in [rankers], "
                          f"installed rankers: {', '.join(registries.rankers.names())}.")
    return slots
