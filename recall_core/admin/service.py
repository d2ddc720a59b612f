"""AdminService: the operator's use cases, shared by the admin API, the inspector's admin
pages and the CLI. Every state-changing method writes one audit row (who, what, which
namespace, when, result) whether it succeeds or fails.

The audit log, admin tokens and the listings are the storage's admin capability
(`recall_core.contracts.admin.AdminStorage`); a method that needs it raises `Unsupported` on a
storage without it. Namespace tokens, export, import, reindex and the status report work on
any storage (there, with no audit log to write to, they write no audit row)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

from ..access.principal import SCOPE_ORDER, parse_scopes, valid_agent_name
from ..access.partitions import MAX_NAMESPACE_LEN, NAMESPACE_PATTERN, split, valid_namespace  # noqa: F401 (re-export)
from ..errors import ConfirmRequired, InvalidParam, RecallError
from ..memory.service import CONFIRM_PHRASE, MemoryService
from .tokens import create_admin_token, create_token, hash_token
from ..memory.erase import erased_label
from ..memory.reindex import reindex
from ..memory.transfer import ImportLine, MalformedLine, by_space, export_lines, import_extract, import_verbatim, parse_lines
from ..contracts import AdminAction, token_id
from ..contracts.admin import AgentSummary

T = TypeVar("T")
log = logging.getLogger("recall.admin")

JOB_STATUSES = ("queued", "running", "done", "failed")
MAX_OFFSET = 10**9  # beyond any real list; keeps offsets inside 64-bit SQL integers


class NotFound(RecallError):
    code = "NOT_FOUND"


class Unsupported(RecallError):
    code = "UNSUPPORTED"


def valid_namespace_name(namespace: Any) -> str:
    """`namespace` if it is a name the admin API can carry in a path (never a partition:
    no '/'), else InvalidParam."""
    return valid_namespace(namespace)


def token_grant(agent: Any, scopes: Any) -> tuple[str | None, list[str]]:
    """(agent, scopes in SCOPE_ORDER) of a token to create, checked: INVALID_PARAM naming the
    rule. Scopes given but empty are refused (a token that may do nothing is a mistake, not
    a request for all of them); None means all."""
    agent = valid_agent_name(agent)
    if scopes is not None and not (scopes.strip() if isinstance(scopes, str) else scopes):
        raise InvalidParam(f"scopes is empty. Give at least one of {', '.join(SCOPE_ORDER)}, "
                           f"or leave scopes out for a token with all of them.")
    granted = parse_scopes(scopes)
    return agent, [s for s in SCOPE_ORDER if s in granted]


def page(limit: Any, offset: Any, cap: int) -> tuple[int, int]:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidParam(f"limit must be a whole number >= 1, got {limit!r}.")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidParam(f"offset must be a whole number from 0 to {MAX_OFFSET}, got {offset!r}.")
    return min(limit, cap), offset


class AdminService:
    def __init__(self, service: MemoryService, page_cap: int = 200):
        storage = service.storage
        self.service = service
        self.storage: Any = storage
        self.page_cap = page_cap
        self._pending: set[asyncio.Task[Any]] = set()
        # An erase by any path (the MCP tool too) leaves no audit row naming the namespace,
        # and one row keeping its receipt's digest.
        self._erasing: set[str] = set()
        service.on_receipt.append(self._after_erase)

    @property
    def audited(self) -> bool:
        """Whether the storage keeps the admin audit log (its admin capability)."""
        return bool(self.storage.capabilities.admin)

    def _need_admin(self) -> None:
        if not self.audited:
            raise Unsupported(f"The storage backend ({self.storage.description}) does not offer "
                              f"the admin capability (recall_core.contracts.admin.AdminStorage).")

    async def _record(self, action: AdminAction) -> None:
        if self.audited:
            await self.storage.record_admin_action(action)

    def _after_erase(self, namespace: str, receipt: dict[str, Any]) -> None:
        if namespace in self._erasing:  # erase_namespace settles its own erase
            return
        try:
            task = asyncio.get_running_loop().create_task(self.settle(namespace, receipt))
        except RuntimeError:  # no loop: nothing to settle from here
            return
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def settle(self, namespace: str, receipt: dict[str, Any],
                     actor: str | None = None) -> None:
        """After an erase: one audit row with the receipt's digest (by `actor`, else by the
        namespace's own token), and every row that named the namespace relabelled
        (`memory.erase` says why by the digest, not by a hash of the name)."""
        if not self.audited:
            return
        label = erased_label(receipt["digest"])
        try:
            await self._record(AdminAction(
                actor=actor or f"namespace:{label}", action="erase_namespace", namespace=label,
                detail={"receipt_digest": receipt["digest"], "deleted": receipt["deleted"],
                        "tokens_revoked": receipt["tokens_revoked"]}))
            await self.storage.anonymise_admin_actions(namespace, label)
        except Exception:  # noqa: BLE001 - the erase is done; say what stayed
            log.exception("could not record or anonymise the audit of an erased namespace")

    async def _audited(self, actor: str, action: str, namespace: str | None,
                       detail: dict[str, Any], run: Callable[[], Awaitable[T]]) -> T:
        try:
            out = await run()
        except Exception as exc:
            await self._record(AdminAction(
                actor=actor, action=action, namespace=namespace, detail=detail, result="error",
                error=str(exc) if isinstance(exc, RecallError) else type(exc).__name__))
            raise
        # A new token is shown once, never kept; the namespace has its own column (which an
        # erase anonymises).
        summary = {k: v for k, v in (out.items() if isinstance(out, dict) else ())
                   if k not in ("token", "namespace", "secret")}  # webhook secrets too
        await self._record(AdminAction(
            actor=actor, action=action, namespace=namespace, detail={**detail, **summary}))
        return out

    # -- reads ----------------------------------------------------------------------------
    async def namespaces(self, limit: Any = 50, offset: Any = 0) -> dict[str, Any]:
        self._need_admin()
        limit, offset = page(limit, offset, self.page_cap)
        rows, total = await self.storage.list_namespaces(limit, offset)
        for row in rows:  # agents' private partitions, under their owner
            row.agents = [await self._agent_summary(p)
                          for p in await self.storage.list_partitions(row.namespace)]
        return {"namespaces": [r.model_dump(mode="json") for r in rows], "total": total,
                "next_offset": offset + len(rows) if offset + len(rows) < total else None}

    async def _agent_summary(self, space: str) -> AgentSummary:
        return AgentSummary(
            agent=split(space)[1] or "", active_memories=sum(
                (await self.storage.stats(space)).values()),
            queued_jobs=await self.storage.count_jobs(space, ("queued", "running")),
            failed_jobs=await self.storage.count_jobs(space, "failed"))

    async def tokens(self, namespace: Any) -> dict[str, Any]:
        self._need_admin()
        namespace = valid_namespace_name(namespace)
        return {"namespace": namespace,
                "tokens": [t.model_dump(mode="json") for t in await self.storage.list_tokens(namespace)]}

    async def queue(self, namespace: Any = None) -> dict[str, int]:
        """Jobs per status, of one namespace or (None) of all."""
        if namespace is not None:
            namespace = valid_namespace_name(namespace)
        return {s: await self.storage.count_jobs(namespace, s) for s in JOB_STATUSES}

    async def jobs(self, namespace: Any = None, status: Any = "failed", limit: Any = 50,
                   offset: Any = 0) -> dict[str, Any]:
        self._need_admin()
        if namespace is not None:
            namespace = valid_namespace_name(namespace)
        statuses = [status] if isinstance(status, str) else list(status or ())
        bad = [s for s in statuses if s not in JOB_STATUSES]
        if bad or not statuses:
            raise InvalidParam(f"status must be one of {', '.join(JOB_STATUSES)}; got {status!r}.")
        limit, offset = page(limit, offset, self.page_cap)
        rows, total = await self.storage.list_jobs(namespace, statuses, limit, offset)
        return {"jobs": [job_view(j) for j in rows], "total": total,
                "counts": await self.queue(namespace),
                "next_offset": offset + len(rows) if offset + len(rows) < total else None}

    async def audit(self, limit: Any = 50, offset: Any = 0) -> dict[str, Any]:
        self._need_admin()
        limit, offset = page(limit, offset, self.page_cap)
        rows, total = await self.storage.list_admin_actions(limit, offset)
        return {"actions": [r.model_dump(mode="json") for r in rows], "total": total,
                "next_offset": offset + len(rows) if offset + len(rows) < total else None}

    async def status(self, namespace: str | None = None, namespaces: Any = 50) -> dict[str, Any]:
        """The storage's side of `recall status`: the queue, recent failures, running jobs
        past their lease (a dead or stuck worker), stored vectors per embedding model and
        what made the current memories (of `namespace`, or all), and the most recently
        active namespaces (`namespace_count` None without the admin capability)."""
        storage, caps = self.storage, self.storage.capabilities
        expired = await storage.expired_leases()
        vectors = await storage.embedding_models(namespace) if caps.embedding_models else {}
        listed = await self.namespaces(namespaces, 0) if self.audited else None
        return {"storage": storage.description, "jobs": await self.queue(),
                "storage_status": storage.status(),
                "recent_failures": await storage.recent_failures(None, 5),
                # stored vectors per embedding model id ("unrecorded": before ids were kept)
                "vectors": {m or "unrecorded": n for m, n in vectors.items()},
                # the provenance each store recorded; extractor None = no store (verbatim
                # import), "" = not recorded
                "memory_sources": (await storage.memory_sources(namespace)
                                   if caps.memory_sources else None),
                "scope": namespace, "workers": {"ok": expired == 0, "jobs_past_lease": expired},
                "namespace_count": listed["total"] if listed else None,
                "namespaces": listed["namespaces"] if listed else [],
                # webhook deliveries per status (pending, delivered, dead)
                "webhooks": await storage.webhook_backlog() if caps.webhooks else None}

    async def export(self, actor: str, namespace: Any, *, active_only: bool = False
                     ) -> AsyncIterator[str]:
        """The namespace's memories as JSON lines (`memory.transfer`), every row or only the
        current ones."""
        namespace = valid_namespace_name(namespace)
        await self._record(AdminAction(actor=actor, action="export_namespace", namespace=namespace,
                                       detail={"active_only": True} if active_only else {}))
        return export_lines(self.storage, namespace, active_only=active_only)

    # -- writes ---------------------------------------------------------------------------
    async def create_token(self, actor: str, namespace: Any, agent: Any = None,
                           scopes: Any = None) -> dict[str, Any]:
        """A new token for `namespace`, bound to `agent` inside it when given, with `scopes`
        (None: all three, as every token made before scopes existed). The audit row records
        the agent and scopes, never the token."""
        namespace = valid_namespace_name(namespace)
        agent, granted = token_grant(agent, scopes)
        detail = {"agent": agent, "scopes": granted}

        async def run() -> dict[str, Any]:
            token = await create_token(self.storage, namespace, agent=agent, scopes=granted)
            return {"namespace": namespace, "token": token, "token_id": token_id(hash_token(token)),
                    **detail}
        return await self._audited(actor, "create_token", namespace, detail, run)

    async def create_admin_token(self, actor: str, name: Any = "admin") -> dict[str, Any]:
        """A new admin token (the admin API and the inspector, never /mcp or /a2a); `name`
        is how the audit log calls the actions taken with it."""
        self._need_admin()
        name = (name.strip() if isinstance(name, str) else "") or "admin"

        async def run() -> dict[str, Any]:
            token = await create_admin_token(self.storage, name)
            return {"admin": name, "token": token, "token_id": token_id(hash_token(token))}
        return await self._audited(actor, "create_admin_token", None, {}, run)

    async def revoke_token(self, actor: str, namespace: Any, tid: Any) -> dict[str, Any]:
        self._need_admin()
        namespace = valid_namespace_name(namespace)

        async def run() -> dict[str, Any]:
            if not isinstance(tid, str) or not await self.storage.revoke_token_id(namespace, tid):
                raise NotFound(f"No live token {tid!r} in namespace {namespace!r}. List the "
                               f"namespace's tokens to find its token_id (16 hex digits).")
            return {"revoked": tid}
        return await self._audited(actor, "revoke_token", namespace, {"token_id": str(tid)}, run)

    async def revoke_raw_token(self, actor: str, token: Any) -> dict[str, Any]:
        """Revoke a token given in full, a namespace's or an admin's (`recall revoke-token`).
        The audit row names its namespace and token_id, never the token."""
        if not isinstance(token, str) or not token:
            raise InvalidParam("token is empty. Pass the token as create-token printed it.")
        digest = hash_token(token)
        namespace = await self.storage.namespace_for_token(digest)

        async def run() -> dict[str, Any]:
            if await self.storage.revoke_token(digest):
                return {"revoked": token_id(digest), "kind": "namespace"}
            if self.audited and await self.storage.revoke_admin_token(digest):
                return {"revoked": token_id(digest), "kind": "admin"}
            raise NotFound("No active token matches; nothing was revoked.")
        return await self._audited(actor, "revoke_token", namespace,
                                   {"token_id": token_id(digest)}, run)

    async def erase_namespace(self, actor: str, namespace: Any, confirm: Any) -> dict[str, Any]:
        namespace = valid_namespace_name(namespace)

        async def run() -> dict[str, Any]:
            if confirm != namespace:
                raise ConfirmRequired(
                    f"Erasing namespace {namespace!r} deletes all its memories, jobs and tasks "
                    f"and revokes its tokens; it cannot be undone. To confirm, send confirm "
                    f"equal to the namespace name exactly.")
            self._erasing.add(namespace)
            try:
                return await self.service.delete_namespace(namespace, CONFIRM_PHRASE)
            finally:
                self._erasing.discard(namespace)
        try:
            out = await run()
        except Exception as exc:  # refused or failed: nothing erased, the row may name it
            await self._record(AdminAction(
                actor=actor, action="erase_namespace", namespace=namespace, result="error",
                error=str(exc) if isinstance(exc, RecallError) else type(exc).__name__))
            raise
        await self.settle(namespace, out["receipt"], actor)
        return out

    async def import_memories(self, actor: str, namespace: Any,
                              items: Iterable[str] | Iterable[ImportLine], extract: bool = False,
                              *, keep_ids: bool = False, embed: bool = True,
                              progress: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Import JSON lines (strings, as in a file) or parsed lines (the API's body):
        queued for extraction, or stored verbatim (`keep_ids`: the file's ids, so a re-run
        skips rows already there), embedded when `embed` and the model is ready (else the
        server backfills vectors). `progress(n)` after each batch of lines."""
        namespace = valid_namespace_name(namespace)

        async def run() -> dict[str, Any]:
            given = list(items)
            if all(isinstance(i, ImportLine) for i in given):
                rows = list(enumerate(given, start=1))
            else:
                try:
                    rows = parse_lines(given)  # type: ignore[arg-type]
                except MalformedLine as exc:
                    raise InvalidParam(str(exc)) from None
            groups = by_space(namespace, rows)  # each line to its visibility's partition
            if extract:
                queued = cached = 0
                for space, group in groups.items():
                    q, c = await import_extract(self.storage, space, group, progress)
                    queued, cached = queued + q, cached + c
                self.service.job_signal.set()
                return {"lines": len(rows), "queued": queued, "already_queued": cached}
            embedder = self.service.embedder if embed else None
            if embedder is not None and not embedder.ready:
                embedder = None  # the server backfills vectors once the model is ready
            n = 0
            for space, group in groups.items():
                n += await import_verbatim(self.storage, space, group, embedder,
                                           keep_ids=keep_ids, progress=progress)
            return {"lines": len(rows), "imported": n}
        return await self._audited(actor, "import_namespace", namespace,
                                   {"mode": "extract" if extract else "verbatim"}, run)

    async def reindex(self, actor: str, namespace: Any = None, **options: Any) -> dict[str, Any]:
        """Re-embed the vectors (of `namespace`, or all) that another embedding model made,
        with the service's embedder (`memory.reindex.reindex`'s options: batch, limit,
        progress, total)."""
        if namespace is not None:
            namespace = valid_namespace_name(namespace)
        embedder = self.service.embedder
        if embedder is None:
            raise Unsupported("No embedding model is configured: there is nothing to re-embed with.")

        async def run() -> dict[str, Any]:
            return await reindex(self.storage, embedder, namespace, **options)
        return await self._audited(actor, "reindex", namespace, {}, run)

    async def retry_job(self, actor: str, job_id: Any, namespace: str | None = None) -> dict[str, Any]:
        self._need_admin()

        async def run() -> dict[str, Any]:
            if not isinstance(job_id, str) or not await self.storage.retry_job(namespace, job_id):
                raise NotFound(f"No failed job {job_id!r}. Only failed jobs can be retried; "
                               f"list them with status=failed.")
            self.service.job_signal.set()
            return {"retried": job_id}
        return await self._audited(actor, "retry_job", namespace, {"job_id": str(job_id)}, run)


def job_view(job: Any) -> dict[str, Any]:
    text = job.payload.get("text") if isinstance(job.payload, dict) else None
    return {"id": job.id, "namespace": job.namespace, "kind": job.kind, "status": job.status,
            "attempts": job.attempts, "error": job.error,
            "created_at": job.created_at.isoformat(),
            "finished_at": job.finished_at.isoformat() if job.finished_at else None,
            "text": text if isinstance(text, str) else None,
            "topic": job.payload.get("topic") if isinstance(job.payload, dict) else None}
