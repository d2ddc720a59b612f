"""Where a webhook may go. Only http and https; the host's addresses are resolved and each is
refused when private, loopback, link-local, multicast, reserved or unspecified (unless the
operator sets `[webhooks] allow_private_targets = true`). The check runs when a subscription
is made and again before every connection, and the connection goes to the very address that
was checked (`Target.address`), so a DNS answer that changes in between (rebinding) cannot
steer a delivery inside the network."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import NamedTuple
from urllib.parse import urlsplit

from ..errors import InvalidParam


class TargetRefused(InvalidParam):
    """A subscription's URL is not allowed (scheme, or an address inside the network)."""


class Target(NamedTuple):
    scheme: str
    host: str
    port: int
    #: the checked address the connection must go to
    address: str


def check_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a well-formed http(s) URL, else TargetRefused."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise TargetRefused(f"Webhook URL {url!r} is not a valid URL ({exc}). Expected "
                            f"http(s)://host[:port]/path.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetRefused(f"Webhook URL {url!r} must be http:// or https:// with a host. "
                            f"Expected e.g. https://hooks.example.com/recall.")
    if parts.username or parts.password:
        raise TargetRefused(f"Webhook URL {url!r} carries credentials: receivers verify the "
                            f"signature instead. Remove the user:password@ part.")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def private(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
            or ip.is_reserved or ip.is_unspecified or not ip.is_global)


async def resolve(url: str, allow_private: bool) -> Target:
    """Resolve and check `url`; the first acceptable address is the one to connect to."""
    scheme, host, port = check_url(url)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise TargetRefused(f"Webhook host {host!r} does not resolve ({exc}). Check the URL "
                            f"or the DNS of the receiver.") from None
    except (UnicodeError, ValueError) as exc:  # e.g. a label over 63 characters (IDNA)
        raise TargetRefused(f"Webhook host {host[:80]!r} is not a valid host name ({exc}). "
                            f"Check the URL.") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    refused = [a for a in addresses if private(a)]
    if refused and not allow_private:
        # Any private answer refuses the host: a name that resolves both ways is a trick.
        raise TargetRefused(
            f"Webhook host {host!r} resolves to a private, loopback or link-local address "
            f"({', '.join(refused)}); such targets are refused. Use a public address, or set "
            f"[webhooks] allow_private_targets = true in recall.toml if the receiver is "
            f"meant to be inside your network.")
    return Target(scheme, host, port, addresses[0])
