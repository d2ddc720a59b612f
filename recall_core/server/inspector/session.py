"""Sign-in for the inspector: who is calling, from a cookie that holds their token.

The token a person pastes at /ui/signin is kept in one cookie (`recall_ui`): HttpOnly (page
scripts cannot read it), SameSite=Strict (no other site's page can make the browser send it),
Path=/ui, and Secure wherever the browser accepts that (HTTPS, behind a TLS proxy, or
loopback). It is checked against storage on every request, exactly like a bearer token, so
revoking it or erasing its namespace signs the person out at once. It never appears in a URL,
a page or a log.

Every state-changing request (POST) must carry a CSRF token: an HMAC of the session token,
sent as a hidden form field. And a request whose Origin names another site is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from ...admin.tokens import hash_token

COOKIE = "recall_ui"
COOKIE_PATH = "/ui"


@dataclass(frozen=True)
class Principal:
    token: str
    #: "namespace" or "admin"
    kind: str
    #: the namespace (namespace tokens) or the admin token's name
    name: str

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin"

    @property
    def actor(self) -> str:
        return f"admin:{self.name}" if self.is_admin else f"namespace:{self.name}"

    @property
    def csrf(self) -> str:
        return csrf_token(self.token)


def csrf_token(token: str) -> str:
    return hmac.new(token.encode(), b"recall-ui-csrf", hashlib.sha256).hexdigest()[:40]


def csrf_ok(principal: Principal, sent: Any) -> bool:
    return isinstance(sent, str) and hmac.compare_digest(sent.encode(), principal.csrf.encode())


async def identify(storage: Any, token: str | None) -> Principal | None:
    """The holder of `token`: an admin, a namespace, or nobody (unknown or revoked)."""
    if not token:
        return None
    digest = hash_token(token)
    if storage.capabilities.admin:
        name = await storage.admin_for_token(digest)
        if name is not None:
            return Principal(token, "admin", name)
    namespace = await storage.namespace_for_token(digest)
    if namespace is not None:
        return Principal(token, "namespace", namespace)
    return None


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


def set_session(response: Any, token: str, secure: bool) -> None:
    response.set_cookie(COOKIE, token, path=COOKIE_PATH, httponly=True, samesite="strict",
                        secure=secure)


def clear_session(response: Any, secure: bool) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict",
                           secure=secure)
