"""The admin API against its own OpenAPI document with schemathesis (property-based): every
operation, with valid and invalid inputs, over real HTTP. Nothing may answer 5xx, every answer
must match the documented status codes, content types and response schemas, and bad input
gets a 4xx with a body that says what was wrong."""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from recall_testkit.serverproc import ServerProcess, recall_cli


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    work = tmp_path_factory.mktemp("schema")
    server = ServerProcess(str(work / "recall.db"), work).start()
    token = json.loads(recall_cli("create-token", "--admin", "--db", server.db, "--json",
                                  env=server.env).stdout)["token"]
    server.admin_token = token
    recall_cli("create-token", "alice", "--db", server.db, env=server.env)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin_schema(srv):
    loaded = schemathesis.openapi.from_url(srv.base + "/admin/openapi.json")

    @loaded.auth()
    class AdminToken:  # applied after generation, so schemathesis knows the header is ours
        def get(self, case, context):
            return srv.admin_token

        def set(self, case, data, context):
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}

    return loaded


schema = schemathesis.pytest.from_fixture("admin_schema")


@schema.parametrize()
@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@pytest.mark.slow
def test_admin_api_conforms(case, srv):
    excluded = []
    if case.operation.path.endswith("/erase"):
        # A schema cannot say "confirm equals the path's namespace": a random confirm is
        # schema-valid yet rightly refused (400 CONFIRM_REQUIRED).
        excluded.append(schemathesis.checks.positive_data_acceptance)
    if case.operation.path.endswith("/import"):
        # Nor the import's "what can be stored" rules: no NUL or lone surrogate in any string
        # (kit.representable, 400), times within what both backends store (422). Which
        # examples hit them depends on the whole document: adding the OAuth grant routes
        # made the derandomized generator find both. Responses are still validated.
        excluded.append(schemathesis.checks.positive_data_acceptance)
    if case.operation.path.endswith("/webhooks") and case.method.upper() == "POST":
        # Nor "the URL's host resolves to a public address" (checked after DNS, 400 naming
        # allow_private_targets): "http://0" is a schema-valid URL. The schema does say
        # http(s) with a host and which event names exist; responses are still validated.
        excluded.append(schemathesis.checks.positive_data_acceptance)
    response = case.call_and_validate(base_url=srv.base + "/admin", excluded_checks=excluded)
    if 400 <= response.status_code < 500:
        body = response.json()
        assert body.get("error") or body.get("detail"), response.text
