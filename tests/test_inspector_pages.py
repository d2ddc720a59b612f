"""The inspector's page handlers called alone: each is a module-level `async (request, ctx)`
function, so a test gives it a Context over stand-in services (no server, no storage)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from starlette.requests import Request

from recall_core.access.principal import Principal as Caller
from recall_core.server.inspector import admin_pages, pages
from recall_core.server.inspector.access import Context
from recall_core.server.inspector.session import Principal

pytestmark = pytest.mark.asyncio


def request(method: str = "GET", path: str = "/", query: bytes = b"", **path_params: str) -> Request:
    return Request({"type": "http", "method": method, "path": path, "query_string": query,
                    "headers": [], "path_params": path_params})


def context(service: Any = None, admin: Any = None, *, is_admin: bool = False,
            namespace: str = "alice", form: dict[str, Any] | None = None) -> Context:
    inspector = SimpleNamespace(runtime=SimpleNamespace(service=service), admin=admin,
                                storage=None, public_url=None)
    principal = Principal(session="s-x", kind="admin" if is_admin else "namespace",
                          name="root" if is_admin else namespace)
    return Context(inspector, principal, namespace, form or {})


async def test_forgetting_a_fact_says_how_many_versions_went():
    calls = []

    class Service:
        async def delete(self, namespace: str, memory_id: str) -> dict[str, Any]:
            calls.append((namespace, memory_id))
            return {"deleted": memory_id, "forgotten_ids": [memory_id, "older", "oldest"]}

    response = await pages.forget(request("POST", id="m1"), context(Service()))
    # The service acts for the session's holder: the owner of "alice" (an agent's session
    # would carry its agent).
    assert calls == [(Caller("alice"), "m1")]
    assert response.status_code == 303
    assert response.headers["location"] == (
        "/ui/memories?flash=Memory+forgotten+with+its+history+%283+versions%29.")


async def test_an_admin_is_sent_back_to_the_namespace_it_was_looking_at():
    class Admin:
        async def retry_job(self, actor: str, job_id: str, namespace: str) -> dict[str, Any]:
            assert (actor, job_id, namespace) == ("admin:root", "j1", "bob")
            return {"retried": job_id}

    response = await pages.retry(request("POST", id="j1"),
                                 context(admin=Admin(), is_admin=True, namespace="bob"))
    assert response.headers["location"] == "/ui/queue?ns=bob&flash=Job+queued+again."


async def test_revoking_a_token_names_it():
    class Admin:
        async def revoke_token(self, actor: str, namespace: str, tid: str) -> dict[str, Any]:
            return {"revoked": tid}

    ctx = context(admin=Admin(), is_admin=True, namespace="bob", form={"token_id": "abcd"})
    response = await admin_pages.revoke_token(request("POST"), ctx)
    assert response.headers["location"] == (
        "/ui/admin/namespace?ns=bob&flash=Token+abcd+revoked.")
