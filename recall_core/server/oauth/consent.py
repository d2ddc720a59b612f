"""The consent step of the built-in authorization server: what the inspector's consent page
shows and what approving or denying does.

`authorize` (builtin.py) sends the browser here with the authorization request in the query.
Everything in it came through the browser, so it is checked again against storage before the
page shows it and again when the form comes back: the client must be registered and the
redirect URI one of its registered URIs, exactly; until both hold, the page shows an error and
never redirects anywhere. Approving mints a single-use code (bound to the PKCE challenge, the
client and the redirect URI) and sends the browser to redirect_uri with code and state;
denying sends error=access_denied. Both are audited.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import construct_redirect_uri
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull
from pydantic import AnyUrl, ValidationError

from ...access.principal import ALL_SCOPES, SCOPE_ORDER, valid_agent_name
from ...admin.oauth_grants import audit
from ...admin.service import valid_namespace_name
from ...admin.tokens import hash_token
from ...contracts import OAuthCode, OAuthGrant
from ...errors import InvalidParam, RecallError
from .builtin import RecallAuthServer, code_expiry, new_code, same_resource

FIELDS = ("client_id", "redirect_uri", "explicit", "code_challenge", "scope", "state", "resource")


class ConsentRefused(RecallError):
    """The request cannot be shown or answered: nothing is sent to its redirect URI."""

    code = "OAUTH_REQUEST_INVALID"


@dataclass(frozen=True)
class ConsentRequest:
    client: OAuthClientInformationFull
    redirect_uri: str
    explicit: bool
    code_challenge: str
    requested: tuple[str, ...]
    state: str | None
    resource: str | None

    @property
    def client_name(self) -> str:
        return self.client.client_name or str(self.client.client_id)

    @property
    def redirect_origin(self) -> str:
        p = urlsplit(self.redirect_uri)
        return f"{p.scheme}://{p.netloc}"

    def hidden(self) -> dict[str, str]:
        """The request again, as the form's hidden fields."""
        return {"client_id": str(self.client.client_id), "redirect_uri": self.redirect_uri,
                "explicit": "1" if self.explicit else "0",
                "code_challenge": self.code_challenge, "scope": " ".join(self.requested),
                "state": self.state or "", "resource": self.resource or ""}


async def read_request(server: RecallAuthServer, values: Any) -> ConsentRequest:
    """The authorization request in `values` (query or form), checked against storage."""
    client_id = str(values.get("client_id") or "")
    client = await server.get_client(client_id) if client_id else None
    if client is None:
        raise ConsentRefused("This authorization request names no registered client. Start "
                             "the connection again from the application.")
    raw_uri = str(values.get("redirect_uri") or "")
    try:
        uri = client.validate_redirect_uri(AnyUrl(raw_uri))
    except (InvalidRedirectUriError, ValidationError):
        raise ConsentRefused(f"The redirect URI {raw_uri!r} is not one that client "
                             f"{client.client_name or client_id!r} registered, so Recall will "
                             f"not send a code there.") from None
    challenge = str(values.get("code_challenge") or "")
    if not 43 <= len(challenge) <= 128:
        raise ConsentRefused("The authorization request has no valid PKCE code_challenge.")
    requested = tuple(s for s in SCOPE_ORDER if s in str(values.get("scope") or "").split())
    if not requested:
        raise ConsentRefused(f"The client asked for no scope Recall knows; the scopes are "
                             f"{', '.join(SCOPE_ORDER)}.")
    resource = str(values.get("resource") or "") or None
    if resource is not None and not same_resource(resource, server.resource):
        raise ConsentRefused(f"The client asked for resource {resource!r}, which is not this "
                             f"server's MCP endpoint ({server.resource}).")
    return ConsentRequest(client, str(uri), values.get("explicit") == "1", challenge,
                          requested, str(values.get("state") or "") or None, resource)


def chosen_scopes(form: Any, request: ConsentRequest) -> tuple[str, ...]:
    """The scopes ticked on the form, which can only narrow what the client asked for."""
    picked = form.getlist("scopes") if hasattr(form, "getlist") else form.get("scopes", [])
    if isinstance(picked, str):
        picked = [picked]
    chosen = tuple(s for s in request.requested if s in set(picked) & ALL_SCOPES)
    if not chosen:
        raise InvalidParam("Tick at least one scope to approve, or deny the request.")
    return chosen


async def approve(server: RecallAuthServer, request: ConsentRequest, actor: str,
                  namespace: str, agent: Any, scopes: tuple[str, ...]) -> str:
    """Mint the code and return where the browser goes next (redirect_uri?code&state)."""
    namespace = valid_namespace_name(namespace)
    agent = valid_agent_name(agent)
    code = new_code()
    grant = OAuthGrant(secrets.token_hex(8), namespace, agent, " ".join(scopes),
                       str(request.client.client_id), request.client.client_name,
                       request.redirect_uri, request.resource or server.resource)
    await server.storage.create_oauth_code(OAuthCode(
        hash_token(code), grant, request.code_challenge, request.explicit,
        code_expiry(server.settings)))
    await audit(server.storage, actor, "oauth_consent", namespace,
                {"grant_id": grant.grant_id, "client_id": grant.client_id,
                 "client_name": grant.client_name, "redirect_uri": grant.redirect_uri,
                 "agent": agent, "scopes": grant.scopes})
    return construct_redirect_uri(request.redirect_uri, code=code, state=request.state)


async def deny(server: RecallAuthServer, request: ConsentRequest, actor: str,
               namespace: str | None) -> str:
    await audit(server.storage, actor, "oauth_deny", namespace,
                {"client_id": str(request.client.client_id),
                 "client_name": request.client.client_name,
                 "redirect_uri": request.redirect_uri})
    return construct_redirect_uri(request.redirect_uri, error="access_denied",
                                  error_description="The owner denied the request.",
                                  state=request.state)
