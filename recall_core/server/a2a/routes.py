"""The A2A protocol's routes (a2a-sdk 1.3), served by the HTTP app next to /mcp.

    GET  /.well-known/agent-card.json   public agent card
    POST /a2a                           JSON-RPC binding (A2A 1.0 methods, and 0.3's
                                        message/send, message/stream, tasks/get, ...)
    *    /a2a/message:send, /a2a/message:stream, /a2a/tasks/{id}, /a2a/tasks/{id}:cancel,
         /a2a/tasks/{id}:subscribe, /a2a/tasks      HTTP+JSON (REST) binding

Everything under /a2a needs the bearer token. Streaming (SSE) is the SDK's own: the same
executor serves message:send and message:stream. The request handler holds the SDK's
in-memory task registry: the app's lifespan closes it (`handler.aclose()`).
"""

from __future__ import annotations

from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from starlette.routing import BaseRoute

from ..auth import StorageTokenVerifier
from ..oauth import ServerAuth

from .auth import NamespaceContextBuilder, body_limit, routes_behind_token
from .card import A2A_PATH, build_card, card_routes, fixed_base
from .executor import RecallAgentExecutor
from .inputs import quiet_sdk_input_tracebacks
from .task_store import StorageTaskStore

# A task parked in input-required holds an in-memory slot in the SDK until it is resumed; after
# this long the slot is released and a later reply rebuilds it from storage.
PARKED_TASK_SECONDS = 300.0


def build_handler(runtime: Any, public_url: str | None = None,
                  auth: ServerAuth | None = None) -> DefaultRequestHandler:
    return DefaultRequestHandler(
        agent_executor=RecallAgentExecutor(runtime),
        task_store=StorageTaskStore(runtime.storage),
        agent_card=build_card(fixed_base(public_url) or "http://localhost",
                              auth.advert if auth else None),
        interrupted_task_timeout=PARKED_TASK_SECONDS)


def a2a_routes(runtime: Any, handler: DefaultRequestHandler,
               public_url: str | None = None, auth: ServerAuth | None = None) -> list[BaseRoute]:
    """The agent card and the JSON-RPC and REST bindings (behind the bearer token, checked by
    `auth`: the server's, see oauth/compose.py; default static tokens only) for `handler`."""
    quiet_sdk_input_tracebacks()
    builder = NamespaceContextBuilder()
    if auth is None:
        static = StorageTokenVerifier(runtime.storage)
        auth = ServerAuth("off", static, static)
    max_body = body_limit(runtime.config.limits.max_text_bytes)
    jsonrpc = create_jsonrpc_routes(handler, A2A_PATH, context_builder=builder,
                                    enable_v0_3_compat=True)
    rest = create_rest_routes(handler, context_builder=builder, path_prefix=A2A_PATH)
    return [*card_routes(public_url, auth.advert),
            *routes_behind_token(auth, jsonrpc, max_body),
            *routes_behind_token(auth, rest, max_body, rpc=False)]
