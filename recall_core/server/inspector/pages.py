"""The inspector's pages for a namespace: memories, a memory's story, search explained,
queue and health. Every read goes through MemoryService or the storage protocols."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...admin.service import AdminService
from ...contracts import MemoryFilter
from ...errors import RecallError
from ...models import MEMORY_TYPES
from .reads import health, memory_story
from .render import page, redirect
from .session import COOKIE, Principal, csrf_ok, identify, same_origin

PAGE_SIZE = 25
STATES = ("active", "superseded", "all")
OUTCOMES = {"returned": "returned", "below_threshold": "below score_threshold",
            "mmr": "removed by MMR (too similar to a better result)",
            "limit": "beyond the limit", "budget": "cut by max_tokens"}

Handler = Callable[[Request, "Context"], Awaitable[Response]]


class Context:
    """The signed-in caller and the namespace the page is about."""

    def __init__(self, inspector: Any, principal: Principal, namespace: str | None,
                 form: dict[str, Any]):
        self.inspector = inspector
        self.principal = principal
        self.namespace = namespace
        self.form = form

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        return page(template, status, me=self.principal, ns=self.namespace,
                    csrf=self.principal.csrf, **context)


def guarded(inspector: Any, *, needs_namespace: bool = True, admin_only: bool = False
            ) -> Callable[[Handler], Callable[[Request], Awaitable[Response]]]:
    """Sign-in, namespace scoping and (for POST) CSRF checks around a page handler."""
    def wrap(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            principal = await identify(inspector.storage, request.cookies.get(COOKIE))
            if principal is None:
                if request.method == "GET":
                    return redirect("/ui/signin")
                return page("error.html", 401, me=None, message="Your session has ended. "
                            "Sign in again.")
            form: dict[str, Any] = {}
            if request.method == "POST":
                form = dict(await request.form())
                if not same_origin(request, inspector.public_url) or \
                        not csrf_ok(principal, form.get("csrf")):
                    return page("error.html", 403, me=principal, csrf=principal.csrf,
                                message="This form is out of date or came from another site "
                                        "(CSRF check failed). Reload the page and try again.")
            if admin_only and not principal.is_admin:
                return page("error.html", 404, me=principal, csrf=principal.csrf,
                            message="Not found.")
            wanted = form.get("ns") or request.query_params.get("ns") or None
            if principal.is_admin:
                namespace = wanted
                if needs_namespace and not namespace:
                    return redirect("/ui/admin")
            else:
                if wanted is not None and wanted != principal.name:
                    # Another namespace's pages do not exist for this caller.
                    return page("error.html", 404, me=principal, csrf=principal.csrf,
                                message="Not found.")
                namespace = principal.name
            ctx = Context(inspector, principal, namespace, form)
            try:
                return await handler(request, ctx)
            except RecallError as exc:
                return ctx.render("error.html", 400, message=exc.message)
        return endpoint
    return wrap


def _int(value: Any, default: int, lo: int = 0, hi: int = 10**9) -> int:
    try:
        return min(hi, max(lo, int(value)))
    except (TypeError, ValueError):
        return default


def routes(inspector: Any) -> list[tuple[str, Any, list[str]]]:
    storage = inspector.storage
    service = inspector.runtime.service
    admin: AdminService = inspector.admin

    @guarded(inspector)
    async def memories(request: Request, ctx: Context) -> Response:
        q = request.query_params
        state = q.get("state") if q.get("state") in STATES else "active"
        mtype = q.get("type") if q.get("type") in MEMORY_TYPES else None
        where = MemoryFilter(type=mtype, topic=q.get("topic") or None,
                             session_id=q.get("session") or None, agent_id=q.get("agent") or None,
                             state=state, text=q.get("q") or None)
        offset = _int(q.get("offset"), 0)
        rows, total = await storage.query_memories(ctx.namespace, where, PAGE_SIZE, offset)
        filters = {"type": mtype or "", "topic": where.topic or "", "session": where.session_id or "",
                   "agent": where.agent_id or "", "state": state, "q": where.text or ""}
        return ctx.render("memories.html", rows=rows, total=total, offset=offset,
                          page_size=PAGE_SIZE, filters=filters, types=MEMORY_TYPES,
                          states=STATES, flash=q.get("flash"))

    @guarded(inspector)
    async def memory(request: Request, ctx: Context) -> Response:
        story = await memory_story(inspector.runtime, ctx.namespace, request.path_params["id"])
        if story is None:
            return ctx.render("error.html", 404, message="No such memory in this namespace. "
                              "It may have been forgotten.")
        return ctx.render("memory.html", types=MEMORY_TYPES, flash=request.query_params.get("flash"),
                          **story)

    @guarded(inspector)
    async def forget(request: Request, ctx: Context) -> Response:
        done = await service.delete(ctx.namespace, request.path_params["id"])
        n = len(done.get("forgotten_ids") or [done["deleted"]])
        note = "" if n == 1 else f" with its history ({n} versions)"
        return redirect("/ui/memories", ns=ctx.namespace if ctx.principal.is_admin else None,
                        flash=f"Memory forgotten{note}.")

    @guarded(inspector)
    async def pin(request: Request, ctx: Context) -> Response:
        pinned = ctx.form.get("pinned") == "1"
        m = await service.pin(ctx.namespace, request.path_params["id"], pinned)
        return redirect(f"/ui/memories/{m.id}", ns=ctx.namespace if ctx.principal.is_admin else None,
                        flash="Pinned: decay will never lower its importance." if pinned
                        else "Unpinned: its importance decays again when it goes unused.")

    @guarded(inspector)
    async def edit(request: Request, ctx: Context) -> Response:
        f = ctx.form
        importance = f.get("importance")
        new = await service.correct(
            ctx.namespace, request.path_params["id"], text=f.get("text"),
            type=f.get("type") or None, value=f.get("value"),
            importance=_float(importance) if importance not in (None, "") else None)
        return redirect(f"/ui/memories/{new.id}",
                        ns=ctx.namespace if ctx.principal.is_admin else None,
                        flash="Saved as a correction; the previous version is kept as superseded.")

    @guarded(inspector)
    async def search(request: Request, ctx: Context) -> Response:
        q = request.query_params
        params = {"query": q.get("query", ""), "limit": q.get("limit") or "10",
                  "recency_weight": q.get("recency_weight") or "0.3",
                  "mmr_lambda": q.get("mmr_lambda") or "0.5",
                  "score_threshold": q.get("score_threshold") or "0",
                  "max_tokens": q.get("max_tokens") or ""}
        result = error = None
        if params["query"].strip():
            try:
                result = await service.search(
                    ctx.namespace, params["query"], limit=_int(params["limit"], 10, 1),
                    recency_weight=_float(params["recency_weight"]),
                    mmr_lambda=_float(params["mmr_lambda"]),
                    score_threshold=_float(params["score_threshold"]),
                    max_tokens=_int(params["max_tokens"], 0, 1) if params["max_tokens"] else None,
                    explain=True)
            except RecallError as exc:
                error = exc.message
        rows = []
        if result is not None:
            trace = result["explain"]
            order = sorted(trace.parts, key=lambda mid: -trace.parts[mid]["score"])
            rows = trace.rows(order)
        return ctx.render("search.html", params=params, result=result, rows=rows, error=error,
                          outcomes=OUTCOMES)

    @guarded(inspector)
    async def queue(request: Request, ctx: Context) -> Response:
        q = request.query_params
        status = q.get("status") if q.get("status") in ("queued", "running", "done", "failed") \
            else "failed"
        jobs = await admin.jobs(ctx.namespace, status, PAGE_SIZE, _int(q.get("offset"), 0))
        return ctx.render("queue.html", jobs=jobs, job_status=status, health=await health(inspector.runtime),
                          flash=q.get("flash"))

    @guarded(inspector)
    async def retry(request: Request, ctx: Context) -> Response:
        await admin.retry_job(ctx.principal.actor, request.path_params["id"], ctx.namespace)
        return redirect("/ui/queue", ns=ctx.namespace if ctx.principal.is_admin else None,
                        flash="Job queued again.")

    return [("/memories", memories, ["GET"]), ("/memories/{id}", memory, ["GET"]),
            ("/memories/{id}/forget", forget, ["POST"]), ("/memories/{id}/edit", edit, ["POST"]),
            ("/memories/{id}/pin", pin, ["POST"]),
            ("/search", search, ["GET"]),
            ("/queue", queue, ["GET"]), ("/jobs/{id}/retry", retry, ["POST"])]


def _float(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value  # the service's validation names the parameter
