"""OAuth 2.1 for Recall as a resource server (the MCP authorization spec): `compose.py` builds
the server's auth from `[oauth]` (off, external issuer, built-in authorization server),
`external.py` maps an external issuer's JWT claims to the Principal, `challenge.py` answers
401/403 with the RFC 9728 metadata pointer, `discovery.py` finds the issuer's keys;
`builtin.py` (with `builtin_clients.py` and `consent.py`) is Recall's own authorization
server."""

from .compose import ServerAuth, Verified, compose_auth

__all__ = ["ServerAuth", "Verified", "compose_auth"]
