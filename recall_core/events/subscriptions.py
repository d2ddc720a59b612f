"""Subscriptions: the use cases behind the admin API, the CLI and the inspector, and the
static ones of `recall.toml`. A secret is shown once, when it is made (or rotated); lists
show how many secrets a subscription has, never one of them, and nothing logs them."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from ..config import RecallConfig, WebhookSubscriptionConfig
from ..contracts import DELIVERY_STATUSES, EVENT_TYPES, Delivery, Storage, Subscription, new_id
from ..errors import ConfigError, InvalidParam, RecallError
from ..models import utcnow
from . import signing
from .deliverer import wake
from .targets import check_url, resolve


class SubscriptionNotFound(RecallError):
    code = "SUBSCRIPTION_NOT_FOUND"


def check_events(events: Any) -> tuple[str, ...]:
    if isinstance(events, str):
        events = [e for e in events.replace(",", " ").split() if e]
    if not isinstance(events, (list, tuple)) or not events:
        raise InvalidParam(f"events must be a non-empty list of event types, from "
                           f"{', '.join(EVENT_TYPES)}.")
    unknown = [e for e in events if e not in EVENT_TYPES]
    if unknown:
        raise InvalidParam(f"Unknown event type(s) {', '.join(map(repr, unknown))}. Expected "
                           f"some of: {', '.join(EVENT_TYPES)}.")
    return tuple(dict.fromkeys(events))


def public(sub: Subscription) -> dict[str, Any]:
    return {"id": sub.id, "namespace": sub.namespace, "url": sub.url, "events": list(sub.events),
            "include_text": sub.include_text, "source": sub.source, "secrets": len(sub.secrets),
            "created_at": sub.created_at.isoformat() if sub.created_at else None,
            "erased_at": sub.erased_at.isoformat() if sub.erased_at else None}


def delivery_view(d: Delivery) -> dict[str, Any]:
    return {"id": d.id, "subscription_id": d.subscription_id, "event_id": d.event_id,
            "event_type": d.event_type, "status": d.status, "attempts": d.attempts,
            "next_attempt_at": d.next_attempt_at.isoformat(), "last_status": d.last_status,
            "last_body": d.last_body, "last_error": d.last_error,
            "event_at": d.event_at.isoformat(),
            "finished_at": d.finished_at.isoformat() if d.finished_at else None}


def static_subscriptions(config: RecallConfig) -> list[Subscription]:
    """`[[webhooks.subscriptions]]` as subscriptions; the id follows namespace and URL, so an
    edit of the events or the secret keeps the subscription and its deliveries."""
    out = []
    for i, entry in enumerate(config.webhooks.subscriptions):
        try:
            out.append(_static(entry))
        except (InvalidParam, ValueError) as exc:
            raise ConfigError(f"[[webhooks.subscriptions]] entry {i + 1} ({entry.namespace}): "
                              f"{exc}") from None
    return out


def _static(entry: WebhookSubscriptionConfig) -> Subscription:
    check_url(entry.url)
    if entry.secret_env:
        value = os.environ.get(entry.secret_env, "")
        secrets = value.split()
        if not secrets:
            raise InvalidParam(f"secret_env names {entry.secret_env!r}, which is not set.")
    elif entry.secret:
        secrets = [entry.secret] if isinstance(entry.secret, str) else list(entry.secret)
    else:
        raise InvalidParam("give secret = \"whsec_...\" or secret_env = \"NAME\".")
    key = hashlib.sha256(f"{entry.namespace}\x00{entry.url}".encode()).hexdigest()[:32]
    return Subscription(f"cfg_{key}", entry.namespace, entry.url, check_events(entry.events),
                        tuple(signing.check_secret(s) for s in secrets), entry.include_text,
                        "config", utcnow())


class WebhookAdmin:
    """What a namespace's owner (or an operator) may do with its subscriptions."""

    def __init__(self, storage: Storage, config: RecallConfig):
        self.storage = storage
        self.config = config

    def _check(self) -> None:
        if not self.storage.capabilities.webhooks:
            raise InvalidParam(f"This storage ({self.storage.description}) does not declare "
                               f"the webhooks capability; use the sqlite or postgres backend.")

    async def create(self, namespace: str, url: Any, events: Any, include_text: bool = False,
                     secret: str | None = None) -> dict[str, Any]:
        self._check()
        if not isinstance(url, str):
            raise InvalidParam("url must be a string: the receiver's http(s) URL.")
        await resolve(url, self.config.webhooks.allow_private_targets)
        made = secret or signing.new_secret()
        sub = Subscription(new_id("sub"), namespace, url, check_events(events),
                           (signing.check_secret(made),), bool(include_text), "api", utcnow())
        await self.storage.create_subscription(sub)
        return {**public(sub), "secret": made}

    async def list(self, namespace: str) -> list[dict[str, Any]]:
        self._check()
        return [public(s) for s in await self.storage.list_subscriptions(namespace)]

    async def _get(self, namespace: str, sub_id: str) -> Subscription:
        for s in await self.storage.list_subscriptions(namespace):
            if s.id == sub_id:
                return s
        raise SubscriptionNotFound(f"No webhook subscription {sub_id!r} in namespace "
                                   f"{namespace!r}. List them to see their ids.")

    async def rotate(self, namespace: str, sub_id: str, finish: bool = False) -> dict[str, Any]:
        """Start a rotation (a new secret; the old one still signs until `finish`), or finish
        it (only the newest secret stays)."""
        self._check()
        sub = await self._get(namespace, sub_id)
        if sub.source != "api":
            raise InvalidParam("A subscription from recall.toml rotates in recall.toml "
                               "(list both secrets, newest first, then only the new one).")
        if finish:
            await self.storage.set_secrets(namespace, sub_id, sub.secrets[:1])
            return {**public(sub._replace(secrets=sub.secrets[:1]))}
        made = signing.new_secret()
        await self.storage.set_secrets(namespace, sub_id, [made, sub.secrets[0]])
        return {**public(sub._replace(secrets=(made, sub.secrets[0]))), "secret": made}

    async def delete(self, namespace: str, sub_id: str) -> dict[str, Any]:
        self._check()
        if not await self.storage.delete_subscription(namespace, sub_id):
            raise SubscriptionNotFound(f"No webhook subscription {sub_id!r} in namespace "
                                       f"{namespace!r}. List them to see their ids.")
        return {"deleted": sub_id}

    async def deliveries(self, namespace: str, status: str | None = None, limit: int = 50
                         ) -> list[dict[str, Any]]:
        self._check()
        if status is not None and status not in DELIVERY_STATUSES:
            raise InvalidParam(f"status must be one of {', '.join(DELIVERY_STATUSES)}.")
        rows = await self.storage.list_deliveries(namespace, status, max(1, min(int(limit), 500)))
        return [delivery_view(d) for d in rows]

    async def replay(self, namespace: str, delivery_id: str) -> dict[str, Any]:
        self._check()
        if not await self.storage.replay_delivery(namespace, delivery_id):
            raise RecallError(f"No dead delivery {delivery_id!r} in namespace {namespace!r} "
                              f"(only dead deliveries are replayed; a delivered or pending one "
                              f"is not). List the deliveries with status=dead.",
                              code="NOT_FOUND")
        wake()
        return {"replayed": delivery_id}
