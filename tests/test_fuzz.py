"""Property-based fuzzing of the MCP tools and the A2A skills over real HTTP, on SQLite and
(when RECALL_TEST_PG_URL is set) PostgreSQL: whatever the arguments (wrong types, huge numbers,
NaN/Infinity, NUL and other control characters, lone surrogates, unknown keys, oversized
texts), every answer is either a protocol error with a clear code or an envelope whose code is
a clear one, never INTERNAL, never JSON-RPC -32603 and never HTTP 500.

The arguments are drawn from each tool's own `tools/list` schema (so new parameters are fuzzed
without editing this file), mixed with hostile values. The A2A skills take the parameters of
their MCP twins (store_memories: store_memory's; search_memories: search_memories'), sent in a
data part, as message metadata or as a text part.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_testkit.serverproc import ServerProcess

from recall_core.server.mcp.schemas import error_codes

CLEAR_CODES = set(error_codes()) - {"INTERNAL"}
EXAMPLES = int(os.environ.get("RECALL_FUZZ_EXAMPLES", "40"))

HOSTILE = st.one_of(
    st.none(), st.booleans(),
    st.sampled_from([0, -1, 1, 2**31, 2**53, 2**63, 2**64, -(2**63) - 1, 10**30]),
    st.sampled_from([float("nan"), float("inf"), float("-inf"), 1e308, -0.0, 0.5, 1.0000001]),
    st.sampled_from(["", " ", "\x00", "a\x00b", "\x01\x02\x1f\x7f", "\ud800", "x" * 300,
                     "日本語のメモ", "DELETE MY DATA ", "\u202e", "'; DROP TABLE memories; --"]),
    st.text(max_size=40),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


STRINGS = st.one_of(st.text(max_size=60),
                    st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zs", "L"]),
                            min_size=1, max_size=30),
                    st.sampled_from(["tea", "a\x00b", "\ud800x", "\x1b[31mred", "x" * 201,
                                     " padded ", "ÅÉÎØÜ", "🙂" * 10]))


def _valid(schema: dict) -> st.SearchStrategy:
    """Values the schema accepts by type and bounds: they reach the service and storage."""
    options = []
    for s in schema.get("anyOf", [schema]):
        kind = s.get("type")
        if kind == "integer":
            options.append(st.one_of(
                st.integers(min_value=s.get("minimum"), max_value=s.get("maximum")),
                st.sampled_from([v for v in (s.get("minimum"), s.get("maximum"), 2**53 - 1, 2**31 - 1)
                                 if v is not None and s.get("minimum", v) <= v])))
        elif kind == "number":
            options.append(st.floats(min_value=s.get("minimum"), max_value=s.get("maximum"),
                                     allow_nan=False, allow_infinity=False))
        elif kind == "string":
            options.append(STRINGS)
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
    return st.one_of(options) if options else HOSTILE


def _value_for(schema: dict) -> st.SearchStrategy:
    # three in four values are well-typed (they go deep), one in four is anything at all
    return st.sampled_from(range(4)).flatmap(lambda n: HOSTILE if n == 3 else _valid(schema))


def _arguments(schema: dict) -> st.SearchStrategy:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    known = st.fixed_dictionaries({n: _value_for(p) for n, p in props.items() if n in required},
                                  optional={n: _value_for(p) for n, p in props.items()
                                            if n not in required})
    extra = st.sampled_from(range(10)).flatmap(
        lambda n: st.dictionaries(st.sampled_from(["namespace", "zzz"]), HOSTILE, min_size=1,
                                  max_size=1) if n == 7 else st.just({}))
    return st.builds(lambda a, b: {**b, **a}, known, extra)


class RawMCP:
    """JSON-RPC over streamable HTTP, sending exactly the JSON given (NaN and Infinity
    included), as a sloppy client would."""

    def __init__(self, url: str, token: str):
        self.url = url
        self.http = httpx.Client(timeout=60, headers={
            "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}",
            "Content-Type": "application/json"})
        init = self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                           "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "fuzz", "version": "0"}}})
        self.http.headers["mcp-session-id"] = init.headers["mcp-session-id"]
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.next_id = 1
        self.tools = {t["name"]: t for t in self.request("tools/list", {})["result"]["tools"]}

    def _post(self, message: dict) -> httpx.Response:
        body = json.dumps(message, allow_nan=True).encode("utf-8", "surrogatepass")
        return self.http.post(self.url, content=body)

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        r = self._post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert r.status_code != 500 and r.status_code < 500, (r.status_code, r.text[:300])
        assert r.status_code in (200, 400, 413, 422), (r.status_code, r.text[:300])
        return r.json()


def _check(mcp: RawMCP, tool: str, args: dict) -> None:
    reply = mcp.request("tools/call", {"name": tool, "arguments": args})
    if "error" in reply:  # a protocol-level refusal (e.g. NaN is not JSON): clear, not a crash
        assert reply["error"]["code"] in (-32700, -32600, -32602), reply
        return
    result = reply["result"]
    env = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    assert set(env) == {"status", "data", "error", "code"}, env
    assert result.get("isError", False) == (env["status"] == "error"), result
    if env["status"] == "error":
        assert env["code"] in CLEAR_CODES, (tool, args, env)
        assert env["code"] != "INTERNAL" and env["error"]


def _servers():
    yield "sqlite"
    if os.environ.get("RECALL_TEST_PG_URL"):
        yield "postgres"


@pytest.fixture(scope="module", params=list(_servers()))
def fuzz_server(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    schema = None
    if request.param == "sqlite":
        db = str(work / "recall.db")
    else:
        import asyncio

        import asyncpg

        base = os.environ["RECALL_TEST_PG_URL"]
        schema = f"fuzz_{uuid.uuid4().hex[:10]}"

        async def ddl(sql):
            con = await asyncpg.connect(base)
            try:
                await con.execute(sql)
            finally:
                await con.close()
        asyncio.run(ddl(f"CREATE SCHEMA {schema}"))
        db = base + ("&" if "?" in base else "?") + f"search_path={schema},public"
    # embeddings on: odd texts reach the tokenizer and the dense ranker too
    srv = ServerProcess(db, work, env={"RECALL_LIMITS__TOOL_TIMEOUT": "20",
                                       "RECALL_DISABLE_PLUGINS": ""}).start()
    srv.mcp = RawMCP(srv.url, srv.token("fuzzer"))
    # something to find, inspect and delete
    srv.mcp.request("tools/call", {"name": "store_memory",
                                   "arguments": {"text": "I keep my notes in plain text files."}})
    yield srv
    srv.stop()
    if schema is not None:
        asyncio.run(ddl(f"DROP SCHEMA {schema} CASCADE"))


TOOLS = ["store_memory", "search_memories", "inspect_memories", "delete_memory",
         "get_memory_stats", "consolidate_memories", "delete_namespace_data"]


@pytest.mark.parametrize("tool", TOOLS)
def test_no_argument_reaches_an_internal_error(fuzz_server, tool):
    mcp = fuzz_server.mcp
    schema = mcp.tools[tool]["inputSchema"]

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(args=_arguments(schema))
    def run(args):
        _check(mcp, tool, args)

    run()
    assert "Traceback" not in fuzz_server.log(), fuzz_server.log()[-3000:]



# == A2A ===================================================================================
# JSON-RPC codes a client can act on: parse error, invalid request, method not found, invalid
# params, and the A2A-specific ones (task not found, not cancelable, unsupported, ...).
A2A_CLEAR_RPC = {-32700, -32600, -32601, -32602} | set(range(-32099, -32000))
A2A_SKILLS = {"store_memories": "store_memory", "search_memories": "search_memories"}
TASK_STATES_OK = {"TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED"}
TASK_STATES_ERROR = {"TASK_STATE_REJECTED", "TASK_STATE_FAILED"}


class RawA2A:
    """A2A JSON-RPC over HTTP, sending exactly the JSON given (NaN and Infinity included)."""

    def __init__(self, base: str, token: str):
        self.url = base + "/a2a"
        self.http = httpx.Client(timeout=60, headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "A2A-Version": "1.0"})
        self.next_id = 0

    def request(self, method: str, params: Any) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        body = json.dumps(message, allow_nan=True).encode("utf-8", "surrogatepass")
        r = self.http.post(self.url, content=body)
        assert r.status_code < 500, (r.status_code, r.text[:300])
        if r.status_code == 413:  # an oversized text: refused before any task, with a reason
            assert r.json()["error"] == "payload_too_large", r.text[:300]
            return {"error": {"code": -32600, "message": "payload too large"}}
        assert r.status_code == 200, (r.status_code, r.text[:300])
        return r.json()


def _check_rpc_error(reply: dict, context: Any) -> None:
    error = reply["error"]
    assert error["code"] in A2A_CLEAR_RPC, (context, reply)
    assert error.get("message") and "unknown exception" not in error["message"], (context, reply)


def _check_a2a(a2a: RawA2A, method: str, params: Any) -> None:
    reply = a2a.request(method, params)
    if "error" in reply:
        _check_rpc_error(reply, (method, params))
        return
    task = reply["result"].get("task")
    if task is None:  # a message answer or a list: fine as long as it is not an error
        return
    state = task["status"]["state"]
    assert state in TASK_STATES_OK | TASK_STATES_ERROR, (params, task["status"])
    if state in TASK_STATES_ERROR:
        (env,) = [p["data"] for p in task["status"]["message"]["parts"] if "data" in p]
        assert set(env) == {"status", "data", "error", "code"}, env
        assert env["code"] in CLEAR_CODES and env["code"] != "INTERNAL" and env["error"], (
            params, env)


# mostly strings (a text part that is not one is refused by the SDK's parser, not by Recall)
TEXT_PARTS = st.sampled_from(range(6)).flatmap(lambda n: HOSTILE if n == 5 else st.sampled_from(
    ["x" * 70_000, "é" * 40_000, "I use vim.\r\n\t\x0b\x0c", "\u2028\u2029\ufeff"])
    if n == 4 else STRINGS)


def _a2a_message(skill: str, schema: dict) -> st.SearchStrategy:
    """A SendMessage's params: the skill's arguments in a data part, in message metadata, or
    the main text as a text part; sometimes a hostile skill name or part."""
    args = _arguments(schema)
    skill_value = st.one_of(st.just(skill), st.just(skill), st.just(skill), HOSTILE)

    def build(args: dict, skill_name: Any, how: int, text: Any, extra_part: Any) -> dict:
        main = "text" if skill == "store_memories" else "query"
        parts: list[Any] = []
        metadata: dict[str, Any] = {}
        fields = {"skill": skill_name, **args}
        if how == 0:
            parts.append({"data": fields})
        elif how == 1:
            metadata = fields
            parts.append({"text": text})
        else:  # the main text as a text part, the rest in a data part
            fields.pop(main, None)
            parts += [{"text": text}, {"data": fields}]
        if extra_part is not None:
            parts.append(extra_part)
        message = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": parts}
        if metadata:
            message["metadata"] = metadata
        return {"message": message, "configuration": {"returnImmediately": False}}

    extra = st.sampled_from(range(12)).flatmap(lambda n: st.one_of(
        st.builds(lambda v: {"data": v}, HOSTILE), st.builds(lambda v: {"text": v}, HOSTILE),
        HOSTILE) if n == 0 else st.none())
    return st.builds(build, args, skill_value, st.sampled_from(range(3)), TEXT_PARTS, extra)


@pytest.fixture(scope="module")
def a2a_client(fuzz_server):
    return RawA2A(fuzz_server.base, fuzz_server.token("a2a-fuzzer"))


@pytest.mark.parametrize("skill", sorted(A2A_SKILLS))
def test_no_a2a_skill_argument_reaches_an_internal_error(fuzz_server, a2a_client, skill):
    schema = fuzz_server.mcp.tools[A2A_SKILLS[skill]]["inputSchema"]

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(params=_a2a_message(skill, schema))
    def run(params):
        _check_a2a(a2a_client, "SendMessage", params)

    run()
    assert "Traceback" not in fuzz_server.log(), fuzz_server.log()[-3000:]


ID_LIKE = st.one_of(STRINGS, HOSTILE)
TASK_PARAMS = {
    "GetTask": st.fixed_dictionaries({"id": ID_LIKE}, optional={"historyLength": HOSTILE}),
    "CancelTask": st.fixed_dictionaries({"id": ID_LIKE}),
    "ListTasks": st.fixed_dictionaries({}, optional={
        "contextId": ID_LIKE, "status": st.one_of(HOSTILE, st.sampled_from(
            ["TASK_STATE_COMPLETED", "TASK_STATE_REJECTED", "TASK_STATE_NOPE"])),
        "pageSize": HOSTILE, "pageToken": st.one_of(ID_LIKE, st.sampled_from([
            "eyJ0cyI6bnVsbCwiaWQiOiJ4In0", "eyJ0cyI6MSwiaWQiOiJcdTAwMDAifQ",
            "eyJ0cyI6MWUzMDAsImlkIjoieCJ9", "eyJ0cyI6OTk5OTk5OTk5OTk5OTk5OTk5OTk5OSwiaWQiOiJ4In0"])),
        "statusTimestampAfter": st.one_of(HOSTILE, st.sampled_from(
            ["1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"])),
        "historyLength": HOSTILE, "includeArtifacts": HOSTILE}),
}


@pytest.mark.parametrize("method", sorted(TASK_PARAMS))
def test_no_a2a_task_request_reaches_an_internal_error(fuzz_server, a2a_client, method):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(params=TASK_PARAMS[method])
    def run(params):
        reply = a2a_client.request(method, params)
        if "error" in reply:
            _check_rpc_error(reply, (method, params))

    run()
    assert "Traceback" not in fuzz_server.log(), fuzz_server.log()[-3000:]
