"""The inspector's webhooks page: a namespace's subscriptions and its delivery log, with a
replay button for dead deliveries. Anyone who may see the namespace sees the page (never a
secret); creating, deleting and replaying take an admin or the namespace's owner with
`memory:forget` (an agent-bound or narrower token only reads). Forms carry the CSRF value
like every other form (checked in `access.require_session`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...access.principal import FORGET, parse_scopes
from ...contracts import EVENT_TYPES
from ...errors import InvalidParam
from ...events.subscriptions import WebhookAdmin
from .access import Access, Context
from .render import redirect


def hooks(ctx: Context) -> WebhookAdmin:
    return WebhookAdmin(ctx.inspector.storage, ctx.runtime.config)


async def may_manage(ctx: Context) -> bool:
    if ctx.principal.is_admin:
        return True
    found = ctx.inspector.sessions.get(ctx.principal.session)
    grant = await ctx.inspector.storage.grant_for_token(found.token_hash) if found else None
    return grant is not None and grant.agent is None and FORGET in parse_scopes(grant.scopes)


async def _render(request: Request, ctx: Context, status: int = 200, **extra) -> Response:
    h = hooks(ctx)
    return ctx.render("webhooks.html", status, subscriptions=await h.list(ctx.namespace),
                      deliveries=await h.deliveries(ctx.namespace, None, 50),
                      event_types=EVENT_TYPES, manage=await may_manage(ctx),
                      flash=request.query_params.get("flash"), **extra)


async def webhooks(request: Request, ctx: Context) -> Response:
    return await _render(request, ctx)


async def _need_manage(ctx: Context) -> None:
    if not await may_manage(ctx):
        raise InvalidParam("Managing webhooks takes an admin token or the namespace owner's "
                           "token with the memory:forget scope.")


async def create(request: Request, ctx: Context) -> Response:
    await _need_manage(ctx)
    events = [e for e in EVENT_TYPES if ctx.form.get(f"event:{e}")]
    made = await hooks(ctx).create(ctx.namespace, ctx.form.get("url", ""), events,
                                   bool(ctx.form.get("include_text")))
    # Rendered, not redirected: the secret is shown once and never put in a URL.
    return await _render(request, ctx, 201, new_secret=made)


async def delete(request: Request, ctx: Context) -> Response:
    await _need_manage(ctx)
    sid = str(ctx.form.get("subscription_id", ""))
    await hooks(ctx).delete(ctx.namespace, sid)
    return redirect("/ui/webhooks", ns=ctx.ns_param(), flash=f"Subscription {sid} deleted.")


async def replay(request: Request, ctx: Context) -> Response:
    await _need_manage(ctx)
    did = str(ctx.form.get("delivery_id", ""))
    await hooks(ctx).replay(ctx.namespace, did)
    return redirect("/ui/webhooks", ns=ctx.ns_param(), flash=f"Delivery {did} queued again.")


#: (path under /ui, handler, methods); namespace pages (admins pick one with ?ns=).
#: Reading the page takes memory:read; changing subscriptions memory:forget (and the owner's
#: token: `may_manage` checks that too), as the OAuth grants pages do.
_READ, _MANAGE = Access(operation="inspect_memories"), Access(operation="delete_memory")
WEBHOOK_PAGES = [("/webhooks", webhooks, ["GET"], _READ), ("/webhooks", create, ["POST"], _MANAGE),
                 ("/webhooks/delete", delete, ["POST"], _MANAGE),
                 ("/webhooks/replay", replay, ["POST"], _MANAGE)]
