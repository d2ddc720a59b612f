"""The admin API's OAuth grant routes (Recall's own authorization server): list a namespace's
grants, revoke one. Mounted by `admin_api.build_admin_api`; same admin-token check, same error
bodies; a revoke is in the audit log."""

# No `from __future__ import annotations`: FastAPI reads the route parameters' types, which
# are this function's arguments (Actor, NamespacePath), so they must be evaluated here.

from typing import Annotated, Any

from fastapi import FastAPI, Path
from pydantic import BaseModel, Field

from ..admin.oauth_grants import OAuthGrants


class GrantView(BaseModel):
    grant_id: str
    namespace: str
    agent: str | None = Field(description="The agent the grant is bound to; null: the owner.")
    scopes: list[str]
    client_id: str
    client_name: str | None
    redirect_uri: str
    resource: str | None
    created_at: str | None
    refreshed_at: str | None = Field(description="When a token was last issued for it.")
    revoked_at: str | None


class GrantList(BaseModel):
    namespace: str
    grants: list[GrantView]


class GrantRevoked(BaseModel):
    revoked: bool
    grant: GrantView


GrantPath = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[0-9a-f]+$",
                                description="The grant's id (from the grant list).")]


def add_oauth_routes(api: FastAPI, storage: Any, Actor: Any, NamespacePath: Any,
                     errors: dict[Any, Any], not_found: dict[Any, Any]) -> None:
    grants = OAuthGrants(storage)

    @api.get("/namespaces/{namespace}/oauth-grants", response_model=GrantList,
             responses=errors, summary="List a namespace's OAuth grants (built-in OAuth)")
    async def list_grants(who: Actor, namespace: NamespacePath) -> Any:
        return await grants.list(namespace)

    @api.delete("/namespaces/{namespace}/oauth-grants/{grant_id}", response_model=GrantRevoked,
                responses={**errors, **not_found},
                summary="Revoke an OAuth grant: its access and refresh tokens get 401 at once")
    async def revoke_grant(who: Actor, namespace: NamespacePath, grant_id: GrantPath) -> Any:
        return await grants.revoke(who, namespace, grant_id)
