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

from .access import require_session
from .admin_pages import ADMIN_PAGES
from .oauth_pages import OAUTH_PAGES, consent_endpoint, safe_next
from .pages import PAGES
from .webhook_pages import WEBHOOK_PAGES
from .render import page, redirect
from .session import (COOKIE, clear_session, csrf_ok, holder, identify, same_origin,
                      set_session, transport_is_safe)
from .sessions import Sessions, SignInThrottle
from ...admin.tokens import hash_token

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
        group = getattr(runtime, "group", None)
        if group is not None and group.count > 1:  # a browser may land on any process
            from pathlib import Path

            from .shared_sessions import SharedSessions, SharedThrottle

            shared = Path(group.dir) / "inspector.db"
            self.sessions = SharedSessions(shared)
            self.throttle = SharedThrottle(shared)
        else:
            self.sessions = Sessions()
            self.throttle = SignInThrottle()

    async def _principal(self, request: Request) -> Any:
        return await identify(self.storage, self.sessions, request.cookies.get(COOKIE))

    async def home(self, request: Request) -> Response:
        principal = await self._principal(request)
        if principal is None:
            return redirect("/ui/signin")
        return redirect("/ui/admin" if principal.is_admin else "/ui/memories")

    async def signin_form(self, request: Request) -> Response:
        return page("signin.html", me=None, error=None, next=safe_next(
            request.query_params.get("next")),
                    insecure=not transport_is_safe(request, self.public_url))

    async def signin(self, request: Request) -> Response:
        if not transport_is_safe(request, self.public_url):
            return page("signin.html", 400, me=None, insecure=True,
                        error="Not signed in: this connection is plain HTTP from another machine.")
        if not same_origin(request, self.public_url):
            return page("signin.html", 403, me=None, insecure=False,
                        error="Sign-in from another site is refused.")
        address = request.client.host if request.client else "unknown"
        wait = self.throttle.retry_after(address)
        if wait is not None:
            minutes = max(1, round(wait / 60))
            response = page("signin.html", 429, me=None, insecure=False,
                            error=f"Too many failed sign-ins from your address. Try again in "
                                  f"about {minutes} minute{'s' if minutes != 1 else ''} "
                                  f"({wait} s), with a token from `recall create-token`.")
            response.headers["Retry-After"] = str(wait)
            return response
        form = await request.form()
        token = str(form.get("token") or "").strip()
        digest = hash_token(token) if token else None
        who = await holder(self.storage, digest) if digest else None
        if who is None:
            self.throttle.failed(address)
            return page("signin.html", 401, me=None, insecure=False,
                        error="Unknown or revoked token. Create one with `recall create-token "
                              "NAMESPACE` (or `--admin`).")
        # Back to the OAuth consent page when sign-in started there (only there).
        back = safe_next(form.get("next"))
        response = redirect(back or ("/ui/admin" if who[0] == "admin" else "/ui/memories"))
        set_session(response, self.sessions.open(digest), secure=True)  # type: ignore[arg-type]
        return response

    async def signout(self, request: Request) -> Response:
        form = await request.form()
        principal = await self._principal(request)
        if principal is not None and (not csrf_ok(principal, form.get("csrf"))
                                      or not same_origin(request, self.public_url)):
            return page("error.html", 403, me=principal, csrf=principal.csrf,
                        message="CSRF check failed. Reload the page and try again.")
        self.sessions.close(request.cookies.get(COOKIE))  # a copy of the cookie is now void
        response = redirect("/ui/signin")
        clear_session(response, secure=True)
        return response

    def routes(self) -> list[Route]:
        """Every page, relative to /ui."""
        table = [Route("/", self.home, methods=["GET"]),
                 Route("/signin", self.signin_form, methods=["GET"]),
                 Route("/signin", self.signin, methods=["POST"]),
                 Route("/signout", self.signout, methods=["POST"])]
        table.append(Route("/oauth/consent", consent_endpoint(self), methods=["GET", "POST"]))
        for path, handler, methods, access in [*PAGES, *OAUTH_PAGES, *WEBHOOK_PAGES, *ADMIN_PAGES]:
            table.append(Route(path, require_session(self, handler, access), methods=methods))
        return table
