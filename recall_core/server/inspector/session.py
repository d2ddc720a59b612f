"""Sign-in for the inspector: who is calling, from a cookie that holds a session id.

A person pastes a token at /ui/signin; the server opens a session (`sessions.Sessions`:
server-side, expiring) and the cookie (`recall_ui`) holds only the session's random id, never
the token. The cookie is HttpOnly (page scripts cannot read it), SameSite=Strict (no other
site's page can make the browser send it), Path=/ui, and Secure wherever the browser accepts
that (HTTPS, behind a TLS proxy, or loopback). Sign-out ends the session on the server, so a
copy of the cookie is worth nothing after it; and the token behind a session is checked
against storage on every request, exactly like a bearer token, so revoking it or erasing its
namespace ends its sessions at once. The token never appears in a cookie, a URL, a page or
a log. Failed sign-ins are throttled per client address (`sessions.SignInThrottle`).

Every state-changing request (POST) must carry a CSRF token: an HMAC of the session id, sent
as a hidden form field. And a request whose Origin names another site is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from .sessions import Sessions

COOKIE = "recall_ui"
COOKIE_PATH = "/ui"


@dataclass(frozen=True)
class Principal:
    #: the session id (the cookie's value; secret, like the token it stands for)
    session: str
    #: "namespace" or "admin"
    kind: str
    #: the namespace (namespace tokens) or the admin token's name
    name: str
    #: the agent of an agent's namespace token (None: the owner, or an admin); its pages
    #: show only what the agent sees (`access.partitions`)
    agent: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin"

    @property
    def actor(self) -> str:
        return f"admin:{self.name}" if self.is_admin else f"namespace:{self.name}"

    @property
    def csrf(self) -> str:
        return csrf_token(self.session)


def csrf_token(session_id: str) -> str:
    return hmac.new(session_id.encode(), b"recall-ui-csrf", hashlib.sha256).hexdigest()[:40]


def csrf_ok(principal: Principal, sent: Any) -> bool:
    return isinstance(sent, str) and hmac.compare_digest(sent.encode(), principal.csrf.encode())


async def holder(storage: Any, token_hash: str) -> tuple[str, ...] | None:
    """("admin", name) or ("namespace", namespace, agent) of an unrevoked token, else None."""
    if storage.capabilities.admin:
        name = await storage.admin_for_token(token_hash)
        if name is not None:
            return "admin", name
    grant = await storage.grant_for_token(token_hash)
    return ("namespace", grant.namespace, grant.agent) if grant is not None else None


async def identify(storage: Any, sessions: Sessions, session_id: str | None) -> Principal | None:
    """The holder of the session `session_id`: an admin, a namespace, or nobody (no such
    session, expired, or its token revoked: then the token's sessions end here too)."""
    found = sessions.get(session_id)
    if found is None or session_id is None:
        return None
    who = await holder(storage, found.token_hash)
    if who is None:
        sessions.close_token(found.token_hash)
        return None
    return Principal(session_id, *who)


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_is_safe(request: Request, public_url: str | None) -> bool:
    """Whether a token may travel here: over TLS (directly, via a proxy uvicorn trusts, or
    as public_url says), or to this same machine."""
    if request.url.scheme == "https":
        return True
    if public_url and urlsplit(public_url).scheme == "https":
        return True
    return is_loopback(request.url.hostname)


def same_origin(request: Request, public_url: str | None) -> bool:
    """False when the browser says the request comes from another origin."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    allowed = {f"{request.url.scheme}://{request.url.netloc}"}
    if public_url:
        p = urlsplit(public_url)
        allowed.add(f"{p.scheme}://{p.netloc}")
    return origin in allowed


def set_session(response: Any, session_id: str, secure: bool) -> None:
    response.set_cookie(COOKIE, session_id, path=COOKIE_PATH, httponly=True, samesite="strict",
                        secure=secure)


def clear_session(response: Any, secure: bool) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict",
                           secure=secure)
