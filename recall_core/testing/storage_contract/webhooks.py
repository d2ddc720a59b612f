"""Webhooks (`contracts.events`): events written with the change they describe (or not at
all), one delivery per matching subscription, claims one head per subscription at a time,
in order, guarded finishes, retries, dead deliveries and replays, erase and forget."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any


from ...contracts import OutboxEvent, Storage, Subscription, new_id
from ...models import utcnow
from .base import A, B, ContractBase, memory, operation

SECRET = "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0IQ=="


def sub(namespace: str = A, events: tuple[str, ...] = ("memory.deleted",), **kw: Any
        ) -> Subscription:
    kw.setdefault("created_at", utcnow())
    return Subscription(new_id("sub"), namespace, "http://127.0.0.1:9/hook", events,
                        (SECRET,), **kw)


def event(namespace: str = A, type: str = "memory.deleted", **payload: Any) -> OutboxEvent:
    return OutboxEvent(new_id("evt"), namespace, type, payload or {"memory_id": "m1"},
                       utcnow())


async def emit(storage: Storage, ev: OutboxEvent, fail: bool = False) -> int:
    class Boom(Exception):
        pass
    try:
        async with storage.write(ev.namespace) as tx:
            n = await tx.emit(ev)
            if fail:
                raise Boom()
        return n
    except Boom:
        return -1


class WebhookTests(ContractBase):
    async def test_an_event_is_fanned_out_to_matching_subscriptions_only(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        s1 = sub(A, ("memory.deleted", "extraction.completed"))
        s2 = sub(A, ("extraction.completed",))
        s3 = sub(B, ("memory.deleted",))
        for s in (s1, s2, s3):
            await storage.create_subscription(s)
        assert [s.id for s in await storage.list_subscriptions(A)] == [s1.id, s2.id]
        got = (await storage.list_subscriptions(A))[0]
        assert got.secrets == (SECRET,) and got.events == s1.events and got.source == "api"
        assert await emit(storage, event(A)) == 1
        assert await emit(storage, event(A, "namespace.erased")) == 0  # nobody asked
        rows = await storage.list_deliveries(A)
        assert [(d.subscription_id, d.event_type, d.status) for d in rows] == [
            (s1.id, "memory.deleted", "pending")]
        assert rows[0].payload == {"memory_id": "m1"} and rows[0].attempts == 0
        assert await storage.list_deliveries(B) == []

    async def test_a_rolled_back_change_leaves_no_event(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        await storage.create_subscription(sub())
        assert await emit(storage, event(), fail=True) == -1
        assert await storage.list_deliveries(A) == []
        assert await storage.claim_deliveries(30, 10) == []

    async def test_claims_take_one_head_per_subscription_in_order(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        s1, s2 = sub(), sub()
        await storage.create_subscription(s1)
        await storage.create_subscription(s2)
        events = [event(A, memory_id=f"m{i}") for i in range(3)]
        for ev in events:
            await emit(storage, ev)
        got = await storage.claim_deliveries(30, 10)
        assert sorted(d.subscription_id for d in got) == sorted([s1.id, s2.id])
        assert {d.event_id for d in got} == {events[0].id}
        assert await storage.claim_deliveries(30, 10) == []  # heads held, the rest wait
        first = next(d for d in got if d.subscription_id == s1.id)
        assert await storage.finish_delivery(first.id, first.claim, "delivered", None, 204,
                                             "", None)
        assert not await storage.finish_delivery(first.id, first.claim, "delivered", None,
                                                 204, "", None)  # claim spent
        nxt = await storage.claim_deliveries(30, 10)
        assert [(d.subscription_id, d.event_id) for d in nxt] == [(s1.id, events[1].id)]

    async def test_a_retry_waits_and_keeps_its_place(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        await storage.create_subscription(sub())
        first, second = event(A, memory_id="a"), event(A, memory_id="b")
        await emit(storage, first)
        await emit(storage, second)
        d = (await storage.claim_deliveries(30, 10))[0]
        later = utcnow() + timedelta(seconds=60)
        assert await storage.finish_delivery(d.id, d.claim, "pending", later, 500, "oops",
                                             "HTTP 500")
        assert await storage.claim_deliveries(30, 10) == []  # not due, and still the head
        row = (await storage.list_deliveries(A, "pending"))[-1]
        assert (row.id, row.attempts, row.last_status, row.last_body) == (d.id, 1, 500, "oops")

    async def test_an_expired_lease_is_claimed_again_with_a_new_claim(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        await storage.create_subscription(sub())
        await emit(storage, event())
        d = (await storage.claim_deliveries(self.short_lease, 10))[0]
        await asyncio.sleep(self.short_lease * 3)
        again = (await storage.claim_deliveries(30, 10))[0]
        assert again.id == d.id and again.claim != d.claim and again.event_id == d.event_id
        assert not await storage.finish_delivery(d.id, d.claim, "delivered", None, 200, "", None)
        assert await storage.finish_delivery(again.id, again.claim, "delivered", None, 200, "",
                                             None)

    async def test_two_instances_never_hold_one_delivery(self, storage: Storage, reopen: Any) -> None:
        self.need(storage, "webhooks")
        other = await reopen()
        subs = [sub() for _ in range(6)]
        for s in subs:
            await storage.create_subscription(s)
        for i in range(4):
            await emit(storage, event(A, memory_id=f"m{i}"))
        held: list[str] = []
        for _ in range(12):
            a, b = await asyncio.gather(storage.claim_deliveries(30, 4),
                                        other.claim_deliveries(30, 4))
            held.extend(d.id for d in [*a, *b])
            for d in [*a, *b]:
                await (storage if d in a else other).finish_delivery(
                    d.id, d.claim, "delivered", None, 200, "", None)
        assert len(held) == len(set(held)) == 24

    async def test_dead_then_replayed(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        await storage.create_subscription(sub())
        await emit(storage, event())
        d = (await storage.claim_deliveries(30, 10))[0]
        assert await storage.finish_delivery(d.id, d.claim, "dead", None, 410, "gone", "HTTP 410")
        dead = (await storage.list_deliveries(A, "dead"))[0]
        assert dead.finished_at is not None and dead.attempts == 1
        assert await storage.webhook_backlog() == {"pending": 0, "delivered": 0, "dead": 1}
        assert not await storage.replay_delivery(B, d.id)  # another namespace's
        assert await storage.replay_delivery(A, d.id)
        assert not await storage.replay_delivery(A, d.id)  # pending now, not dead
        again = (await storage.claim_deliveries(30, 10))[0]
        assert again.id == d.id and again.attempts == 0

    async def test_failed_job_emits_with_the_failure_only(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        await storage.create_subscription(sub(A, ("extraction.failed",)))
        op, _ = await storage.enqueue(operation(A, "k1", payload={"text": "x"}))
        claimed = await storage.claim_job(30)
        ev = event(A, "extraction.failed", job_id=op.id)
        assert not await storage.fail_job(op.id, claimed.attempts + 1, "stale", False, event=ev)
        assert await storage.list_deliveries(A) == []
        assert await storage.fail_job(op.id, claimed.attempts, "bad", False, event=ev)
        assert [d.event_id for d in await storage.list_deliveries(A)] == [ev.id]

    async def test_erase_keeps_only_the_erase_event(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        s = sub(A, ("memory.deleted", "namespace.erased"))
        await storage.create_subscription(s)
        await emit(storage, event(A))
        erased = event(A, "namespace.erased", erased=True)
        await storage.delete_namespace(A, erased)
        assert [d.event_id for d in await storage.list_deliveries(A)] == [erased.id]
        assert (await storage.list_subscriptions(A))[0].erased_at is not None
        assert await emit(storage, event(A)) == 0  # an erased subscription takes no more
        d = (await storage.claim_deliveries(30, 10))[0]
        await storage.finish_delivery(d.id, d.claim, "delivered", None, 200, "", None)
        await storage.prune_webhooks(utcnow() + timedelta(seconds=1))
        assert await storage.list_subscriptions(A) == []
        assert await storage.list_deliveries(A) == []

    async def test_texts_kept_only_when_asked_and_go_with_forget(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        plain, texty = sub(A, ("extraction.completed",)), sub(B, ("extraction.completed",),
                                                                include_text=True)
        await storage.create_subscription(plain)
        await storage.create_subscription(texty)
        m = memory(B, "I live in Oslo")
        await storage.insert_memories([m])
        for ns in (A, B):
            await emit(storage, event(ns, "extraction.completed", memory_ids=[m.id])._replace(
                texts={m.id: "I live in Oslo"}))
        assert (await storage.list_deliveries(A))[0].texts is None
        assert (await storage.list_deliveries(B))[0].texts == {m.id: "I live in Oslo"}
        async with storage.write(B) as tx:
            await tx.delete([m.id])
        assert (await storage.list_deliveries(B))[0].texts is None

    async def test_config_subscriptions_sync_and_deletion(self, storage: Storage) -> None:
        self.need(storage, "webhooks")
        keep, drop = sub(A), sub(A)
        await storage.sync_config_subscriptions([keep, drop])
        await emit(storage, event(A))
        await storage.sync_config_subscriptions([keep._replace(url="http://127.0.0.1:8/x")])
        subs = await storage.list_subscriptions(A)
        assert [(s.id, s.url, s.source) for s in subs] == [(keep.id, "http://127.0.0.1:8/x",
                                                            "config")]
        assert {d.subscription_id for d in await storage.list_deliveries(A)} == {keep.id}
        assert await storage.set_secrets(A, keep.id, ["whsec_new", SECRET])
        assert not await storage.set_secrets(B, keep.id, ["whsec_new"])
        assert (await storage.list_subscriptions(A))[0].secrets == ("whsec_new", SECRET)
        assert await storage.delete_subscription(A, keep.id)
        assert not await storage.delete_subscription(A, keep.id)
        assert await storage.list_deliveries(A) == []
