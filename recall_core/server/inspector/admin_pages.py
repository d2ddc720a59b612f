"""The inspector's admin pages (admin token only): namespaces, tokens, erasure, export, the
audit log. They call AdminService, the same code as the admin API."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from .pages import Context, guarded, _int
from .render import SECURITY_HEADERS, redirect


def routes(inspector: Any) -> list[tuple[str, Any, list[str]]]:
    admin = inspector.admin

    @guarded(inspector, needs_namespace=False, admin_only=True)
    async def namespaces(request: Request, ctx: Context) -> Response:
        offset = _int(request.query_params.get("offset"), 0)
        data = await admin.namespaces(50, offset)
        return ctx.render("admin.html", data=data, offset=offset,
                          flash=request.query_params.get("flash"))

    @guarded(inspector, admin_only=True)
    async def namespace(request: Request, ctx: Context) -> Response:
        tokens = await admin.tokens(ctx.namespace)
        return ctx.render("admin_namespace.html", tokens=tokens["tokens"],
                          flash=request.query_params.get("flash"))

    @guarded(inspector, admin_only=True)
    async def create_token(request: Request, ctx: Context) -> Response:
        made = await admin.create_token(ctx.principal.actor, ctx.namespace)
        # Rendered, not redirected: the token is shown once and never put in a URL.
        tokens = await admin.tokens(ctx.namespace)
        return ctx.render("admin_namespace.html", tokens=tokens["tokens"], new_token=made)

    @guarded(inspector, admin_only=True)
    async def revoke_token(request: Request, ctx: Context) -> Response:
        tid = ctx.form.get("token_id", "")
        await admin.revoke_token(ctx.principal.actor, ctx.namespace, tid)
        return redirect("/ui/admin/namespace", ns=ctx.namespace, flash=f"Token {tid} revoked.")

    @guarded(inspector, admin_only=True)
    async def erase(request: Request, ctx: Context) -> Response:
        done = await admin.erase_namespace(ctx.principal.actor, ctx.namespace,
                                           ctx.form.get("confirm"))
        return redirect("/ui/admin", flash=f"Namespace {ctx.namespace} erased: "
                        f"{done['memories_deleted']} memories, {done['tokens_revoked']} tokens revoked.")

    @guarded(inspector, admin_only=True)
    async def export(request: Request, ctx: Context) -> Response:
        lines = await admin.export(ctx.principal.actor, ctx.namespace)

        async def body() -> Any:
            async for line in lines:
                yield line + "\n"
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in ctx.namespace)
        return StreamingResponse(body(), media_type="application/x-ndjson", headers={
            **SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{safe}.jsonl"'})

    @guarded(inspector, needs_namespace=False, admin_only=True)
    async def audit(request: Request, ctx: Context) -> Response:
        offset = _int(request.query_params.get("offset"), 0)
        return ctx.render("audit.html", data=await admin.audit(50, offset), offset=offset)

    return [("/admin", namespaces, ["GET"]), ("/admin/namespace", namespace, ["GET"]),
            ("/admin/tokens", create_token, ["POST"]),
            ("/admin/tokens/revoke", revoke_token, ["POST"]), ("/admin/erase", erase, ["POST"]),
            ("/admin/export", export, ["GET"]), ("/admin/audit", audit, ["GET"])]
