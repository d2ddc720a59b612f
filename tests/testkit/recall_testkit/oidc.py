"""A local OpenID Connect issuer for tests: real RSA keys, its discovery document and JWKS
served over real HTTP (uvicorn in a thread, a free port), JWTs signed with PyJWT. Recall
verifies them exactly as it would Keycloak's or Auth0's: nothing in the verification path is
replaced."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import jwt
import uvicorn
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
        app = Starlette(routes=[
            Route("/.well-known/openid-configuration", self._discovery),
            Route("/jwks", self._jwks),
        ])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    async def _discovery(self, request: Any) -> JSONResponse:
        self.discovery_hits += 1
        return JSONResponse({"issuer": self.issuer, "jwks_uri": self.issuer + "/jwks",
                             "authorization_endpoint": self.issuer + "/authorize",
                             "token_endpoint": self.issuer + "/token",
                             "response_types_supported": ["code"],
                             "subject_types_supported": ["public"],
                             "id_token_signing_alg_values_supported": ["RS256"]})

    async def _jwks(self, request: Any) -> JSONResponse:
        self.jwks_hits += 1
        keys = []
        for kid, key in self.keys.items():
            jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return JSONResponse({"keys": keys})

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
