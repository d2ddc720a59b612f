"""The whole config checked against the installed plugins before any storage is opened.

`build_runtime` opens storage first (a bad --db fails in a second, before a model starts
loading), then builds the extractor and rankers; so an unknown extractor or a bad plugin
setting used to stop `recall serve` with exit 2 only after it had created and migrated the
database file. Here every name the config uses is resolved and every plugin table it will
read is validated; the extractor is built (its factory checks what it needs, such as an API
key or a prompt file, and is cheap), rankers are not (building one may start loading a model).
"""

from __future__ import annotations

from ..config import RecallConfig, plugin_settings
from ..errors import ConfigError
from ..plugins import Registries, build_extractor, build_storage
from ..registration import Entry


def _settings(config: RecallConfig, entry: Entry) -> None:
    plugin_settings(config, entry.options.get("config_name", entry.name), entry.settings)


def check_config(config: RecallConfig, registries: Registries, *, middleware: bool = False
                 ) -> None:
    """Raise ConfigError (PluginError) for the first thing that would stop start-up: the
    storage plugin and its settings, the extractor, the rankers' names, weights and settings,
    and with `middleware` the middleware list (only the MCP server builds it)."""
    check_plugin_tables(config, registries)
    build_storage(config, registries)  # resolves the URL scheme; not opened
    build_extractor(config, registries)  # built again by build_runtime; dropped here
    wanted = config.rankers or {name: entry.options["default_weight"]
                                for name, entry in registries.rankers.entries.items()}
    for name, weight in wanted.items():
        if weight < 0:
            raise ConfigError(f"Ranker weight for {name!r} is {weight}; weights must be >= 0.")
        entry = registries.rankers.get(name)
        if weight > 0:
            _settings(config, entry)
    if not any(weight > 0 for weight in wanted.values()):
        raise ConfigError("No ranker is enabled. Set at least one positive weight in [rankers], "
                          f"installed rankers: {', '.join(registries.rankers.names())}.")
    if middleware:
        reg = registries.middleware
        names = reg.names() if config.middleware is None else config.middleware
        for name in names:
            _settings(config, reg.get(name))


def check_plugin_tables(config: RecallConfig, registries: Registries) -> None:
    """Every `[plugins.<name>]` table names an installed plugin's settings: a misspelt table
    would otherwise be ignored, and its settings silently not applied."""
    known = {e.options.get("config_name", e.name)
             for registry in (registries.storage, registries.rankers, registries.extractors,
                              registries.middleware)
             for e in registry.entries.values()}
    unknown = sorted(set(config.plugins) - known)
    if unknown:
        raise ConfigError(f"[plugins.{unknown[0]}] names no installed plugin's settings. "
                          f"Known tables: {', '.join(sorted(known))}. Check the spelling, or "
                          f"install the plugin the table is for.")
