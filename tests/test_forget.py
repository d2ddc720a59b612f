"""Issue 13 #6 and #9: forgetting and erasing leave no trace, on SQLite and real Postgres.

Each test looks for the forgotten text in every column of every table (not only where the
code means to write it), through a real runtime built like `recall serve` builds it."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import pytest_asyncio

from recall_core.server.runtime import build_runtime
from recall_core.config import RecallConfig
from recall_core.errors import InvalidParam, MemoryNotFound
from recall_core.testing.helpers import current_of
from recall_core.testing.helpers import dump_tables as table_dump

from recall_testkit.backends import BACKENDS, PG_URL, bundled


@pytest_asyncio.fixture(params=BACKENDS)
async def runtime(request, tmp_path):
    if request.param == "sqlite":
        db = str(tmp_path / "r.db")
    else:  # a shared database: each test works in its own namespaces with unique texts
        db = PG_URL
    cfg = RecallConfig(db=db, worker={"concurrency": 1, "poll_interval": 0.02, "yield_pause": 0},
                       decay={"interval": 0}, extractor="stub")
    rt = await build_runtime(cfg, bundled(postgres=request.param != "sqlite"))
    yield rt
    await rt.close()


async def stored(rt, namespace, text, **kw):
    ack = await rt.service.store(namespace, text, **kw)
    for _ in range(400):
        op = await rt.storage.get_operation(namespace, ack["job_id"])
        if op.status in ("done", "failed"):
            assert op.status == "done", op.error
            return op
        await asyncio.sleep(0.025)
    raise AssertionError("job did not finish")


def uid() -> str:
    return uuid.uuid4().hex[:10]


async def test_forget_removes_the_whole_fact_timeline_and_its_text_everywhere(runtime):
    ns, secret, other = f"forget-{uid()}", f"Zanzibar{uid()}", f"Quito{uid()}"
    await stored(runtime, ns, f"I live in {other}.", session_id="s1")
    await stored(runtime, ns, f"I live in {secret}.", session_id="s1")
    await stored(runtime, ns, "I drink green tea every morning.", session_id="s1",
                 idempotency_key="tea")
    (current,) = await current_of(runtime.storage, ns, "user", "location")
    assert secret in current.text
    assert other in await table_dump(runtime.storage)
    result = await runtime.service.delete(ns, current.id)
    assert result["deleted"] == current.id and len(result["forgotten_ids"]) == 2
    dump = await table_dump(runtime.storage)
    assert secret not in dump and other not in dump  # row, history, payloads, contexts
    assert await runtime.storage.history(ns, "user", "location") == []
    hits = await runtime.service.search(ns, secret)
    assert hits["results"] == []
    # the rest of the namespace is untouched
    assert any("green tea" in m["text"] for m in (await runtime.service.inspect(ns))["memories"])
    with pytest.raises(MemoryNotFound):
        await runtime.service.delete(ns, current.id)


async def test_a_retry_of_a_forgotten_store_is_still_recognised(runtime):
    ns, secret = f"forget-{uid()}", f"Oaxaca{uid()}"
    op = await stored(runtime, ns, f"I live in {secret}.", idempotency_key="k1")
    (m,) = await current_of(runtime.storage, ns, "user", "location")
    await runtime.service.delete(ns, m.id)
    again = await runtime.service.store(ns, f"I live in {secret}.", idempotency_key="k1")
    assert again["cached"] is True and again["job_id"] == op.id  # not stored again
    with pytest.raises(InvalidParam):  # and the key still cannot carry another text
        await runtime.service.store(ns, "Something else entirely.", idempotency_key="k1")
    assert secret not in await table_dump(runtime.storage)


async def test_erase_leaves_no_row_of_the_namespace_not_even_its_own_audit_row(runtime):
    ns, keep = f"erase-{uid()}", f"keep-{uid()}"
    await stored(runtime, ns, f"I live in Lima{ns}.")
    await stored(runtime, keep, "I live in Bergen.")
    from recall_core.server.mcp.default_middleware import audit_call
    audit_call(runtime, "store_memory", ns, {}, "ok", None, 5.0)  # a call in flight
    await runtime.service.delete_namespace(ns, "DELETE MY DATA")
    audit_call(runtime, "delete_namespace_data", ns, {}, "ok", None, 50.0)  # the erase's own
    await runtime.audit.close()
    assert ns not in await table_dump(runtime.storage)
    assert keep in await table_dump(runtime.storage)


async def test_erase_leaves_no_row_naming_the_namespace_tokens_and_audit_included(runtime):
    # Issue 28: a namespace is often a person's name or e-mail address. After the erase no
    # row of any table names it: not the revoked tokens (kept by hash only, so they still
    # answer 401), not the admin audit (which keeps the receipt's digest).
    from recall_core.admin.service import AdminService
    from recall_core.admin.tokens import hash_token
    from recall_core.memory.erase import digest, erased_label
    from recall_core.server.auth import StorageTokenVerifier

    ns = f"ann.{uid()}@example.com"
    admin = AdminService(runtime.service)
    live = (await admin.create_token("ops", ns))["token"]
    revoked = (await admin.create_token("ops", ns))["token"]
    await admin.revoke_token("ops", ns, hash_token(revoked)[:16])
    await stored(runtime, ns, "I live in Tromsø.")
    await runtime.storage.save_task(ns, "task-1", {"note": "a task"})
    assert ns in await table_dump(runtime.storage)
    done = await admin.erase_namespace("ops", ns, ns)
    receipt = done["receipt"]
    assert receipt["namespace"] == ns and receipt["digest"] == digest(receipt)
    assert receipt["deleted"]["memories"] == 1 and receipt["deleted"]["api_tokens"] == 2
    assert receipt["deleted"]["a2a_tasks"] == 1 and receipt["deleted"]["operations"] == 1
    assert done["tokens_revoked"] == 1
    await runtime.audit.close()
    dump = await table_dump(runtime.storage)
    assert ns not in dump and ns.split("@")[0] not in dump
    # both tokens answer 401 (no namespace) and stay known by hash only
    verifier = StorageTokenVerifier(runtime.storage)
    for token in (live, revoked):
        assert await verifier.verify_token(token) is None
        assert hash_token(token) in dump
    # the audit keeps the digest, and names the namespace by it
    actions, _ = await runtime.storage.list_admin_actions(50, 0)
    mine = [a for a in actions if a.namespace == erased_label(receipt["digest"])]
    assert [a.action for a in mine][:1] == ["erase_namespace"]
    assert mine[0].detail["receipt_digest"] == receipt["digest"]
    assert {a.action for a in mine} >= {"create_token", "revoke_token", "erase_namespace"}


async def test_finished_stores_lose_their_text_after_the_retention_period(runtime):
    from datetime import timedelta

    from recall_core.models import utcnow
    from recall_core.jobs.retention import scrub_old_payloads

    ns, secret = f"ret-{uid()}", f"Kathmandu{uid()}"
    op = await stored(runtime, ns, f"I live in {secret}.", idempotency_key="r1")
    assert await scrub_old_payloads(runtime.storage, 7, utcnow()) == 0  # too recent
    assert await scrub_old_payloads(runtime.storage, 7, utcnow() + timedelta(days=8)) >= 1
    payload = (await runtime.storage.get_operation(ns, op.id)).payload
    assert "text" not in payload and payload["scrubbed"] and payload["result"]["memory_ids"]
    again = await runtime.service.store(ns, f"I live in {secret}.", idempotency_key="r1")
    assert again["cached"] is True
    # the memory itself stays until deleted
    assert [m.value for m in await current_of(runtime.storage, ns, "user", "location")] == [secret]
