"""Whole numbers in A2A answers written as JSON integers: `"total": 2`, as the MCP tools write
it, not `2.0`.

A data part is a `google.protobuf.Value`, which keeps every number as a double, so the SDK
writes the count 2 as `2.0` however the executor built it. A client that reads JSON into typed
fields (Go, Rust, a TypeScript schema) refuses `2.0` for an integer. JSON has one number type,
so a whole number written without its `.0` is the same value; `WholeNumbers` rewrites the
JSON bodies and the server-sent events of the A2A routes on their way out. (A client that
parses into protobuf, as the a2a-sdk's does, reads every number as a double whatever the wire
says: the SDK's `get_data_parts` documents that.)
"""

from __future__ import annotations

import json
from typing import Any


def whole_numbers(value: Any) -> Any:
    """`value` with every float that is a whole number turned into an int (recursively)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value


def rewrite_json(body: bytes) -> bytes:
    """A JSON document with whole numbers as integers; anything else unchanged."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    # The SDK's own form (Starlette's JSONResponse): compact, UTF-8.
    return json.dumps(whole_numbers(data), ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode("utf-8")


def rewrite_events(chunk: bytes) -> bytes:
    """The `data:` lines of server-sent events in `chunk`, each rewritten by `rewrite_json`. A
    line split across chunks does not parse as JSON and passes as it came."""
    lines = chunk.split(b"\n")
    for i, line in enumerate(lines):
        if not line.startswith(b"data:"):
            continue
        end = b"\r" if line.endswith(b"\r") else b""
        payload = line[5:len(line) - len(end)]
        lines[i] = b"data: " + rewrite_json(payload.removeprefix(b" ")) + end
    return b"\n".join(lines)


class WholeNumbers:
    """ASGI middleware: responses under `prefix` go out with whole numbers as integers (JSON
    bodies, and each server-sent event of a stream)."""

    def __init__(self, app: Any, prefix: str):
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        kind: str | None = None
        start: dict[str, Any] = {}
        held: list[bytes] = []

        async def send_rewritten(message: Any) -> None:
            nonlocal kind, start
            if message["type"] == "http.response.start":
                kind = _kind(message)
                if kind == "json":  # held: the rewritten body has another length
                    start = message
                    return
            elif message["type"] == "http.response.body" and kind == "json":
                held.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = rewrite_json(b"".join(held))
                headers = [(k, v) for k, v in start.get("headers", [])
                           if k.lower() != b"content-length"]
                headers.append((b"content-length", str(len(body)).encode("latin-1")))
                await send({**start, "headers": headers})
                message = {"type": "http.response.body", "body": body}
            elif message["type"] == "http.response.body" and kind == "events":
                message = {**message, "body": rewrite_events(message.get("body", b""))}
            await send(message)

        await self.app(scope, receive, send_rewritten)


def _kind(start: dict[str, Any]) -> str | None:
    """"json" (application/json, application/a2a+json), "events" (text/event-stream), or None."""
    for key, value in start.get("headers", []):
        if key.lower() == b"content-type":
            media = value.decode("latin-1").split(";", 1)[0].strip().lower()
            if media == "text/event-stream":
                return "events"
            if media == "application/json" or media.endswith("+json"):
                return "json"
    return None
