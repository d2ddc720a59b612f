"""One delivery attempt over HTTP: the body signed for this attempt, sent to the address the
target check approved (the Host header and TLS server name stay the URL's host), redirects
not followed, a total timeout, and at most `body_cap` bytes of the answer read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..contracts import BODY_PREFIX_CHARS, Delivery, Subscription
from . import signing
from .targets import Target, TargetRefused, resolve


@dataclass
class Attempt:
    """What one attempt got: an HTTP status (None when none came back), the first
    characters of the answer, and what went wrong, if anything."""

    status: int | None
    body: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def body_of(delivery: Delivery, sub: Subscription) -> str:
    """The JSON body, the same on every attempt (Standard Webhooks' type/timestamp/data)."""
    data: dict[str, Any] = {"namespace": delivery.namespace, **delivery.payload}
    if sub.include_text and delivery.texts and delivery.event_type != "namespace.erased":
        data["texts"] = delivery.texts
    return json.dumps({"type": delivery.event_type, "timestamp": delivery.event_at.isoformat(),
                       "data": data}, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def pinned_url(url: str, target: Target) -> str:
    parts = urlsplit(url)
    host = f"[{target.address}]" if ":" in target.address else target.address
    return urlunsplit((parts.scheme, f"{host}:{target.port}", parts.path or "/", parts.query, ""))


async def send(client: httpx.AsyncClient, delivery: Delivery, sub: Subscription, at: datetime,
               allow_private: bool, body_cap: int) -> Attempt:
    try:
        target = await resolve(sub.url, allow_private)  # again, at connect time
    except TargetRefused as exc:
        return Attempt(None, error=f"refused: {exc}")
    body = body_of(delivery, sub)
    headers = signing.headers(delivery.event_id, at, body, sub.secrets)
    default_port = 443 if target.scheme == "https" else 80
    headers["host"] = target.host if target.port == default_port else f"{target.host}:{target.port}"
    headers["user-agent"] = "Recall-Webhooks/1"
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    request = client.build_request("POST", pinned_url(sub.url, target), headers=headers,
                                   content=body.encode(), extensions=extensions)
    try:
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            got = b""
            async for chunk in response.aiter_bytes():
                got += chunk
                if len(got) >= body_cap:
                    break
        finally:
            await response.aclose()
    except httpx.TimeoutException:
        return Attempt(None, error="timed out")
    except httpx.HTTPError as exc:
        return Attempt(None, error=f"{type(exc).__name__}: {exc}"[:300])
    text = got[:body_cap].decode("utf-8", "replace")[:BODY_PREFIX_CHARS]
    error = None if 200 <= response.status_code < 300 else f"HTTP {response.status_code}"
    if 300 <= response.status_code < 400:
        error += " (redirects are not followed: point the subscription at the final URL)"
    return Attempt(response.status_code, text, error)
