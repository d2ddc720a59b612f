"""An OpenAI-compatible HTTP server on loopback whose answers a test scripts.

The extractor's contract is tested against a real model server (test_openai_live.py); this one
plays the servers that misbehave in ways a real model cannot be made to on demand: garbage
replies, 5xx, 429, a hang, a body that is not JSON. It is a real HTTP server in a thread, so
the `openai` SDK runs its whole HTTP path (retries, timeouts, error classes) against it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = dict[str, Any]  # {"status": int, "json": ..., "raw": bytes, "delay": float}


def completion(content: str | None = None, *, tool: tuple[str, str] | None = None,
               finish: str = "stop", usage: tuple[int, int] = (900, 120)) -> Answer:
    """A chat.completion body in the shape servers send: a message with text content, or a
    tool call (name, arguments JSON)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool is not None:
        message["content"] = None
        message["tool_calls"] = [{"id": "call_0", "type": "function",
                                  "function": {"name": tool[0], "arguments": tool[1]}}]
        finish = "tool_calls" if finish == "stop" else finish
    return {"status": 200, "json": {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1_760_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                  "total_tokens": sum(usage)}}}


def error(status: int, message: str, code: str | None = None, **headers: str) -> Answer:
    return {"status": status, "headers": headers,
            "json": {"error": {"message": message, "type": "invalid_request_error",
                               "param": None, "code": code}}}


class ScriptedServer:
    """Answers POST .../chat/completions from a script: a list consumed in order (the last
    entry repeats) or a function of the request body. Records every request body."""

    def __init__(self, *answers: Answer | Callable[[dict[str, Any]], Answer]):
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                answer = server._next(body)
                with server._lock:
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                try:
                    time.sleep(answer.get("delay", 0))
                finally:
                    with server._lock:
                        server.active -= 1
                raw = answer.get("raw")
                if raw is None:
                    raw = json.dumps(answer["json"]).encode()
                try:
                    self.send_response(answer.get("status", 200))
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    for k, v in answer.get("headers", {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def _next(self, body: dict[str, Any]) -> Answer:
        with self._lock:
            self.requests.append(body)
            answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return answer(body) if callable(answer) else answer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
