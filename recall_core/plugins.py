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
from dataclasses import dataclass, field
from typing import Any, Callable

import pluggy

from . import hookspecs
from .config import RecallConfig, plugin_settings
from .errors import ConfigError, PluginError
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


def get_plugin_manager(*, load_entrypoints: bool = True, defaults: bool = True) -> RecallPluginManager:
    """A fresh plugin manager with core hookspecs, the defaults and installed plugins.

    `RECALL_LOAD_PLUGINS=a,b` loads only those entry points; `RECALL_DISABLE_PLUGINS=a,b`
    skips them. Tests build their own manager with `load_entrypoints=False`.
    """
    pm = RecallPluginManager()
    pm.add_hookspecs(hookspecs)
    core_version = importlib.metadata.version("recall-core")
    disabled = _split_env("RECALL_DISABLE_PLUGINS")
    only = _split_env("RECALL_LOAD_PLUGINS")
    if defaults:
        for modname in DEFAULT_PLUGINS:
            if modname in disabled:
                continue
            pm.register_from(importlib.import_module(modname), modname, "recall-core", core_version)
    # RECALL_PLUGIN_MODULES=pkg.module,...: local plugin modules loaded by import path, without
    # packaging them (like `pytest -p`). Loaded before entry points.
    for modname in sorted(_split_env("RECALL_PLUGIN_MODULES")):
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


def plugin_label(pm: pluggy.PluginManager, plugin: object) -> str:
    """`dist-name` (and module for core built-ins) of a plugin, else its registration name."""
    name = pm.get_name(plugin) or repr(plugin)
    dist = getattr(pm, "dists", {}).get(name)
    if dist is None:
        return name
    return f"{dist[0]} ({name})" if dist[0] == "recall-core" else dist[0]


@dataclass
class Entry:
    name: str
    factory: Callable[..., Any]
    plugin: str
    settings: type | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Registry:
    """Collects one kind of registration; a duplicate name is a start-up error."""

    def __init__(self, kind: str):
        self.kind = kind
        self.entries: dict[str, Entry] = {}

    def add(self, name: str, factory: Callable[..., Any], plugin: str,
            settings: type | None = None, **extra: Any) -> None:
        if not isinstance(name, str) or not name:
            raise PluginError(f"Plugin {plugin!r} registered a {self.kind} with an empty name.")
        if name in self.entries:
            other = self.entries[name].plugin
            raise PluginError(
                f"{self.kind} {name!r} is registered twice: by {other!r} and by {plugin!r}. "
                f"Uninstall one of them or disable it with RECALL_DISABLE_PLUGINS."
            )
        self.entries[name] = Entry(name, factory, plugin, settings, extra)

    def get(self, name: str) -> Entry:
        try:
            return self.entries[name]
        except KeyError:
            choices = ", ".join(sorted(self.entries)) or "none installed"
            raise PluginError(
                f"Unknown {self.kind} {name!r}. Installed {self.kind}s: {choices}. "
                f"Check the spelling in your config or install the plugin that provides it."
            ) from None

    def names(self) -> list[str]:
        return sorted(self.entries)


def collect(pm: pluggy.PluginManager, hook_name: str, kind: str) -> Registry:
    """Call a registry hook plugin by plugin, so each registration knows its plugin."""
    registry = Registry(kind)
    hook = getattr(pm.hook, hook_name)
    for impl in hook.get_hookimpls():
        label = plugin_label(pm, impl.plugin)

        def register(name: str, factory: Callable[..., Any], *, settings: type | None = None,
                     _label: str = label, **extra: Any) -> None:
            registry.add(name, factory, _label, settings, **extra)

        try:
            impl.function(register=register)
        except PluginError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
            raise PluginError(
                f'Plugin "{label}" failed in {hook_name}: {type(exc).__name__}: {exc}'
            ) from exc
    return registry


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


def build_plugin(entry, config: RecallConfig, *args: Any, kind: type | None = None) -> Any:
    """The plugin object `entry` makes with its settings; with `kind`, it must be one (a
    `Ranker` subclass instance, say), or start-up stops naming the plugin."""
    # A plugin can name its config table (postgres registers two URL schemes, one table).
    settings = plugin_settings(config, entry.extra.get("config_name", entry.name), entry.settings)
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


def build_extractor(config: RecallConfig, registries: Registries) -> Extractor:
    """The extractor the config names (or, for "auto", the one `choose_extractor_name` picks)."""
    entry = registries.extractors.get(choose_extractor_name(config, registries))
    return build_plugin(entry, config, kind=Extractor)


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
        slots.append(RankerSlot(build_plugin(entry, config, kind=Ranker), float(weight)))
    if not slots:
        raise ConfigError("No ranker is enabled. Set at least one positive weight in [rankers], "
                          f"installed rankers: {', '.join(registries.rankers.names())}.")
    return slots
