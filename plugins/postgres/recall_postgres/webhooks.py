"""Webhooks on PostgreSQL (`recall_core.contracts.events`): subscriptions, the outbox and its
deliveries, shared by every process on one database.

- `emit` runs on the connection of the caller's transaction: the event commits or rolls back
  with the change it describes.
- A claim takes each subscription's head (its oldest pending delivery) with
  `FOR UPDATE SKIP LOCKED`, the conditions on the delivery row itself (so Postgres rechecks
  them on the row it locks: a delivery another process just claimed or finished is skipped),
  and sets a fresh claim id and a lease on the database clock. A later delivery of a
  subscription is never a head while an earlier one is pending, so a subscription's events
  go out one at a time, in order, from one process at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from recall_core.contracts import Delivery, OutboxEvent, Subscription

from .rows import aware

# Migration 16 (migrations.py): one self-contained step for this branch.
SCHEMA = """
CREATE TABLE webhook_subscriptions (
    id           text PRIMARY KEY,
    namespace    text NOT NULL,
    url          text NOT NULL,
    events       text[] NOT NULL,
    secrets      text[] NOT NULL,
    include_text boolean NOT NULL DEFAULT false,
    source       text NOT NULL DEFAULT 'api',
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    erased_at    timestamptz
);
CREATE INDEX webhook_subscriptions_ns ON webhook_subscriptions (namespace);
CREATE TABLE webhook_events (
    id         text PRIMARY KEY,
    namespace  text NOT NULL,
    type       text NOT NULL,
    payload    jsonb NOT NULL,
    texts      jsonb,
    created_at timestamptz NOT NULL
);
CREATE INDEX webhook_events_ns ON webhook_events (namespace);
CREATE TABLE webhook_deliveries (
    seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              text NOT NULL UNIQUE,
    subscription_id text NOT NULL,
    event_id        text NOT NULL,
    namespace       text NOT NULL,
    status          text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    claim           text,
    claimed_until   timestamptz,
    last_status     integer,
    last_body       text,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at     timestamptz
);
CREATE INDEX webhook_deliveries_head ON webhook_deliveries (subscription_id, seq)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_ns ON webhook_deliveries (namespace, seq);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
"""

_SUB_COLUMNS = ("id, namespace, url, events, secrets, include_text, source, created_at, "
                "erased_at")
_DELIVERY_COLUMNS = ("d.id, d.seq, d.subscription_id, d.event_id, d.namespace, e.type, "
                     "e.payload, e.created_at, d.status, d.attempts, d.next_attempt_at, "
                     "d.last_status, d.last_body, d.last_error, d.finished_at, d.claim, e.texts")
_MATCH = "s.namespace = $1 AND s.erased_at IS NULL AND $2 = ANY(s.events)"


def _sub(r: asyncpg.Record) -> Subscription:
    return Subscription(r["id"], r["namespace"], r["url"], tuple(r["events"]),
                        tuple(r["secrets"]), r["include_text"], r["source"], r["created_at"],
                        r["erased_at"])


def _delivery(r: asyncpg.Record) -> Delivery:
    return Delivery(*(r[i] for i in range(17)))


async def emit(con: asyncpg.Connection, event: OutboxEvent) -> int:
    """WriteTx.emit on the transaction's connection."""
    n = int((await con.execute(
        f"""INSERT INTO webhook_deliveries (id, subscription_id, event_id, namespace,
                                            next_attempt_at)
            SELECT 'dlv_' || md5(random()::text || clock_timestamp()::text || s.id), s.id,
                   $3, $1, $4
              FROM webhook_subscriptions s WHERE {_MATCH} ORDER BY s.created_at, s.id""",
        event.namespace, event.type, event.id, aware(event.created_at))).split()[-1])
    if not n:
        return 0
    texts = None
    if event.texts and await con.fetchval(
            f"SELECT 1 FROM webhook_subscriptions s WHERE {_MATCH} AND s.include_text LIMIT 1",
            event.namespace, event.type):
        texts = event.texts
    await con.execute(
        "INSERT INTO webhook_events (id, namespace, type, payload, texts, created_at) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        event.id, event.namespace, event.type, event.payload, texts, aware(event.created_at))
    return n


async def forget_texts(con: asyncpg.Connection, namespace: str, ids: Sequence[str]) -> None:
    """A forgotten memory's text leaves the outbox too (include_text events)."""
    await con.execute("UPDATE webhook_events SET texts = NULL WHERE namespace = $1 "
                      "AND texts IS NOT NULL AND texts ?| $2::text[]", namespace, list(ids))


async def erase(con: asyncpg.Connection, namespace: str, event: OutboxEvent | None
                ) -> dict[str, int]:
    """Inside delete_namespace's transaction (see the SQLite twin)."""
    out = {}
    for table in ("webhook_deliveries", "webhook_events"):
        out[table] = int((await con.execute(
            f"DELETE FROM {table} WHERE namespace = $1", namespace)).split()[-1])
    if event is not None:
        await emit(con, event)
    await con.execute("UPDATE webhook_subscriptions SET erased_at = clock_timestamp() "
                      "WHERE namespace = $1 AND source = 'api' AND erased_at IS NULL", namespace)
    await con.execute(
        "DELETE FROM webhook_subscriptions s WHERE namespace = $1 AND erased_at IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id "
        "AND d.status = 'pending')", namespace)
    return out


async def _drop_subscription(con: asyncpg.Connection, sub_id: str) -> None:
    events = [r["event_id"] for r in await con.fetch(
        "DELETE FROM webhook_deliveries WHERE subscription_id = $1 RETURNING event_id", sub_id)]
    await con.execute("DELETE FROM webhook_subscriptions WHERE id = $1", sub_id)
    await con.execute("DELETE FROM webhook_events e WHERE id = ANY($1::text[]) AND NOT EXISTS "
                      "(SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)", events)


def _sub_params(s: Subscription) -> tuple[Any, ...]:
    return (s.id, s.namespace, s.url, list(s.events), list(s.secrets), bool(s.include_text),
            s.source, aware(s.created_at) if s.created_at else None, aware(s.erased_at))


_UPSERT = f"""INSERT INTO webhook_subscriptions ({_SUB_COLUMNS})
              VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8, clock_timestamp()), $9)"""


class WebhookMethods:
    async def create_subscription(self, sub: Subscription) -> None:
        await self.pool.execute(_UPSERT, *_sub_params(sub))

    async def list_subscriptions(self, namespace: str | None) -> list[Subscription]:
        rows = await self.pool.fetch(
            f"SELECT {_SUB_COLUMNS} FROM webhook_subscriptions "
            "WHERE $1::text IS NULL OR namespace = $1 ORDER BY created_at, id", namespace)
        return [_sub(r) for r in rows]

    async def set_secrets(self, namespace: str, sub_id: str, secrets: Sequence[str]) -> bool:
        result = await self.pool.execute(
            "UPDATE webhook_subscriptions SET secrets = $3 WHERE id = $1 AND namespace = $2",
            sub_id, namespace, list(secrets))
        return result.split()[-1] == "1"

    async def delete_subscription(self, namespace: str, sub_id: str) -> bool:
        async with self.pool.acquire() as con, con.transaction():
            if not await con.fetchval("SELECT 1 FROM webhook_subscriptions WHERE id = $1 AND "
                                      "namespace = $2 FOR UPDATE", sub_id, namespace):
                return False
            await _drop_subscription(con, sub_id)
        return True

    async def sync_config_subscriptions(self, subs: Sequence[Subscription]) -> None:
        async with self.pool.acquire() as con, con.transaction():
            # Several processes start at once with the same config: one at a time.
            await con.execute("SELECT pg_advisory_xact_lock(hashtext('recall-webhook-config'))")
            have = {r["id"] for r in await con.fetch(
                "SELECT id FROM webhook_subscriptions WHERE source = 'config'")}
            for s in subs:
                await con.execute(
                    _UPSERT + """ ON CONFLICT (id) DO UPDATE SET url = excluded.url,
                        events = excluded.events, secrets = excluded.secrets,
                        include_text = excluded.include_text, namespace = excluded.namespace""",
                    *_sub_params(s._replace(source="config")))
            for gone in have - {s.id for s in subs}:
                await _drop_subscription(con, gone)

    async def claim_deliveries(self, lease_seconds: float, limit: int) -> list[Delivery]:
        rows = await self.pool.fetch(
            f"""WITH heads AS (  -- one index seek per subscription, however long a backlog
                    SELECT (SELECT d.id FROM webhook_deliveries d
                             WHERE d.subscription_id = s.id AND d.status = 'pending'
                             ORDER BY d.seq LIMIT 1) AS id
                      FROM webhook_subscriptions s),
                picked AS (
                    SELECT d.id FROM webhook_deliveries d JOIN heads h ON h.id = d.id
                     WHERE d.status = 'pending' AND d.next_attempt_at <= clock_timestamp()
                       AND (d.claimed_until IS NULL OR d.claimed_until < clock_timestamp())
                     ORDER BY d.next_attempt_at, d.seq LIMIT $2
                       FOR UPDATE OF d SKIP LOCKED),
                claimed AS (
                    UPDATE webhook_deliveries d
                       SET claim = md5(random()::text || d.id || clock_timestamp()::text),
                           claimed_until = clock_timestamp() + make_interval(secs => $1)
                      FROM picked WHERE d.id = picked.id
                    RETURNING d.*)
                SELECT {_DELIVERY_COLUMNS} FROM claimed d JOIN webhook_events e
                    ON e.id = d.event_id ORDER BY d.seq""",
            float(lease_seconds), max(0, limit))
        return [_delivery(r) for r in rows]

    async def finish_delivery(self, delivery_id: str, claim: str, status: str,
                              next_attempt_at: datetime | None, last_status: int | None,
                              last_body: str | None, last_error: str | None) -> bool:
        result = await self.pool.execute(
            """UPDATE webhook_deliveries
                  SET status = $3, attempts = attempts + 1,
                      next_attempt_at = coalesce($4::timestamptz, next_attempt_at),
                      claim = NULL, claimed_until = NULL, last_status = $5, last_body = $6,
                      last_error = $7,
                      finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE clock_timestamp() END
                WHERE id = $1 AND claim = $2 AND status = 'pending'""",
            delivery_id, claim, status, aware(next_attempt_at), last_status, last_body,
            last_error)
        return result.split()[-1] == "1"

    async def list_deliveries(self, namespace: str, status: str | None = None,
                              limit: int = 50) -> list[Delivery]:
        rows = await self.pool.fetch(
            f"""SELECT {_DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e
                    ON e.id = d.event_id
                 WHERE d.namespace = $1 AND ($2::text IS NULL OR d.status = $2)
                 ORDER BY d.seq DESC LIMIT $3""", namespace, status, max(0, limit))
        return [_delivery(r) for r in rows]

    async def replay_delivery(self, namespace: str, delivery_id: str) -> bool:
        result = await self.pool.execute(
            """UPDATE webhook_deliveries
                  SET status = 'pending', attempts = 0, next_attempt_at = clock_timestamp(),
                      finished_at = NULL, claim = NULL, claimed_until = NULL
                WHERE id = $1 AND namespace = $2 AND status = 'dead'""", delivery_id, namespace)
        return result.split()[-1] == "1"

    async def prune_webhooks(self, delivered_before: datetime) -> int:
        n = 0
        async with self.pool.acquire() as con, con.transaction():
            for sql, args in (
                    ("DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'dead') "
                     "AND finished_at < $1", (aware(delivered_before),)),
                    ("DELETE FROM webhook_subscriptions s WHERE erased_at IS NOT NULL AND NOT "
                     "EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id "
                     "AND d.status = 'pending')", ()),
                    ("DELETE FROM webhook_deliveries d WHERE NOT EXISTS (SELECT 1 FROM "
                     "webhook_subscriptions s WHERE s.id = d.subscription_id)", ()),
                    ("DELETE FROM webhook_events e WHERE NOT EXISTS (SELECT 1 FROM "
                     "webhook_deliveries d WHERE d.event_id = e.id)", ())):
                n += int((await con.execute(sql, *args)).split()[-1])
        return n

    async def webhook_backlog(self) -> dict[str, int]:
        rows = await self.pool.fetch(
            "SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status")
        out = {"pending": 0, "delivered": 0, "dead": 0}
        out.update({r["status"]: int(r["n"]) for r in rows})
        return out

