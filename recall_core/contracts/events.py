"""Webhooks in storage: subscriptions, the transactional outbox and its deliveries.

An event is written by `WriteTx.emit` (or `fail_job` / `delete_namespace` given an event) in
the same transaction as the change it describes, so a crash never loses one and never reports
a change that did not commit. `emit` fans the event out at once into one delivery per
subscription of the namespace that asked for its type; an event nobody subscribed to is not
stored at all. The deliverer (`recall_core.events`) claims deliveries with leases, the way
the worker claims jobs, and sends each subscription's deliveries in order.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple, Protocol, runtime_checkable

from ..models import utcnow

#: Every event type a subscription may ask for.
EVENT_TYPES = ("extraction.completed", "extraction.failed", "memory.superseded",
               "memory.deleted", "namespace.erased")
#: A delivery's life: pending (waiting or retrying), delivered (2xx), dead (retries spent).
DELIVERY_STATUSES = ("pending", "delivered", "dead")
#: How many characters of a receiver's response body a delivery keeps (its last answer).
BODY_PREFIX_CHARS = 200


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


class OutboxEvent(NamedTuple):
    """One change, as receivers see it: `id` is the Standard Webhooks `webhook-id` (the same
    on every retry), `payload` holds ids and metadata only. `texts` (memory id -> text) is
    kept only when a subscription of the namespace asked for text (`include_text`)."""

    id: str
    namespace: str
    type: str
    payload: dict[str, Any]
    created_at: datetime
    texts: dict[str, str] | None = None


class Subscription(NamedTuple):
    id: str
    namespace: str
    url: str
    #: event types (see EVENT_TYPES)
    events: tuple[str, ...]
    #: `whsec_...` secrets, newest first: every delivery is signed with each (rotation).
    #: Stored as given: signing needs the secret itself, a hash would not do.
    secrets: tuple[str, ...]
    include_text: bool = False
    #: "api" (admin API, CLI, inspector) or "config" (recall.toml, synced at start)
    source: str = "api"
    created_at: datetime | None = None
    #: Set when the namespace was erased: only its namespace.erased delivery is still sent,
    #: then the subscription goes (`prune_webhooks`).
    erased_at: datetime | None = None


class Delivery(NamedTuple):
    """One event for one subscription. `claim` is set while a deliverer holds it (a lease
    until `claimed_until`); finish_delivery only applies for the same claim."""

    id: str
    seq: int
    subscription_id: str
    event_id: str
    namespace: str
    event_type: str
    payload: dict[str, Any]
    event_at: datetime
    status: str
    attempts: int
    next_attempt_at: datetime
    last_status: int | None = None
    last_body: str | None = None
    last_error: str | None = None
    finished_at: datetime | None = None
    claim: str | None = None
    texts: dict[str, str] | None = None


@runtime_checkable
class Webhooks(Protocol):
    """The storage group behind webhooks (declared by `Capabilities.webhooks`)."""

    async def create_subscription(self, sub: Subscription) -> None: ...

    async def list_subscriptions(self, namespace: str | None) -> list[Subscription]:
        """Subscriptions of a namespace (all when None), erased ones included, oldest first."""

    async def set_secrets(self, namespace: str, sub_id: str, secrets: Sequence[str]) -> bool:
        """Replace a subscription's secrets (a rotation: new first, old kept for the overlap,
        then new alone). False when there is no such subscription of the namespace."""

    async def delete_subscription(self, namespace: str, sub_id: str) -> bool:
        """Remove a subscription and its deliveries (and events no delivery needs any more)."""

    async def sync_config_subscriptions(self, subs: Sequence[Subscription]) -> None:
        """Make the `source="config"` subscriptions exactly `subs` (by id: insert new ones,
        update changed ones, delete those no longer configured with their deliveries)."""

    async def claim_deliveries(self, lease_seconds: float, limit: int) -> list[Delivery]:
        """Claim up to `limit` deliveries, at most ONE per subscription: each subscription's
        oldest pending delivery (its head: later ones wait, so a subscription receives its
        events in order), when due (next_attempt_at passed) and not held (no claim, or its
        lease expired). Sets a new `claim` and claimed_until = now + lease_seconds, and
        returns them with their events. Two processes never hold one delivery at once."""

    async def finish_delivery(self, delivery_id: str, claim: str, status: str,
                              next_attempt_at: datetime | None, last_status: int | None,
                              last_body: str | None, last_error: str | None) -> bool:
        """Record an attempt (attempts + 1) and release the claim: `status` delivered, dead,
        or pending again not before `next_attempt_at`. False (nothing changed) when `claim`
        is no longer the delivery's claim."""

    async def list_deliveries(self, namespace: str, status: str | None = None,
                              limit: int = 50) -> list[Delivery]:
        """The namespace's deliveries, newest first (the delivery log)."""

    async def replay_delivery(self, namespace: str, delivery_id: str) -> bool:
        """A dead delivery becomes pending again, due now, attempts back to 0. False when it
        is not dead (or not this namespace's)."""

    async def prune_webhooks(self, delivered_before: datetime) -> int:
        """Delete delivered and dead deliveries finished before `delivered_before`, events no
        delivery needs, and erased subscriptions with nothing left pending. Returns rows."""

    async def webhook_backlog(self) -> dict[str, int]:
        """Deliveries per status, all namespaces (`/metrics`, `recall status`)."""


def extraction_failed(op_id: str, namespace: str, idempotency_key: str, attempts: int,
                      error: str, code: str = "EXTRACTION_FAILED") -> OutboxEvent:
    """The event of a job that failed for good (the worker's last attempt, or a claim that
    finds a job's lease expired on its last attempt). The error is the job's error, which
    names the failure, never the stored text."""
    return OutboxEvent(new_id("evt"), namespace, "extraction.failed",
                       {"job_id": op_id, "idempotency_key": idempotency_key,
                        "code": code, "error": error[:500], "attempts": attempts}, utcnow())
