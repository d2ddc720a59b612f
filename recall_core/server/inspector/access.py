"""Who may see an inspector page: `require_session` turns a page handler into an endpoint
behind the sign-in, CSRF and namespace checks, and hands the handler a `Context`.

A page handler is a plain module-level function `async (request, ctx) -> Response`, so it can
be imported and called alone (tests give it a Context of their own).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from ...access.principal import Principal as Caller
from ...access.tool_scopes import require_scope
from ...errors import Forbidden, RecallError
from .render import page, redirect
from .session import COOKIE, Principal, csrf_ok, identify, same_origin

if TYPE_CHECKING:
    from ...admin.service import AdminService
    from ...memory.service import MemoryService

#: The inspector's state (recall_core.server.inspector.Inspector: runtime, storage, admin,
#: public_url); typed loosely so this module does not import the package that imports it.
Inspector = Any

Endpoint = Callable[[Request], Awaitable[Response]]


class Context:
    """The signed-in caller, the namespace the page is about, the posted form, and the
    services the page calls."""

    def __init__(self, inspector: Inspector, principal: Principal, namespace: str | None,
                 form: dict[str, Any]):
        self.inspector = inspector
        self.principal = principal
        self.namespace = namespace
        self.form = form

    @property
    def service(self) -> MemoryService:
        return self.inspector.runtime.service

    @property
    def admin(self) -> AdminService:
        return self.inspector.admin

    @property
    def runtime(self) -> Any:
        return self.inspector.runtime

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        return page(template, status, me=self.principal, ns=self.namespace,
                    csrf=self.principal.csrf, **context)

    @property
    def caller(self) -> Caller:
        """Who the service acts for: an admin as the owner of the namespace the page is
        about, a namespace token as its holder (an agent sees only what it may)."""
        if self.principal.is_admin:
            return Caller(self.namespace or "")
        return Caller(self.principal.name, self.principal.agent, self.principal.scopes)

    def ns_param(self) -> str | None:
        """The `ns` to carry in a redirect: an admin's pages name their namespace."""
        return self.namespace if self.principal.is_admin else None


Handler = Callable[[Request, Context], Awaitable[Response]]


@dataclass(frozen=True)
class Access:
    """What a page needs: a namespace to be about (an admin picks one with ?ns=), an admin,
    and for a namespace token the scope of `operation` (`access.tool_scopes`: the same
    scope the MCP tool or A2A skill doing the same thing needs)."""

    needs_namespace: bool = True
    admin_only: bool = False
    operation: str | None = None


NAMESPACE_PAGE = Access()
ADMIN_PAGE = Access(admin_only=True)
ADMIN_OVERVIEW = Access(needs_namespace=False, admin_only=True)


def require_session(inspector: Inspector, handler: Handler,
                    access: Access = NAMESPACE_PAGE) -> Endpoint:
    """`handler` as an endpoint: signed in (else to /ui/signin, or 401 for a POST), CSRF and
    same origin on POST, admin pages for admins only, and the namespace scoped (a namespace
    token sees only its own; another namespace's pages do not exist for it)."""

    async def endpoint(request: Request) -> Response:
        principal = await identify(inspector.storage, inspector.sessions,
                                   request.cookies.get(COOKIE))
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
        if access.admin_only and not principal.is_admin:
            return _not_found(principal)
        wanted = form.get("ns") or request.query_params.get("ns") or None
        if principal.is_admin:
            namespace = wanted
            if access.needs_namespace and not namespace:
                return redirect("/ui/admin")
        elif wanted is not None and wanted != principal.name:
            return _not_found(principal)
        else:
            namespace = principal.name
        refused = _scope_refusal(principal, access.operation)
        if refused is not None:
            return refused
        ctx = Context(inspector, principal, namespace, form)
        try:
            return await handler(request, ctx)
        except RecallError as exc:
            return ctx.render("error.html", 400, message=exc.message)

    endpoint.__name__ = handler.__name__
    return endpoint


def _scope_refusal(principal: Principal, operation: str | None) -> Response | None:
    """The 403 page for a namespace token without the scope `operation` needs, else None."""
    if operation is None or principal.is_admin:
        return None
    try:
        require_scope(principal.grant, operation, f"This page ({operation})")
    except Forbidden as exc:
        return page("error.html", 403, me=principal, csrf=principal.csrf, message=exc.message)
    return None


def _not_found(principal: Principal) -> Response:
    return page("error.html", 404, me=principal, csrf=principal.csrf, message="Not found.")


def int_param(value: Any, default: int, lo: int = 0, hi: int = 10**9) -> int:
    """A query or form value as an int within [lo, hi], `default` when it is not a number."""
    try:
        return min(hi, max(lo, int(value)))
    except (TypeError, ValueError):
        return default


def float_param(value: Any) -> Any:
    """A value as a float where it is one; else as sent (the service's validation names the
    parameter)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return value
