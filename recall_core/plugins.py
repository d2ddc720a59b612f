"""Plugin manager factory, the registries that `register_*` hooks fill, and the builders that
turn registrations and the config into plugin objects (storage by URL scheme, the extractor by
name, rankers by weight). Free of the MCP server stack, so storage-only CLI commands
(create-token, status, export) start fast.

Built-in plugins go through exactly the path third-party ones do: the modules in
DEFAULT_PLUGINS are registered with `pm.register` like an entry point's module, and from then
on nothing in core can tell them apart.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from dataclasses import dataclass
from typing import Any

import pluggy

from . import hookspecs
from .config import RecallConfig, plugin_settings
from .errors import ConfigError, PluginError
from .registration import (ExtractorRegistry, MiddlewareRegistry, RankerRegistry, Registry,
                           StorageRegistry)
from .contracts import Storage
from .contracts import Extractor, Ranker, RankerSlot

GROUP = "recall"

# Modules of recall-core that are plugins like any other.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "recall_core.builtin.bm25",
    "recall_core.builtin.middleware",
)


def _split_env(name: str) -> set[str]:
    raw = os.environ.get(name, "")
    return {part.strip() for part in raw.split(",") if part.strip()}


class RecallPluginManager(pluggy.PluginManager):
    """Remembers which distribution supplied each plugin (for errors and `recall plugins`)."""

    def __init__(self) -> None:
        super().__init__(GROUP)
        self.dists: dict[str, tuple[str, str | None]] = {}

    def register_from(self, plugin: object, name: str, dist: str, version: str | None) -> None:
        self.register(plugin, name=name)
        self.dists[name] = (dist, version)


def get_plugin_manager(*, load_entrypoints: bool = True, defaults: bool = True,
                       environment: bool = True) -> RecallPluginManager:
    """A fresh plugin manager with core hookspecs, the defaults and installed plugins.

    `RECALL_LOAD_PLUGINS=a,b` loads only those entry points; `RECALL_DISABLE_PLUGINS=a,b`
    skips them; `RECALL_PLUGIN_MODULES=pkg.mod,...` loads modules by import path. With
    `environment=False` those variables are ignored. Tests build their own manager
    (`recall_core.testing.plugin_manager`: no entry points, no environment).
    """
    pm = RecallPluginManager()
    pm.add_hookspecs(hookspecs)
    core_version = importlib.metadata.version("recall-core")
    disabled = _split_env("RECALL_DISABLE_PLUGINS") if environment else set()
    only = _split_env("RECALL_LOAD_PLUGINS") if environment else set()
    if defaults:
        for modname in DEFAULT_PLUGINS:
            if modname in disabled:
                continue
            pm.register_from(importlib.import_module(modname), modname, "recall-core", core_version)
    # RECALL_PLUGIN_MODULES=pkg.module,...: local plugin modules loaded by import path, without
    # packaging them (like `pytest -p`). Loaded before entry points.
    for modname in sorted(_split_env("RECALL_PLUGIN_MODULES") if environment else ()):
        try:
            module = importlib.import_module(modname)
        except Exception as exc:  # noqa: BLE001
            raise PluginError(f'Error loading plugin module "{modname}" from RECALL_PLUGIN_MODULES: '
                              f"{type(exc).__name__}: {exc}. Check the module path and "
                              f"PYTHONPATH.") from exc
        pm.register_from(module, modname, modname, None)
    if load_entrypoints:
        for ep in importlib.metadata.entry_points(group=GROUP):
            if ep.name in disabled or (only and ep.name not in only):
                continue
            if pm.get_plugin(ep.name) is not None or ep.value in DEFAULT_PLUGINS:
                continue
            dist = ep.dist.name if ep.dist else ep.name
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
                raise PluginError(
                    f'Error loading plugin "{dist}" (entry point {ep.name} = {ep.value}): '
                    f"{type(exc).__name__}: {exc}. Fix or uninstall it "
                    f"(pip uninstall {dist}), or skip it with RECALL_DISABLE_PLUGINS={ep.name}."
                ) from exc
            if pm.is_registered(plugin):
                continue
            pm.register_from(plugin, ep.name, dist, ep.dist.version if ep.dist else None)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"Plugin {exc.plugin!r} implements an unknown hook: {exc}") from exc
    return pm


def describe_plugins(pm: pluggy.PluginManager) -> list[dict[str, Any]]:
    """Name, version and implemented hooks of every registered plugin (`recall plugins`)."""
    dists = getattr(pm, "dists", {})
    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda kv: kv[0]):
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        dist, version = dists.get(name, (name, None))
        out.append({"name": dist, "plugin": name, "version": version, "hooks": hooks})
    return out

# Our plugins' folders in the Recall checkout, for "what to install" hints only.
OUR_STORAGE_PLUGINS = {"sqlite": "sqlite", "postgres": "postgres", "postgresql": "postgres"}


def checkout_install(plugin: str) -> str:
    """How to install one of our plugins: from the checkout, never by name from an index
    (recall-core and recall-sqlite are other projects' names there)."""
    return (f"recall-{plugin} comes from the Recall checkout: pip install -e plugins/{plugin}; "
            f"it is not on PyPI, where that name may be another project")


@dataclass
class Registries:
    """Everything the registry hooks registered, by kind."""

    storage: Registry
    rankers: Registry
    extractors: Registry
    middleware: Registry

    @classmethod
    def from_pm(cls, pm: pluggy.PluginManager) -> Registries:
        return cls(StorageRegistry.collect(pm), RankerRegistry.collect(pm),
                   ExtractorRegistry.collect(pm), MiddlewareRegistry.collect(pm))


def build_plugin(entry, config: RecallConfig, *args: Any, kind: type | None = None) -> Any:
    """The plugin object `entry` makes with its settings; with `kind`, it must be one (a
    `Ranker` subclass instance, say), or start-up stops naming the plugin."""
    # A plugin can name its config table (postgres registers two URL schemes, one table).
    settings = plugin_settings(config, entry.options.get("config_name", entry.name), entry.settings)
    try:
        built = entry.factory(*args, settings)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - start-up failure names the plugin
        raise PluginError(f'Plugin "{entry.plugin}" failed to build {entry.name!r}: '
                          f"{type(exc).__name__}: {exc}") from exc
    if kind is not None and not isinstance(built, kind):
        raise PluginError(f'Plugin "{entry.plugin}" built {entry.name!r} as a '
                          f"{type(built).__name__}, which is not a recall_core.{kind.__name__}. "
                          f"Subclass recall_core.{kind.__name__} (it declares what core calls), "
                          f"or disable the plugin with RECALL_DISABLE_PLUGINS.")
    return built


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
    """The configured extractor, or for "auto" the available one of highest preference
    (ExtractorRegistry: e.g. an API-backed extractor when its key is set, else an offline one)."""
    if config.extractor != "auto":
        return config.extractor
    entries = registries.extractors.entries.values()
    if not entries:
        raise PluginError(f"No extractor is installed ({checkout_install('extractors')}).")
    available = [e for e in entries
                 if e.options["automatic"] is not None and e.options["automatic"]()]
    if not available:
        raise PluginError(
            f"No installed extractor runs without configuration (installed: "
            f"{', '.join(registries.extractors.names())}). Name one in the config "
            f"(extractor = \"...\", env RECALL_EXTRACTOR) with the settings it needs.")
    return max(available, key=lambda e: (e.options["preference"], e.name)).name


def build_extractor(config: RecallConfig, registries: Registries) -> Extractor:
    """The extractor the config names (or, for "auto", the one `choose_extractor_name` picks)."""
    entry = registries.extractors.get(choose_extractor_name(config, registries))
    return build_plugin(entry, config, kind=Extractor)


def build_rankers(config: RecallConfig, registries: Registries) -> list[RankerSlot]:
    # No [rankers] table: every installed ranker at its default weight (0 = installed but
    # off until configured).
    wanted = config.rankers or {name: e.options["default_weight"]
                                for name, e in registries.rankers.entries.items()}
    slots = []
    for name, weight in wanted.items():
        if weight < 0:
            raise ConfigError(f"Ranker weight for {name!r} is {weight}; weights must be >= 0.")
        entry = registries.rankers.get(name)
        if weight == 0:
            continue
        slots.append(RankerSlot(build_plugin(entry, config, kind=Ranker), float(weight)))
    if not slots:
        raise ConfigError("No ranker is enabled. Set at least one positive weight in [rankers], "
                          f"installed rankers: {', '.join(registries.rankers.names())}.")
    return slots
