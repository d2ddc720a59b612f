"""Property-based fuzzing of the MCP tools over real HTTP, on SQLite and (when
RECALL_TEST_PG_URL is set) PostgreSQL: whatever the arguments (wrong types, huge numbers,
NaN/Infinity, NUL and other control characters, lone surrogates, unknown keys), every answer is
HTTP 200 with either a JSON-RPC protocol error or a tool envelope whose code is a clear one,
never INTERNAL and never HTTP 500.

The arguments are drawn from each tool's own `tools/list` schema (so new parameters are fuzzed
without editing this file), mixed with hostile values.
"""

from __future__ import annotations

import json
import os
import uuid

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serverproc import ServerProcess

from recall_core.tool_models import error_codes

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
