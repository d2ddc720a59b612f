"""The inspector's admin pages (admin token only): namespaces, tokens, erasure, export, the
audit log. They call AdminService, the same code as the admin API. Each handler is
`async (request, ctx) -> Response` behind `access.require_session`."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ...access.principal import SCOPE_ORDER
from .access import ADMIN_OVERVIEW, ADMIN_PAGE, Context, int_param
from .render import SECURITY_HEADERS, redirect


async def namespaces(request: Request, ctx: Context) -> Response:
    offset = int_param(request.query_params.get("offset"), 0)
    data = await ctx.admin.namespaces(50, offset)
    return ctx.render("admin.html", data=data, offset=offset,
                      flash=request.query_params.get("flash"))


async def namespace(request: Request, ctx: Context) -> Response:
    tokens = await ctx.admin.tokens(ctx.namespace)
    return ctx.render("admin_namespace.html", tokens=tokens["tokens"], scopes=SCOPE_ORDER,
                      flash=request.query_params.get("flash"))


async def create_token(request: Request, ctx: Context) -> Response:
    # One checkbox per scope, named after it; none ticked is refused by the service (a
    # token that may do nothing), a blank agent is the namespace's owner.
    scopes = [s for s in SCOPE_ORDER if ctx.form.get(s)]
    made = await ctx.admin.create_token(ctx.principal.actor, ctx.namespace,
                                        ctx.form.get("agent") or None, scopes)
    # Rendered, not redirected: the token is shown once and never put in a URL.
    tokens = await ctx.admin.tokens(ctx.namespace)
    return ctx.render("admin_namespace.html", tokens=tokens["tokens"], scopes=SCOPE_ORDER,
                      new_token=made)


async def revoke_token(request: Request, ctx: Context) -> Response:
    tid = ctx.form.get("token_id", "")
    await ctx.admin.revoke_token(ctx.principal.actor, ctx.namespace, tid)
    return redirect("/ui/admin/namespace", ns=ctx.namespace, flash=f"Token {tid} revoked.")


async def erase(request: Request, ctx: Context) -> Response:
    done = await ctx.admin.erase_namespace(ctx.principal.actor, ctx.namespace,
                                           ctx.form.get("confirm"))
    return redirect("/ui/admin", flash=f"Namespace {ctx.namespace} erased: "
                    f"{done['memories_deleted']} memories, {done['tokens_revoked']} tokens revoked. "
                    f"Receipt digest {done['receipt']['digest']} (the audit keeps it).")


async def export(request: Request, ctx: Context) -> Response:
    lines = await ctx.admin.export(ctx.principal.actor, ctx.namespace)

    async def body() -> Any:
        async for line in lines:
            yield line + "\n"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in ctx.namespace or "")
    return StreamingResponse(body(), media_type="application/x-ndjson", headers={
        **SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{safe}.jsonl"'})


async def audit(request: Request, ctx: Context) -> Response:
    offset = int_param(request.query_params.get("offset"), 0)
    return ctx.render("audit.html", data=await ctx.admin.audit(50, offset), offset=offset)


#: (path under /ui, handler, methods, access).
ADMIN_PAGES = [("/admin", namespaces, ["GET"], ADMIN_OVERVIEW),
               ("/admin/namespace", namespace, ["GET"], ADMIN_PAGE),
               ("/admin/tokens", create_token, ["POST"], ADMIN_PAGE),
               ("/admin/tokens/revoke", revoke_token, ["POST"], ADMIN_PAGE),
               ("/admin/erase", erase, ["POST"], ADMIN_PAGE),
               ("/admin/export", export, ["GET"], ADMIN_PAGE),
               ("/admin/audit", audit, ["GET"], ADMIN_OVERVIEW)]
