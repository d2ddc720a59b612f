"""A local OpenID Connect issuer for tests: real RSA keys, its discovery document and JWKS
served over real HTTP (uvicorn in a thread, a free port), JWTs signed with PyJWT. Recall
verifies them exactly as it would Keycloak's or Auth0's: nothing in the verification path is
replaced.

It is also a small authorization server, enough for an MCP client's OAuth flow: dynamic
client registration (/register), authorization codes bound to a PKCE S256 challenge (issued
by `approve`, standing in for the person who signs in), and a token endpoint that checks the
code verifier and makes the requested `resource` (RFC 8707) the token's audience."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from .serverproc import free_port


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class LocalIssuer:
    """An OIDC issuer at http://127.0.0.1:<port> publishing the keys in `keys` (kid -> key)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.keys: dict[str, rsa.RSAPrivateKey] = {"k1": new_key()}
        self.discovery_hits = 0
        self.jwks_hits = 0
        self.codes: dict[str, dict[str, Any]] = {}
        self.clients: dict[str, dict[str, Any]] = {}
        app = Starlette(routes=[
            Route("/.well-known/openid-configuration", self._discovery),
            Route("/.well-known/oauth-authorization-server", self._discovery),
            Route("/jwks", self._jwks),
            Route("/register", self._register, methods=["POST"]),
            Route("/token", self._token, methods=["POST"]),
        ])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    async def _discovery(self, request: Any) -> JSONResponse:
        self.discovery_hits += 1
        return JSONResponse({"issuer": self.issuer, "jwks_uri": self.issuer + "/jwks",
                             "authorization_endpoint": self.issuer + "/authorize",
                             "token_endpoint": self.issuer + "/token",
                             "registration_endpoint": self.issuer + "/register",
                             "response_types_supported": ["code"],
                             "grant_types_supported": ["authorization_code"],
                             "code_challenge_methods_supported": ["S256"],
                             "token_endpoint_auth_methods_supported": ["none"],
                             "subject_types_supported": ["public"],
                             "id_token_signing_alg_values_supported": ["RS256"]})

    async def _jwks(self, request: Any) -> JSONResponse:
        self.jwks_hits += 1
        keys = []
        for kid, key in self.keys.items():
            jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return JSONResponse({"keys": keys})

    async def _register(self, request: Any) -> JSONResponse:
        metadata = await request.json()
        client = {**metadata, "client_id": f"client-{uuid.uuid4().hex[:8]}",
                  "client_id_issued_at": int(time.time()), "token_endpoint_auth_method": "none"}
        self.clients[client["client_id"]] = client
        return JSONResponse(client, status_code=201)

    def approve(self, authorization_url: str, sub: str, **claims: Any) -> tuple[str, str]:
        """The person signs in as `sub` and approves: (code, state) for the redirect."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(authorization_url).query).items()}
        assert query["client_id"] in self.clients, "the client registered first"
        assert query["code_challenge_method"] == "S256"
        code = secrets.token_urlsafe(16)
        self.codes[code] = {**query, "sub": sub, "claims": claims}
        return code, query["state"]

    async def _token(self, request: Any) -> JSONResponse:
        form = dict(await request.form())
        grant = self.codes.pop(str(form.get("code")), None)  # single use
        if grant is None or form.get("grant_type") != "authorization_code":
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        digest = hashlib.sha256(str(form.get("code_verifier", "")).encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["code_challenge"]:
            return JSONResponse({"error": "invalid_grant", "error_description": "PKCE"},
                                status_code=400)
        resource = form.get("resource") or grant.get("resource")
        scope = grant.get("scope", "")
        token = self.token(grant["sub"], aud=resource, scope=scope, **grant["claims"])
        return JSONResponse({"access_token": token, "token_type": "Bearer", "expires_in": 300,
                             "scope": scope})

    def forged(self, alg: str, **payload: Any) -> str:
        """A token with a published kid but signed outside RS256: `alg` "none" (no signature)
        or "HS256" keyed with the published public key (the algorithm-confusion attack)."""
        def b64(raw: bytes) -> str:
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "mallory", "iat": now, "exp": now + 300,
                  "scope": "memory:read memory:write memory:forget", **payload}
        head = b64(json.dumps({"alg": alg, "typ": "JWT", "kid": "k1"}).encode())
        body = b64(json.dumps(claims).encode())
        signature = ""
        if alg == "HS256":
            secret = self.keys["k1"].public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            signature = b64(hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest())
        return f"{head}.{body}.{signature}"

    def start(self) -> LocalIssuer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise AssertionError("the local issuer did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def token(self, sub: str = "alice", *, aud: str | list[str] | None = None,
              scope: str | list[str] | None = "memory:read memory:write memory:forget",
              iss: str | None = None, expires_in: float = 300, kid: str = "k1",
              key: rsa.RSAPrivateKey | None = None, drop: tuple[str, ...] = (),
              **claims: Any) -> str:
        """A signed access token (RS256) for `aud`, by default signed with the published key
        `kid`; `key` signs with another key under that kid (a forged signature)."""
        now = int(time.time())
        payload: dict[str, Any] = {"iss": iss or self.issuer, "sub": sub, "aud": aud,
                                   "iat": now, "nbf": now - 5, "exp": now + int(expires_in),
                                   "jti": uuid.uuid4().hex, "scope": scope,
                                   "client_id": "test-client", **claims}
        payload = {k: v for k, v in payload.items() if v is not None and k not in drop}
        signer = key or self.keys.get(kid) or new_key()
        return jwt.encode(payload, signer, algorithm="RS256", headers={"kid": kid})
