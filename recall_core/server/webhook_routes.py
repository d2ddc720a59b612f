"""The admin API's webhook routes (mounted by admin_api.build_admin_api): a namespace's
subscriptions (the secret shown once, at creation or rotation), its delivery log, and the
replay of a dead delivery. Every change is recorded in the admin audit (never a secret)."""


from typing import Annotated, Any, Literal

from fastapi import FastAPI, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from ..admin.service import AdminService
from ..contracts import EVENT_TYPES
from ..events.subscriptions import WebhookAdmin

Id = Annotated[str, Path(min_length=1, max_length=200)]


class NewSubscription(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=8, max_length=2000, pattern=r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#]+",
                     description="http(s) URL of the receiver")
    events: list[Literal[EVENT_TYPES]] = Field(  # type: ignore[valid-type]
        min_length=1, description=f"some of {', '.join(EVENT_TYPES)}")
    include_text: bool = Field(False, description="add memory texts to extraction events "
                                                  "(never to erase or delete events)")


class Rotation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    finish: bool = Field(False, description="false: add a new secret (both sign during the "
                                            "overlap); true: keep only the newest")


def hooks_of(admin: AdminService) -> WebhookAdmin:
    return WebhookAdmin(admin.storage, admin.service.config)


def add_webhook_routes(api: FastAPI, admin: AdminService, Actor: Any, NamespacePath: Any,
                       errors: dict[Any, Any]) -> None:
    hooks = hooks_of(admin)
    base = "/namespaces/{namespace}/webhooks"

    @api.get(base, responses=errors, summary="List a namespace's webhook subscriptions")
    async def list_subscriptions(who: Actor, namespace: NamespacePath) -> Any:
        return {"namespace": namespace, "subscriptions": await hooks.list(namespace)}

    @api.post(base, status_code=201, responses=errors,
              summary="Subscribe a URL to a namespace's events (the secret is shown once)")
    async def create(who: Actor, namespace: NamespacePath, body: NewSubscription) -> Any:
        detail = {"url": body.url, "events": body.events}
        return await admin._audited(who, "create_webhook", namespace, detail, lambda: hooks.create(
            namespace, body.url, body.events, body.include_text))

    @api.post(base + "/{sub_id}/rotate", responses=errors,
              summary="Rotate a subscription's secret (the new one is shown once)")
    async def rotate(who: Actor, namespace: NamespacePath, sub_id: Id, body: Rotation) -> Any:
        return await admin._audited(who, "rotate_webhook_secret", namespace, {"id": sub_id},
                                    lambda: hooks.rotate(namespace, sub_id, body.finish))

    @api.delete(base + "/{sub_id}", responses=errors, summary="Delete a subscription")
    async def delete(who: Actor, namespace: NamespacePath, sub_id: Id) -> Any:
        return await admin._audited(who, "delete_webhook", namespace, {"id": sub_id},
                                    lambda: hooks.delete(namespace, sub_id))

    # The delivery log beside, not under, /webhooks/{sub_id}: a path of its own, so no
    # subscription id route also matches it (its Allow header lists exactly GET).
    deliveries_path = "/namespaces/{namespace}/webhook-deliveries"

    @api.get(deliveries_path, responses=errors,
             summary="The namespace's delivery log, newest first")
    async def deliveries(who: Actor, namespace: NamespacePath,
                         status: Literal["pending", "delivered", "dead"] | None = None,
                         limit: Annotated[int, Query(ge=1, le=500)] = 50) -> Any:
        return {"namespace": namespace,
                "deliveries": await hooks.deliveries(namespace, status, limit)}

    @api.post(deliveries_path + "/{delivery_id}/replay", responses=errors,
              summary="Send a dead delivery again (attempts start over)")
    async def replay(who: Actor, namespace: NamespacePath, delivery_id: Id) -> Any:
        return await admin._audited(who, "replay_webhook", namespace, {"id": delivery_id},
                                    lambda: hooks.replay(namespace, delivery_id))
