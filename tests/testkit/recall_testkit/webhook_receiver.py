"""A real webhook receiver for the tests: a Starlette app on loopback, served by uvicorn in a
thread, that verifies every delivery with the Standard Webhooks library (`Webhook.verify`:
signature and timestamp) and refuses a webhook-id it has already accepted (a replay). It is
the README's receiver example plus bookkeeping: what arrived, when, how often."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


@dataclass
class Received:
    id: str
    type: str
    data: dict[str, Any]
    at: float
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    secret: str
    port: int = 0
    #: status to answer with (500: a failing receiver; 410: one that is gone)
    answer: int = 204
    #: seconds to wait before answering (a slow receiver)
    delay: float = 0.0
    #: the body of a non-2xx answer, and extra headers (e.g. a redirect's Location)
    answer_body: str = "not now"
    answer_headers: dict[str, str] = field(default_factory=dict)
    accepted: list[Received] = field(default_factory=list)
    #: every POST that verified, repeats included (at-least-once: count duplicates)
    verified: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.port:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def hook(self, request: Request) -> Response:
        body = await request.body()
        try:
            payload = Webhook(self.secret).verify(body, dict(request.headers))
        except WebhookVerificationError as exc:
            with self._lock:
                self.rejected.append(str(exc))
            return Response(f"bad signature: {exc}", status_code=400)
        msg_id = request.headers["webhook-id"]
        with self._lock:
            self.verified.append(msg_id)
            seen = any(r.id == msg_id for r in self.accepted)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.answer >= 300:
            return Response(self.answer_body, status_code=self.answer,
                            headers=self.answer_headers)
        if seen:  # a replay, or a repeat of an at-least-once delivery: already handled
            return Response("already received", status_code=200)
        with self._lock:
            self.accepted.append(Received(msg_id, payload["type"], payload["data"],
                                          time.time(), dict(request.headers), body))
        return Response(status_code=204)

    def start(self) -> Receiver:
        app = Starlette(routes=[Route("/hook", self.hook, methods=["POST"])])
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise AssertionError("the receiver did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
            self._server = None

    def of_type(self, type_: str) -> list[Received]:
        with self._lock:
            return [r for r in self.accepted if r.type == type_]

    def wait_for(self, n: int, type_: str | None = None, timeout: float = 60) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.of_type(type_) if type_ else list(self.accepted)
            if len(got) >= n:
                return got
            time.sleep(0.05)
        got = self.of_type(type_) if type_ else list(self.accepted)
        raise AssertionError(f"{len(got)} of {n} {type_ or 'events'} arrived: "
                             f"{[(r.type, r.data) for r in self.accepted]}")


def config_toml(namespace: str, url: str, secret: str, events: list[str] | None = None,
                allow_private: bool = True, **webhooks: Any) -> str:
    """A recall.toml with one static subscription, as the README shows it."""
    events = events or ["extraction.completed", "extraction.failed", "memory.superseded",
                        "memory.deleted", "namespace.erased"]
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in webhooks.items())
    return (f"[webhooks]\nallow_private_targets = {str(allow_private).lower()}\n{extra}\n"
            f"[[webhooks.subscriptions]]\nnamespace = {json.dumps(namespace)}\n"
            f"url = {json.dumps(url)}\nevents = {json.dumps(events)}\n"
            f"secret = {json.dumps(secret)}\n")
