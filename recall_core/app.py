"""Compose a server from installed plugins and the config: storage, extractor, rankers,
middleware, tools. Nothing here knows a plugin by name except through the config."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import pluggy
from fastmcp import FastMCP

from .auth import StorageTokenVerifier
from .config import RecallConfig, plugin_settings
from .errors import ConfigError, PluginError
from .plugins import Registry, collect, get_plugin_manager, plugin_label
from .protocols import Embedder, Extractor, Storage
from .safety import describe_texts, injection_findings
from .search import RankerSlot
from .service import MemoryService
from .tools import ArgumentErrors, register_core_tools
from .worker import Worker

log = logging.getLogger("recall")

INSTRUCTIONS = (
    "Recall is your long-term memory. Call search_memories before answering questions that "
    "may depend on what the user told you earlier; call store_memory when the user states a "
    "preference, fact, decision or procedure worth keeping."
)


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


@dataclass
class Runtime:
    config: RecallConfig
    pm: pluggy.PluginManager
    registries: Registries
    storage: Storage
    extractor: Extractor
    rankers: list[RankerSlot]
    embedder: Embedder | None
    service: MemoryService
    worker: Worker | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    async def close(self) -> None:
        if self.worker is not None:
            await self.worker.stop()
        await self.service.drain()
        await self.storage.close()


def _build(entry, config: RecallConfig, *args: Any) -> Any:
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
        hint = " (pip install recall-postgres)" if scheme.startswith("postgres") else ""
        raise PluginError(f"No storage plugin handles database URLs starting with {scheme}://. "
                          f"Installed schemes: {installed}. Install the matching plugin{hint} "
                          f"or change --db / RECALL_DB_URL.") from None
    return _build(entry, config, url)


def choose_extractor_name(config: RecallConfig, registries: Registries) -> str:
    if config.extractor != "auto":
        return config.extractor
    if os.environ.get("ANTHROPIC_API_KEY") and "haiku" in registries.extractors.entries:
        return "haiku"
    if "stub" in registries.extractors.entries:
        return "stub"
    names = registries.extractors.names()
    if not names:
        raise PluginError("No extractor is installed. pip install recall-extractors.")
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
        slots.append(RankerSlot(_build(entry, config), float(weight)))
    if not slots:
        raise ConfigError("No ranker is enabled. Set at least one positive weight in [rankers], "
                          f"installed rankers: {', '.join(registries.rankers.names())}.")
    return slots


async def build_runtime(config: RecallConfig, pm: pluggy.PluginManager | None = None,
                        *, start_worker: bool = True) -> Runtime:
    pm = pm or get_plugin_manager()
    registries = Registries.from_pm(pm)
    storage = build_storage(config, registries)
    extractor = _build(registries.extractors.get(choose_extractor_name(config, registries)), config)
    rankers = build_rankers(config, registries)
    embedder = next((getattr(s.ranker, "embedder") for s in rankers
                     if getattr(s.ranker, "embedder", None) is not None), None)
    await storage.open()
    service = MemoryService(storage, extractor, rankers, config, embedder)
    runtime = Runtime(config, pm, registries, storage, extractor, rankers, embedder, service)
    if start_worker and config.worker.concurrency > 0:
        runtime.worker = Worker(storage, extractor, embedder, config, service.job_signal)
        await runtime.worker.start()
    log.info("recall ready: storage=%s extractor=%s rankers=%s", storage.description,
             extractor.name, ",".join(f"{s.ranker.name}:{s.weight:g}" for s in rankers))
    return runtime


def _middleware(runtime: Runtime) -> list[Any]:
    reg = runtime.registries.middleware
    names = runtime.config.middleware
    if names is None:
        entries = list(reg.entries.values())
    else:
        entries = [reg.get(n) for n in names]
    entries.sort(key=lambda e: e.extra.get("order", 100))
    out = []
    for e in entries:
        settings = plugin_settings(runtime.config, e.name, e.settings)
        try:
            out.append(e.factory(settings, runtime))
        except Exception as exc:  # noqa: BLE001
            raise PluginError(f'Plugin "{e.plugin}" failed to build middleware {e.name!r}: '
                              f"{type(exc).__name__}: {exc}") from exc
    return out


async def build_mcp(runtime: Runtime, *, auth: bool = True) -> FastMCP:
    mcp = FastMCP("recall", instructions=INSTRUCTIONS,
                  auth=StorageTokenVerifier(runtime.storage) if auth else None)
    for mw in _middleware(runtime):
        mcp.add_middleware(mw)
    mcp.add_middleware(ArgumentErrors())
    register_core_tools(mcp, runtime.service)
    for impl in runtime.pm.hook.register_tools.get_hookimpls():
        label = plugin_label(runtime.pm, impl.plugin)
        before = {t.name for t in await mcp.list_tools(run_middleware=False)}
        try:
            impl.function(mcp=mcp, service=runtime.service)
        except Exception as exc:  # noqa: BLE001
            raise PluginError(f'Plugin "{label}" failed in register_tools: '
                              f"{type(exc).__name__}: {exc}") from exc
        for tool in await mcp.list_tools(run_middleware=False):
            if tool.name in before:
                continue
            for text in describe_texts(tool):
                found = injection_findings(text)
                if found:
                    raise PluginError(
                        f'Plugin "{label}" adds tool {tool.name!r} whose description contains '
                        f"{', '.join(found)}: {text[:120]!r}. Tool descriptions are read by the "
                        f"agent's model as instructions, so this is refused. Fix the plugin or "
                        f"disable it with RECALL_DISABLE_PLUGINS.")
    return mcp
