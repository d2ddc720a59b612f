"""The inspector: server-rendered pages at /ui for people (a namespace's memories, search
explained, a memory's story, queue and health) and for operators (namespaces, tokens).

Jinja2 templates and a little plain JavaScript, shipped as package data: no front-end build.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route, Router
from starlette.staticfiles import StaticFiles

from ...admin.service import AdminService
from . import admin_pages, pages
from .render import page, redirect
from .session import (COOKIE, clear_session, csrf_ok, identify, same_origin, set_session,
                      transport_is_safe)


class Inspector:
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

    def router(self) -> Router:
        table = [Route("/", self.home, methods=["GET"]),
                 Route("/signin", self.signin_form, methods=["GET"]),
                 Route("/signin", self.signin, methods=["POST"]),
                 Route("/signout", self.signout, methods=["POST"]),
                 Mount("/static", app=StaticFiles(packages=[("recall_core.server.inspector", "static")]))]
        for path, endpoint, methods in pages.routes(self) + admin_pages.routes(self):
            table.append(Route(path, endpoint, methods=methods))
        return Router(table)


class _UiMount(Mount):
    """Mount whose path also matches decoded newlines (see admin.api.PrefixMount)."""

    def __init__(self, path: str, app: Any):
        super().__init__(path, app=app)
        self.path_regex = re.compile(self.path_regex.pattern, re.DOTALL)


def mount_inspector(app: Any, runtime: Any, admin: AdminService,
                    public_url: str | None = None) -> Inspector:
    inspector = Inspector(runtime, admin, public_url)
    app.router.routes.append(_UiMount("/ui", inspector.router()))
    return inspector
