"""The inspector's OAuth pages ([oauth] mode = "builtin"): the consent page the authorization
server sends browsers to, and the list of a namespace's OAuth grants with revoke.

Consent is given by a signed-in person, with the inspector's CSRF and same-origin checks on
the form. What they may grant is bounded by the token they signed in with: a namespace token
grants its own namespace, never more scopes than it has, and an agent-bound token only its own
agent; an admin token may grant any namespace. Someone not signed in is sent to sign in and
back (`/ui/signin?next=...`, which only ever returns to this page).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...access.principal import ALL_SCOPES, SCOPE_ORDER, parse_scopes
from ...admin.oauth_grants import OAuthGrants
from ...errors import RecallError
from ..oauth import consent
from .access import Access, Context, require_session
from .render import SECURITY_HEADERS, redirect
from .session import COOKIE, identify

CONSENT = "/ui/oauth/consent"
CONSENT_ACCESS = Access(needs_namespace=False)


def auth_server(ctx: Context) -> Any:
    from ..oauth.builtin import RecallAuthServer

    mcp = getattr(ctx.runtime, "mcp", None)
    server = getattr(mcp, "auth", None)
    if not isinstance(server, RecallAuthServer):
        raise RecallError("Recall's own OAuth authorization server is off: set [oauth] "
                          "mode = \"builtin\" in recall.toml and restart.", code="NOT_FOUND")
    return server


async def limits(ctx: Context) -> tuple[str | None, frozenset[str], bool]:
    """(the agent the signer must grant, or None for any; the scopes they may grant; whether
    they may pick the namespace)."""
    if ctx.principal.is_admin:
        return None, ALL_SCOPES, True
    session = ctx.inspector.sessions.get(ctx.principal.session)
    grant = await ctx.inspector.storage.grant_for_token(session.token_hash) if session else None
    if grant is None:
        raise RecallError("Your session's token was revoked. Sign in again.", code="UNAUTHORIZED")
    return grant.agent, parse_scopes(grant.scopes), False


def _consent_page(ctx: Context, request: consent.ConsentRequest, status: int = 200,
                  error: str | None = None, **extra: Any) -> Response:
    response = ctx.render("oauth_consent.html", status, req=request, error=error,
                          scope_order=SCOPE_ORDER, **extra)
    # The form's answer is a redirect to the client: CSP form-action must allow its origin.
    response.headers["Content-Security-Policy"] = SECURITY_HEADERS[
        "Content-Security-Policy"].replace("form-action 'self'",
                                           f"form-action 'self' {request.redirect_origin}")
    return response


async def consent_page(request: Request, ctx: Context) -> Response:
    server = auth_server(ctx)
    values = ctx.form if request.method == "POST" else request.query_params
    req = await consent.read_request(server, values)
    agent, may, pick_namespace = await limits(ctx)
    namespace = ctx.principal.name if not pick_namespace else None
    shown = dict(agent=agent, may=may, pick_namespace=pick_namespace, namespace=namespace)
    if request.method == "GET":
        return _consent_page(ctx, req, **shown)
    actor = ctx.principal.actor
    if ctx.form.get("decision") != "approve":
        target = await consent.deny(server, req, actor, namespace)
        return RedirectResponse(target, status_code=303)
    chosen_ns = str(ctx.form.get("namespace") or "") if pick_namespace else namespace
    chosen_agent = agent if agent is not None else ctx.form.get("agent")
    try:
        scopes = consent.chosen_scopes(await request.form(), req)
        if not set(scopes) <= may:
            raise RecallError(f"Your token may only grant {' '.join(sorted(may))}.",
                              code="INVALID_PARAM")
        target = await consent.approve(server, req, actor, chosen_ns or "", chosen_agent, scopes)
    except RecallError as exc:
        return _consent_page(ctx, req, 400, error=exc.message, **shown)
    return RedirectResponse(target, status_code=303)


def consent_endpoint(inspector: Any) -> Any:
    """The consent page: signed-in (else to sign-in and back), CSRF-checked on POST."""
    inner = require_session(inspector, _refusing(consent_page), CONSENT_ACCESS)

    async def endpoint(request: Request) -> Response:
        if request.method == "GET" and await identify(
                inspector.storage, inspector.sessions, request.cookies.get(COOKIE)) is None:
            here = CONSENT + ("?" + request.url.query if request.url.query else "")
            return RedirectResponse(f"/ui/signin?next={quote(here, safe='')}",
                                    status_code=303, headers=SECURITY_HEADERS)
        return await inner(request)

    return endpoint


def _refusing(handler: Any) -> Any:
    async def wrapped(request: Request, ctx: Context) -> Response:
        try:
            return await handler(request, ctx)
        except consent.ConsentRefused as exc:
            return ctx.render("error.html", 400, message=exc.message)
    wrapped.__name__ = handler.__name__
    return wrapped


def safe_next(value: Any) -> str | None:
    """A sign-in's `next`, only when it is the consent page (no open redirect)."""
    text = str(value or "")
    return text if text.startswith(CONSENT + "?") and "\n" not in text else None


async def grants(request: Request, ctx: Context) -> Response:
    data = await OAuthGrants(ctx.inspector.storage).list(ctx.namespace)
    return ctx.render("oauth_grants.html", grants=data["grants"],
                      flash=request.query_params.get("flash"))


async def revoke_grant(request: Request, ctx: Context) -> Response:
    gid = str(ctx.form.get("grant_id", ""))
    await OAuthGrants(ctx.inspector.storage).revoke(ctx.principal.actor, ctx.namespace, gid)
    return redirect("/ui/oauth/grants", ns=ctx.ns_param(),
                    flash=f"OAuth grant {gid} revoked: its client gets 401 at once.")


#: (path under /ui, handler, methods) behind the namespace check.
#: Managing the namespace's OAuth grants (credentials) takes its strongest scope,
#: memory:forget (as erasing does): a read-only or write-only token cannot see or revoke them.
_CREDENTIALS = Access(operation="delete_memory")
OAUTH_PAGES = [("/oauth/grants", grants, ["GET"], _CREDENTIALS),
               ("/oauth/grants/revoke", revoke_grant, ["POST"], _CREDENTIALS)]
