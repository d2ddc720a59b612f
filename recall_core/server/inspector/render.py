"""Jinja2 environment and responses for the inspector (autoescaped HTML, security headers)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse

# Pages load only our own script and style; nothing may frame them or post elsewhere.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; "
                               "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on our own
    # form posts, and the origin check (session.same_origin) refuses those.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _dt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    return value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{float(value):.{digits}f}"


def _g(value: Any) -> str:
    """A ranker's own score, whatever its scale (BM25 scores can be tiny or large)."""
    return "—" if value is None else f"{float(value):.3g}"


def _url(path: str, **params: Any) -> str:
    query = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(query) if query else "")


env = Environment(loader=PackageLoader("recall_core.server.inspector", "templates"),
                  autoescape=select_autoescape(["html"], default=True),
                  trim_blocks=True, lstrip_blocks=True)
env.filters["dt"] = _dt
env.filters["num"] = _num
env.filters["g"] = _g
env.globals["url"] = _url


def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = env.get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def redirect(path: str, **params: Any) -> RedirectResponse:
    return RedirectResponse(_url(path, **params), status_code=303, headers=SECURITY_HEADERS)
