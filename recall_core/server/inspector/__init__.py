"""The inspector: server-rendered pages at /ui for people (a namespace's memories, search
explained, a memory's story, queue and health) and for operators (namespaces, tokens).

Jinja2 templates and a little plain JavaScript, shipped as package data: no front-end build.
`Inspector.routes()` gives the pages' routes; the HTTP app (server/app.py) mounts them at /ui
with the static files (`STATIC`). Modules: `access` (sign-in, CSRF and namespace checks around
a page), `pages` and `admin_pages` (the handlers), `reads` (what pages read), `session`,
`render`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from .access import NAMESPACE_PAGE, require_session
from .admin_pages import ADMIN_PAGES
from .pages import PAGES
from .render import page, redirect
from .session import (COOKIE, clear_session, csrf_ok, identify, same_origin, set_session,
                      transport_is_safe)

if TYPE_CHECKING:
    from ...admin.service import AdminService


def static_files() -> StaticFiles:
    """The pages' script and style sheet (package data), served at /ui/static."""
    return StaticFiles(packages=[("recall_core.server.inspector", "static")])


class Inspector:
    """The inspector's state (the runtime, its AdminService, the public URL) and its sign-in
    handlers; the page handlers are in `pages` and `admin_pages`."""

    def __init__(self, runtime: Any, admin: AdminService, public_url: str | None):
        self.runtime = runtime
        self.storage = runtime.storage
        self.admin = admin
        self.public_url = public_url

    async def home(self, request: Request) -> Response:
        principal = await identify(self.storage, request.cookies.get(COOKIE))
        if principal is None:
            return redirect("/ui/signin")
        return redirect("/ui/admin" if principal.is_admin else "/ui/memories")

    async def signin_form(self, request: Request) -> Response:
        return page("signin.html", me=None, error=None,
                    insecure=not transport_is_safe(request, self.public_url))

    async def signin(self, request: Request) -> Response:
        if not transport_is_safe(request, self.public_url):
            return page("signin.html", 400, me=None, insecure=True,
                        error="Not signed in: this connection is plain HTTP from another machine.")
        if not same_origin(request, self.public_url):
            return page("signin.html", 403, me=None, insecure=False,
                        error="Sign-in from another site is refused.")
        form = await request.form()
        token = str(form.get("token") or "").strip()
        principal = await identify(self.storage, token)
        if principal is None:
            return page("signin.html", 401, me=None, insecure=False,
                        error="Unknown or revoked token. Create one with `recall create-token "
                              "NAMESPACE` (or `--admin`).")
        response = redirect("/ui/admin" if principal.is_admin else "/ui/memories")
        set_session(response, token, secure=True)
        return response

    async def signout(self, request: Request) -> Response:
        form = await request.form()
        principal = await identify(self.storage, request.cookies.get(COOKIE))
        if principal is not None and (not csrf_ok(principal, form.get("csrf"))
                                      or not same_origin(request, self.public_url)):
            return page("error.html", 403, me=principal, csrf=principal.csrf,
                        message="CSRF check failed. Reload the page and try again.")
        response = redirect("/ui/signin")
        clear_session(response, secure=True)
        return response

    def routes(self) -> list[Route]:
        """Every page, relative to /ui."""
        table = [Route("/", self.home, methods=["GET"]),
                 Route("/signin", self.signin_form, methods=["GET"]),
                 Route("/signin", self.signin, methods=["POST"]),
                 Route("/signout", self.signout, methods=["POST"])]
        for path, handler, methods in PAGES:
            table.append(Route(path, require_session(self, handler, NAMESPACE_PAGE),
                               methods=methods))
        for path, handler, methods, access in ADMIN_PAGES:
            table.append(Route(path, require_session(self, handler, access), methods=methods))
        return table
