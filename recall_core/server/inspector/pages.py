"""The inspector's pages for a namespace: memories, a memory's story, search explained,
queue and health. Each handler is `async (request, ctx) -> Response` behind
`access.require_session`; reads go through `reads`, changes through MemoryService and
AdminService."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...contracts import MemoryFilter
from ...errors import RecallError
from ...models import MEMORY_TYPES
from .access import Access, Context, float_param, int_param
from .calls import call
from .reads import server_status
from .render import redirect

PAGE_SIZE = 25
STATES = ("active", "superseded", "all")
JOB_STATUSES = ("queued", "running", "done", "failed")
OUTCOMES = {"returned": "returned", "below_threshold": "below score_threshold",
            "mmr": "removed by MMR (too similar to a better result)",
            "limit": "beyond the limit", "budget": "cut by max_tokens"}


async def memories(request: Request, ctx: Context) -> Response:
    q = request.query_params
    state = q.get("state") if q.get("state") in STATES else "active"
    mtype = q.get("type") if q.get("type") in MEMORY_TYPES else None
    where = MemoryFilter(type=mtype, topic=q.get("topic") or None,
                         session_id=q.get("session") or None, agent_id=q.get("agent") or None,
                         state=state, text=q.get("q") or None)
    offset = int_param(q.get("offset"), 0)
    rows, total = await ctx.runtime.service.browse(ctx.caller, where, PAGE_SIZE, offset)
    filters = {"type": mtype or "", "topic": where.topic or "", "session": where.session_id or "",
               "agent": where.agent_id or "", "state": state, "q": where.text or ""}
    return ctx.render("memories.html", rows=rows, total=total, offset=offset,
                      page_size=PAGE_SIZE, filters=filters, types=MEMORY_TYPES,
                      states=STATES, flash=q.get("flash"))


async def memory(request: Request, ctx: Context) -> Response:
    story = await ctx.runtime.service.story(ctx.caller, request.path_params["id"])
    if story is None:
        return ctx.render("error.html", 404, message="No such memory in this namespace. "
                          "It may have been forgotten.")
    retrievals = await ctx.runtime.service.retrievals(ctx.caller, request.path_params["id"])
    return ctx.render("memory.html", types=MEMORY_TYPES, flash=request.query_params.get("flash"),
                      retrievals=retrievals, **story)


async def forget(request: Request, ctx: Context) -> Response:
    done = await ctx.service.delete(ctx.caller, request.path_params["id"])
    n = len(done.get("forgotten_ids") or [done["deleted"]])
    note = "" if n == 1 else f" with its history ({n} versions)"
    return redirect("/ui/memories", ns=ctx.ns_param(), flash=f"Memory forgotten{note}.")


async def pin(request: Request, ctx: Context) -> Response:
    pinned = ctx.form.get("pinned") == "1"
    m = await ctx.service.pin(ctx.caller, request.path_params["id"], pinned)
    return redirect(f"/ui/memories/{m.id}", ns=ctx.ns_param(),
                    flash="Pinned: decay will never lower its importance." if pinned
                    else "Unpinned: its importance decays again when it goes unused.")


async def edit(request: Request, ctx: Context) -> Response:
    f = ctx.form
    importance = f.get("importance")
    new = await ctx.service.correct(
        ctx.caller, request.path_params["id"], text=f.get("text"),
        type=f.get("type") or None, value=f.get("value"),
        importance=float_param(importance) if importance not in (None, "") else None)
    return redirect(f"/ui/memories/{new.id}", ns=ctx.ns_param(),
                    flash="Saved as a correction; the previous version is kept as superseded.")


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
            result = await ctx.service.search(
                ctx.caller, params["query"], limit=int_param(params["limit"], 10, 1),
                recency_weight=float_param(params["recency_weight"]),
                mmr_lambda=float_param(params["mmr_lambda"]),
                score_threshold=float_param(params["score_threshold"]),
                max_tokens=int_param(params["max_tokens"], 0, 1) if params["max_tokens"] else None,
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


async def queue(request: Request, ctx: Context) -> Response:
    q = request.query_params
    status = q.get("status") if q.get("status") in JOB_STATUSES else "failed"
    if not ctx.caller.is_owner:  # the namespace's jobs hold the owner's and others' texts
        return ctx.render("error.html", 404, message="The queue is the namespace owner's page.")
    jobs = await ctx.admin.jobs(ctx.namespace, status, PAGE_SIZE, int_param(q.get("offset"), 0))
    return ctx.render("queue.html", jobs=jobs, job_status=status,
                      health=await server_status(ctx.runtime), flash=q.get("flash"))


async def retry(request: Request, ctx: Context) -> Response:
    if not ctx.caller.is_owner:
        return ctx.render("error.html", 404, message="The queue is the namespace owner's page.")
    await ctx.admin.retry_job(ctx.principal.actor, request.path_params["id"], ctx.namespace)
    return redirect("/ui/queue", ns=ctx.ns_param(), flash="Job queued again.")


def _needs(operation: str) -> Access:
    """A namespace page doing what `operation` does (the scope it needs follows from it)."""
    return Access(operation=operation)


#: (path under /ui, handler, methods, access): a namespace token needs the scope of the
#: operation a page performs (browsing memory:read, edits memory:write, forget memory:forget).
PAGES = [("/memories", memories, ["GET"], _needs("inspect_memories")),
         ("/memories/{id}", memory, ["GET"], _needs("inspect_memories")),
         ("/memories/{id}/forget", forget, ["POST"], _needs("delete_memory")),
         ("/memories/{id}/edit", edit, ["POST"], _needs("correct_memory")),
         ("/memories/{id}/pin", pin, ["POST"], _needs("pin_memory")),
         ("/search", search, ["GET"], _needs("search_memories")),
         ("/queue", queue, ["GET"], _needs("get_memory_stats")),
         ("/jobs/{id}/retry", retry, ["POST"], _needs("retry_job")),
         ("/calls/{id}", call, ["GET"], _needs("search_memories"))]
