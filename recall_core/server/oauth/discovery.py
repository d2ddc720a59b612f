"""Where an external issuer publishes its signing keys: OpenID Connect discovery.

Read once at start-up, so a mistyped issuer stops `recall serve` with a message instead of
every token failing later. Set `oauth.jwks_uri` to skip it (then Recall starts even while the
issuer is unreachable; tokens verify once the keys can be fetched).
"""

from __future__ import annotations

from typing import Any

import httpx2

from ...errors import ConfigError

WELL_KNOWN = ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server")


def discovery_urls(issuer: str) -> list[str]:
    """OIDC discovery appends its path to the issuer (OpenID Connect Discovery §4); RFC 8414
    inserts it after the host. Both are tried, OIDC's first."""
    from urllib.parse import urlsplit

    base = issuer.rstrip("/")
    parts = urlsplit(base)
    origin = f"{parts.scheme}://{parts.netloc}"
    urls = [base + WELL_KNOWN[0]]
    urls.append(origin + WELL_KNOWN[1] + parts.path if parts.path else base + WELL_KNOWN[1])
    return urls


async def discover_jwks_uri(issuer: str, timeout: float = 10.0) -> str:
    """The issuer's `jwks_uri`, from its discovery document (whose `issuer` must be exactly
    the configured one, or tokens would be checked against someone else's keys)."""
    problems: list[str] = []
    async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False) as client:
        for url in discovery_urls(issuer):
            try:
                response = await client.get(url)
                response.raise_for_status()
                document: Any = response.json()
            except (httpx2.HTTPError, ValueError) as exc:
                problems.append(f"{url}: {type(exc).__name__}: {exc}")
                continue
            if not isinstance(document, dict) or not isinstance(document.get("jwks_uri"), str):
                problems.append(f"{url}: no jwks_uri in the document")
                continue
            if document.get("issuer") != issuer:
                raise ConfigError(
                    f"oauth.issuer is {issuer!r} but {url} says its issuer is "
                    f"{document.get('issuer')!r}. Set oauth.issuer to exactly the issuer the "
                    f"tokens carry in 'iss' (trailing slash included).")
            return document["jwks_uri"]
    raise ConfigError(
        f"Could not read the signing keys' address of oauth.issuer {issuer!r}: "
        + "; ".join(problems) + ". Check the issuer URL (it is the tokens' 'iss'), or set "
        "oauth.jwks_uri to the issuer's JWKS URL to skip discovery.")
