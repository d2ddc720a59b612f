"""Compose a server from installed plugins and the config: storage, extractor, rankers,
middleware, tools. Nothing here knows a plugin by name except through the config."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pluggy
from fastmcp import FastMCP

from .. import __version__
from ..observability.audit import AuditLog
from .auth import StorageTokenVerifier
from ..plugins import (Registries, build_extractor, build_rankers, build_storage,
                       get_plugin_manager, plugin_label)
from ..config import RecallConfig, plugin_settings
from ..errors import PluginError
from ..contracts import Embedder, Extractor, Storage
from .mcp.safety import describe_texts, injection_findings
from ..contracts import RankerSlot
from ..memory.service import MemoryService
from .mcp.tools import ArgumentErrors, register_core_tools
from ..jobs.worker import Worker

log = logging.getLogger("recall")

INSTRUCTIONS = (
    "Recall is your long-term memory. Call search_memories before answering questions that "
    "may depend on what the user told you earlier; call store_memory when the user states a "
    "preference, fact, decision or procedure worth keeping."
)


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
    audit: AuditLog
    worker: Worker | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    async def close(self) -> None:
        if self.worker is not None:
            await self.worker.stop()
        await self.service.close()
        await self.audit.close()
        await self.storage.close()
        provider = self.extras.get("tracer_provider")
        if provider is not None:
            provider.shutdown()  # flushes spans still batched


async def build_runtime(config: RecallConfig, pm: pluggy.PluginManager | None = None,
                        *, start_worker: bool = True) -> Runtime:
    pm = pm or get_plugin_manager()
    registries = Registries.from_pm(pm)
    storage = build_storage(config, registries)
    # Storage first: a bad --db fails in a second, before a model starts loading.
    await storage.open()
    try:
        extractor = build_extractor(config, registries)
        rankers = build_rankers(config, registries)
    except BaseException:
        await storage.close()
        raise
    embedder = next((s.ranker.embedder for s in rankers if s.ranker.embedder is not None),
                    None)
    service = MemoryService(storage, extractor, rankers, config, embedder)
    runtime = Runtime(config, pm, registries, storage, extractor, rankers, embedder, service,
                      AuditLog(storage))
    service.on_erase.append(runtime.audit.forget_namespace)
    for slot in rankers:  # rankers with per-namespace caches drop the erased namespace's
        service.on_erase.append(slot.ranker.forget_namespace)
    from ..observability.tracing import setup as setup_tracing

    runtime.extras["tracer"] = setup_tracing(runtime)  # None unless [tracing] enabled
    if start_worker and config.worker.concurrency > 0:
        runtime.worker = Worker(storage, extractor, embedder, config, service.job_signal,
                                service.activity)
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
    mcp = FastMCP("recall", version=__version__, instructions=INSTRUCTIONS,
                  auth=StorageTokenVerifier(runtime.storage) if auth else None)
    tracer = runtime.extras.get("tracer")
    if tracer is not None:
        from ..observability.tracing import tool_middleware

        mcp.add_middleware(tool_middleware(tracer))  # outermost: the span covers the rest
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
    await _schema_lookup_by_name(mcp)
    return mcp


async def _schema_lookup_by_name(mcp: FastMCP) -> None:
    """Give the MCP SDK each tool's input schema by name.

    For `Mcp-Param-*` header validation the SDK otherwise runs the whole `tools/list` handler
    (through every middleware) before each `tools/call` with arguments (python-sdk issue
    #3565); FastMCP 4.1 does not set the by-name lookup the SDK offers for this. Measured
    here: ~8% of a search call's server time. Our tools are fixed once the server is built,
    so the schemas are read once. The low-level server is private to FastMCP, hence the
    guard: without it the SDK keeps its slow path, which is still correct.
    """
    lowlevel = getattr(mcp, "_mcp_server", None)
    if lowlevel is None or not hasattr(lowlevel, "get_tool_input_schema"):
        log.warning("FastMCP's low-level server has no get_tool_input_schema; every tools/call "
                    "will list the tools first (slower, still correct)")
        return
    schemas = {t.name: t.parameters for t in await mcp.list_tools(run_middleware=False)}
    lowlevel.get_tool_input_schema = schemas.get
