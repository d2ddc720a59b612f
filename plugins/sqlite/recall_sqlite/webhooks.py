"""Webhooks on SQLite (`recall_core.contracts.events`): subscriptions, the outbox and its
deliveries. Events are written by `emit` on the connection of the caller's transaction, so
they commit or roll back with the change they describe. SQLite has one writer per file
(across processes too), so a claim's BEGIN IMMEDIATE is the whole claim discipline."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import aiosqlite

from recall_core import utcnow
from recall_core.contracts import Delivery, OutboxEvent, Subscription

from .codec import from_db, now_text, to_db

# Migration 15 (schema.py). seq is the delivery order of one subscription.
SCHEMA = (
    """CREATE TABLE webhook_subscriptions (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        secrets TEXT NOT NULL,
        include_text INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL DEFAULT 'api',
        created_at TEXT NOT NULL,
        erased_at TEXT
    )""",
    "CREATE INDEX webhook_subscriptions_ns ON webhook_subscriptions (namespace)",
    """CREATE TABLE webhook_events (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        texts TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX webhook_events_ns ON webhook_events (namespace)",
    """CREATE TABLE webhook_deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        subscription_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        namespace TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        claim TEXT,
        claimed_until TEXT,
        last_status INTEGER,
        last_body TEXT,
        last_error TEXT,
        created_at TEXT NOT NULL,
        finished_at TEXT
    )""",
    "CREATE INDEX webhook_deliveries_head ON webhook_deliveries (subscription_id, seq) "
    "WHERE status = 'pending'",
    "CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) "
    "WHERE status = 'pending'",
    "CREATE INDEX webhook_deliveries_ns ON webhook_deliveries (namespace, seq)",
    "CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)",
)

_SUB_COLUMNS = ("id, namespace, url, events, secrets, include_text, source, created_at, "
                "erased_at")
_DELIVERY_COLUMNS = ("d.id, d.seq, d.subscription_id, d.event_id, d.namespace, e.type, "
                     "e.payload, e.created_at, d.status, d.attempts, d.next_attempt_at, "
                     "d.last_status, d.last_body, d.last_error, d.finished_at, d.claim, e.texts")
_MATCH = ("s.namespace = ? AND s.erased_at IS NULL "
          "AND EXISTS (SELECT 1 FROM json_each(s.events) WHERE value = ?)")


def _sub(r: Sequence[Any]) -> Subscription:
    return Subscription(r[0], r[1], r[2], tuple(json.loads(r[3])), tuple(json.loads(r[4])),
                        bool(r[5]), r[6], from_db(r[7]), from_db(r[8]))


def _delivery(r: Sequence[Any]) -> Delivery:
    return Delivery(r[0], int(r[1]), r[2], r[3], r[4], r[5], json.loads(r[6]), from_db(r[7]),
                    r[8], int(r[9]), from_db(r[10]), r[11], r[12], r[13], from_db(r[14]), r[15],
                    json.loads(r[16]) if r[16] else None)


async def emit(db: aiosqlite.Connection, event: OutboxEvent) -> int:
    """WriteTx.emit on the transaction's connection: one delivery per matching subscription,
    and the event row only when there is one."""
    cur = await db.execute(
        "INSERT INTO webhook_deliveries (id, subscription_id, event_id, namespace, "
        "next_attempt_at, created_at) "
        "SELECT 'dlv_' || lower(hex(randomblob(16))), s.id, ?, ?, ?, ? "
        f"FROM webhook_subscriptions s WHERE {_MATCH} ORDER BY s.created_at, s.id",
        (event.id, event.namespace, to_db(event.created_at), to_db(event.created_at),
         event.namespace, event.type))
    if not cur.rowcount:
        return 0
    texts = None
    if event.texts:  # only when a matching subscription asked for text
        rows = await db.execute_fetchall(
            f"SELECT 1 FROM webhook_subscriptions s WHERE {_MATCH} AND s.include_text = 1 "
            "LIMIT 1", (event.namespace, event.type))
        texts = json.dumps(event.texts, ensure_ascii=False) if rows else None
    await db.execute(
        "INSERT INTO webhook_events (id, namespace, type, payload, texts, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (event.id, event.namespace, event.type, json.dumps(event.payload, ensure_ascii=False),
         texts, to_db(event.created_at)))
    return cur.rowcount


async def forget_texts(db: aiosqlite.Connection, namespace: str, ids: Sequence[str]) -> None:
    """A forgotten memory's text leaves the outbox too (include_text events)."""
    for mid in ids:
        await db.execute("UPDATE webhook_events SET texts = NULL WHERE namespace = ? "
                         "AND texts IS NOT NULL AND instr(texts, ?) > 0", (namespace, mid))


async def erase(db: aiosqlite.Connection, namespace: str, event: OutboxEvent | None
                ) -> dict[str, int]:
    """Inside delete_namespace's transaction: the namespace's events and deliveries go, the
    erase event is emitted, and its api subscriptions are marked erased."""
    out = {}
    for table in ("webhook_deliveries", "webhook_events"):
        cur = await db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
        out[table] = cur.rowcount
    if event is not None:
        await emit(db, event)
    await db.execute("UPDATE webhook_subscriptions SET erased_at = ? WHERE namespace = ? "
                     "AND source = 'api' AND erased_at IS NULL", (now_text(), namespace))
    # Erased subscriptions nobody will send anything to any more go at once.
    await db.execute(
        "DELETE FROM webhook_subscriptions WHERE namespace = ? AND erased_at IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = "
        "webhook_subscriptions.id AND d.status = 'pending')", (namespace,))
    return out


async def _drop_subscription(db: aiosqlite.Connection, sub_id: str) -> None:
    await db.execute("DELETE FROM webhook_deliveries WHERE subscription_id = ?", (sub_id,))
    await db.execute("DELETE FROM webhook_subscriptions WHERE id = ?", (sub_id,))
    await db.execute("DELETE FROM webhook_events WHERE NOT EXISTS (SELECT 1 FROM "
                     "webhook_deliveries d WHERE d.event_id = webhook_events.id)")


def _sub_params(s: Subscription) -> tuple[Any, ...]:
    return (s.id, s.namespace, s.url, json.dumps(list(s.events)), json.dumps(list(s.secrets)),
            int(s.include_text), s.source, to_db(s.created_at or utcnow()), to_db(s.erased_at))


class WebhookMethods:
    async def create_subscription(self, sub: Subscription) -> None:
        await self.db.write(f"INSERT INTO webhook_subscriptions ({_SUB_COLUMNS}) VALUES "
                            f"({', '.join('?' * 9)})", _sub_params(sub))

    async def list_subscriptions(self, namespace: str | None) -> list[Subscription]:
        rows = await self.db.fetch(
            f"SELECT {_SUB_COLUMNS} FROM webhook_subscriptions WHERE ? IS NULL OR namespace = ? "
            "ORDER BY created_at, id", (namespace, namespace))
        return [_sub(r) for r in rows]

    async def set_secrets(self, namespace: str, sub_id: str, secrets: Sequence[str]) -> bool:
        return await self.db.write(
            "UPDATE webhook_subscriptions SET secrets = ? WHERE id = ? AND namespace = ?",
            (json.dumps(list(secrets)), sub_id, namespace)) == 1

    async def delete_subscription(self, namespace: str, sub_id: str) -> bool:
        async with self.db.transaction() as db:
            rows = await db.execute_fetchall(
                "SELECT 1 FROM webhook_subscriptions WHERE id = ? AND namespace = ?",
                (sub_id, namespace))
            if not rows:
                return False
            await _drop_subscription(db, sub_id)
        return True

    async def sync_config_subscriptions(self, subs: Sequence[Subscription]) -> None:
        async with self.db.transaction() as db:
            have = {r[0] for r in await db.execute_fetchall(
                "SELECT id FROM webhook_subscriptions WHERE source = 'config'")}
            for s in subs:
                params = _sub_params(s._replace(source="config"))
                await db.execute(
                    f"INSERT INTO webhook_subscriptions ({_SUB_COLUMNS}) VALUES "
                    f"({', '.join('?' * 9)}) ON CONFLICT (id) DO UPDATE SET "
                    "url = excluded.url, events = excluded.events, secrets = excluded.secrets, "
                    "include_text = excluded.include_text, namespace = excluded.namespace",
                    params)
            for gone in have - {s.id for s in subs}:
                await _drop_subscription(db, gone)

    async def claim_deliveries(self, lease_seconds: float, limit: int) -> list[Delivery]:
        now = to_db(utcnow())
        # Idle polls stay on a reader and never take the write lock.
        if not await self.db.fetch_one(
                "SELECT 1 FROM webhook_deliveries WHERE status = 'pending' "
                "AND next_attempt_at <= ? LIMIT 1", (now,)):
            return []
        async with self.db.transaction() as db:
            now_dt = utcnow()
            now = to_db(now_dt)
            # Each subscription's head only (one index seek per subscription, however long
            # a dead receiver's backlog): later deliveries wait their turn (order).
            rows = await db.execute_fetchall(
                "SELECT d.id FROM webhook_subscriptions s JOIN webhook_deliveries d ON d.id = "
                " (SELECT p.id FROM webhook_deliveries p WHERE p.subscription_id = s.id "
                "  AND p.status = 'pending' ORDER BY p.seq LIMIT 1) "
                "WHERE d.next_attempt_at <= ? AND (d.claimed_until IS NULL OR d.claimed_until < ?) "
                "ORDER BY d.next_attempt_at, d.seq LIMIT ?", (now, now, max(0, limit)))
            ids = [r[0] for r in rows]
            until = to_db(now_dt + timedelta(seconds=lease_seconds))
            for did in ids:
                await db.execute("UPDATE webhook_deliveries SET claim = ?, claimed_until = ? "
                                 "WHERE id = ?", (uuid.uuid4().hex, until, did))
            out = []
            for did in ids:
                out.extend(_delivery(r) for r in await db.execute_fetchall(
                    f"SELECT {_DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e "
                    "ON e.id = d.event_id WHERE d.id = ?", (did,)))
        return out

    async def finish_delivery(self, delivery_id: str, claim: str, status: str,
                              next_attempt_at: datetime | None, last_status: int | None,
                              last_body: str | None, last_error: str | None) -> bool:
        done = status != "pending"
        return await self.db.write(
            "UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, "
            "next_attempt_at = coalesce(?, next_attempt_at), claim = NULL, claimed_until = NULL, "
            "last_status = ?, last_body = ?, last_error = ?, finished_at = ? "
            "WHERE id = ? AND claim = ? AND status = 'pending'",
            (status, to_db(next_attempt_at), last_status, last_body, last_error,
             now_text() if done else None, delivery_id, claim)) == 1

    async def list_deliveries(self, namespace: str, status: str | None = None,
                              limit: int = 50) -> list[Delivery]:
        rows = await self.db.fetch(
            f"SELECT {_DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e "
            "ON e.id = d.event_id WHERE d.namespace = ? AND (? IS NULL OR d.status = ?) "
            "ORDER BY d.seq DESC LIMIT ?", (namespace, status, status, max(0, limit)))
        return [_delivery(r) for r in rows]

    async def replay_delivery(self, namespace: str, delivery_id: str) -> bool:
        return await self.db.write(
            "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, "
            "next_attempt_at = ?, finished_at = NULL, claim = NULL, claimed_until = NULL "
            "WHERE id = ? AND namespace = ? AND status = 'dead'",
            (now_text(), delivery_id, namespace)) == 1

    async def prune_webhooks(self, delivered_before: datetime) -> int:
        n = 0
        async with self.db.transaction() as db:
            for sql, params in (
                    ("DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'dead') "
                     "AND finished_at < ?", (to_db(delivered_before),)),
                    ("DELETE FROM webhook_subscriptions WHERE erased_at IS NOT NULL AND NOT "
                     "EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = "
                     "webhook_subscriptions.id AND d.status = 'pending')", ()),
                    ("DELETE FROM webhook_deliveries WHERE NOT EXISTS (SELECT 1 FROM "
                     "webhook_subscriptions s WHERE s.id = webhook_deliveries.subscription_id)",
                     ()),
                    ("DELETE FROM webhook_events WHERE NOT EXISTS (SELECT 1 FROM "
                     "webhook_deliveries d WHERE d.event_id = webhook_events.id)", ())):
                n += (await db.execute(sql, params)).rowcount
        return n

    async def webhook_backlog(self) -> dict[str, int]:
        rows = await self.db.fetch(
            "SELECT status, count(*) FROM webhook_deliveries GROUP BY status")
        out = {"pending": 0, "delivered": 0, "dead": 0}
        out.update({r[0]: int(r[1]) for r in rows})
        return out
