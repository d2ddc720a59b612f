"""The runtime: a server's parts composed from installed plugins and the config (storage,
extractor, rankers, the one MemoryService, the audit log, the worker). Every transport (MCP
over HTTP or stdio, A2A, the admin API, the inspector, the CLI) runs on one. Nothing here
knows a plugin by name except through the config."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

from ..config import RecallConfig
from ..contracts import Embedder, Extractor, RankerSlot, Storage
from ..events.deliverer import Deliverer
from ..events.subscriptions import static_subscriptions
from .group import Group
from ..jobs.worker import Worker
from ..memory.service import MemoryService
from ..observability.audit import AuditLog
from ..observability.tracing import Tracing, setup as setup_tracing
from ..plugins import (Registries, build_extractor, build_rankers, build_storage,
                       get_plugin_manager)

if TYPE_CHECKING:
    from fastmcp import FastMCP

    from ..admin.service import AdminService

log = logging.getLogger("recall")


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
    #: The webhook deliverer (recall_core/events), started with the worker.
    deliverer: Deliverer | None = None
    #: OpenTelemetry tracing when `[tracing] enabled` (observability.tracing).
    tracing: Tracing | None = None
    #: The MCP server of the HTTP app, once built (the start-up warm-up calls it).
    mcp: FastMCP | None = None
    #: The operator's use cases, when the storage has the admin capability and the HTTP app
    #: is built (the admin API and the inspector share it).
    admin: AdminService | None = None
    #: The inspector's state (sessions, sign-in), when served.
    inspector: Any = None
    #: This process's place in a `recall serve --workers N` group (server/group.py); None
    #: for a single process.
    group: Group | None = None

    async def close(self) -> None:
        if self.deliverer is not None:
            await self.deliverer.stop()
        if self.worker is not None:
            await self.worker.stop()
        await self.service.close()
        await self.audit.close()
        await self.storage.close()
        if self.tracing is not None:
            self.tracing.provider.shutdown()  # flushes spans still batched


async def build_runtime(config: RecallConfig, pm: pluggy.PluginManager | None = None,
                        *, start_worker: bool = True, group: Group | None = None) -> Runtime:
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
    service = MemoryService(storage, config, extractor=extractor, rankers=rankers,
                            embedder=embedder)
    runtime = Runtime(config, pm, registries, storage, extractor, rankers, embedder, service,
                      AuditLog(storage), group=group)
    runtime.audit.faults = service.access.faults = service.faults
    service.on_erase.append(runtime.audit.forget_namespace)
    for slot in rankers:  # rankers with per-namespace caches drop the erased namespace's
        service.on_erase.append(slot.ranker.forget_namespace)
    runtime.tracing = setup_tracing(runtime)  # None unless [tracing] enabled
    if start_worker and config.worker.concurrency > 0:
        runtime.worker = Worker(storage, extractor, embedder, config, service.job_signal,
                                service.activity, faults=service.faults,
                                breaker=service.extraction, requeue=group is None,
                                singletons=group is None or group.leader)
        await runtime.worker.start()
    await start_webhooks(runtime, start_worker)
    log.info("recall ready: storage=%s extractor=%s rankers=%s", storage.description,
             extractor.name, ",".join(f"{s.ranker.name}:{s.weight:g}" for s in rankers))
    return runtime


async def start_webhooks(runtime: Runtime, start_worker: bool) -> None:
    """Sync the static subscriptions of recall.toml, and start the deliverer beside the
    worker (a process without a worker delivers nothing: another process does)."""
    config, storage = runtime.config, runtime.storage
    if not storage.capabilities.webhooks:
        if config.webhooks.subscriptions:
            log.warning("[[webhooks.subscriptions]] ignored: storage %s has no webhooks "
                        "capability", storage.description)
        return
    await storage.sync_config_subscriptions(static_subscriptions(config))
    # One deliverer per group: the leader's (its claims would allow more, but one keeps a
    # subscription's events from racing between processes for no gain on one machine).
    leader = runtime.group is None or runtime.group.leader
    if start_worker and config.worker.concurrency > 0 and leader:
        runtime.deliverer = Deliverer(storage, config.webhooks)
        await runtime.deliverer.start()
