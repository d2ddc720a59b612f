"""The agent card served at /.well-known/agent-card.json (public: it carries no tenant data).

It names the two skills, the bearer scheme (the same tokens as MCP; with `[oauth]` on, also
where OAuth tokens come from: the issuer's OpenID Connect discovery document or the built-in
authorization server's metadata, as an alternative requirement) and the endpoints: the
JSON-RPC binding (A2A 1.0, and 0.3 for older clients) and the HTTP+JSON (REST) binding, all
under /a2a. Endpoint URLs come from the server's public URL; when that is a wildcard bind
address (0.0.0.0, ::) they come from the request instead, so a client is never told to call
0.0.0.0.
"""

from __future__ import annotations

import contextvars
from typing import Any
from urllib.parse import urlsplit

from a2a.server.routes import create_agent_card_routes
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import TransportProtocol
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import __version__

A2A_PATH = "/a2a"
BEARER = "bearer"
OAUTH = "oauth"
RECALL_SCOPES = ["memory:read", "memory:write", "memory:forget"]

SKILLS = [
    AgentSkill(
        id="store_memories",
        name="Store memories",
        description=(
            "Extract memories (preferences, facts, decisions, procedures) from `text` under "
            "`topic` and store them at once, checked against the facts already stored. "
            "Completes with the stored memories as a data artifact. When a new fact contradicts "
            "a stored one and both are recent and about as important, the task stops in "
            "input-required showing both versions; reply on the same task with keep_existing, "
            "keep_new or keep_both. Input: a data part {skill, text, topic?, session_id?, "
            "agent_id?, created_at?, visibility?} or plain text; created_at (ISO 8601, not in "
            "the future) dates text said earlier, as the MCP store_memory tool's does; "
            "visibility (private or shared) as store_memory's: an agent's token stores "
            "private memories unless it asks for shared. "
            "The old id consolidate_memories still works for this skill (deprecated; not the "
            "MCP tool of that name, which merges similar stored memories)."),
        tags=["memory", "write", "extraction"],
        examples=['{"skill": "store_memories", "text": "I switched to VS Code", '
                  '"topic": "tools"}'],
        input_modes=["application/json", "text/plain"],
        output_modes=["application/json", "text/plain"]),
    AgentSkill(
        id="search_memories",
        name="Search memories",
        description=(
            "Search the caller's memories (the MCP search_memories tool). Input: a data part "
            "{skill: search_memories, query, limit?, recency_weight?, mmr_lambda?, "
            "score_threshold?, max_tokens?, as_of?}, or metadata skill=search_memories and the query "
            "as text. Completes with {results, total, degraded} as a data artifact."),
        tags=["memory", "read", "search"],
        examples=['{"skill": "search_memories", "query": "which editor do I use?", "limit": 5}'],
        input_modes=["application/json", "text/plain"],
        output_modes=["application/json"]),
]


def oauth_scheme(advert: Any) -> SecurityScheme:
    """The card's OAuth scheme for `advert` (oauth.compose.OAuthAdvert)."""
    note = (f"An OAuth access token for the resource {advert.resource} (RFC 8707 audience; "
            f"the same token works for MCP) with Recall's scopes.")
    if advert.kind == "oidc":
        return SecurityScheme(open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
            open_id_connect_url=advert.metadata_url, description=note))
    return SecurityScheme(oauth2_security_scheme=OAuth2SecurityScheme(
        oauth2_metadata_url=advert.metadata_url, description=note))


def build_card(base_url: str, oauth: Any = None) -> AgentCard:
    """The card for `base_url`; `oauth` (oauth.compose.OAuthAdvert, None when OAuth is off)
    adds the OAuth scheme as an alternative to the static bearer token."""
    url = base_url.rstrip("/") + A2A_PATH
    schemes = {BEARER: SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(
        scheme="bearer", bearer_format="opaque (rcl_...)",
        description="A Recall API token (`recall create-token NAMESPACE`), the same as "
                    "for MCP. The token decides the namespace."))}
    requirements = [SecurityRequirement(schemes={BEARER: StringList()})]
    if oauth is not None:
        schemes[OAUTH] = oauth_scheme(oauth)
        requirements.append(SecurityRequirement(
            schemes={OAUTH: StringList(list=RECALL_SCOPES)}))
    return AgentCard(
        name="Recall",
        description="Long-term memory for AI agents: store what users say, search it later. "
                    "Each bearer token maps to one namespace; tasks and memories never cross it.",
        version=__version__,
        provider=AgentProvider(organization="Recall (self-hosted)", url=base_url.rstrip("/")),
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=TransportProtocol.JSONRPC.value,
                           protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding=TransportProtocol.HTTP_JSON.value,
                           protocol_version="1.0"),
            AgentInterface(url=url, protocol_binding=TransportProtocol.JSONRPC.value,
                           protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False,
                                       extended_agent_card=False),
        security_schemes=schemes,
        security_requirements=requirements,
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=SKILLS,
    )


def fixed_base(public_url: str | None) -> str | None:
    """`public_url` when clients can use it; None when it is a wildcard bind address."""
    if not public_url:
        return None
    host = urlsplit(public_url).hostname or ""
    if host in ("", "0.0.0.0", "::"):
        return None
    return public_url.rstrip("/")


_request_base: contextvars.ContextVar[str] = contextvars.ContextVar("recall_a2a_base")


def card_routes(public_url: str | None, oauth: Any = None) -> list[Route]:
    """The SDK's card route, with endpoint URLs filled in per request when needed."""
    fixed = fixed_base(public_url)

    async def localise(card: AgentCard) -> AgentCard:
        if fixed is not None:
            return card
        out = AgentCard()
        out.CopyFrom(build_card(_request_base.get(), oauth))
        return out

    (sdk_route,) = create_agent_card_routes(build_card(fixed or "http://127.0.0.1", oauth),
                                            card_modifier=localise)
    sdk_endpoint = sdk_route.endpoint

    async def agent_card(request: Request) -> Response:
        token = _request_base.set(str(request.base_url).rstrip("/"))
        try:
            return await sdk_endpoint(request)
        finally:
            _request_base.reset(token)

    return [Route(sdk_route.path, endpoint=agent_card, methods=["GET"], name="a2a_agent_card")]
