"""One rule for representable values: whatever an entry accepts (an MCP tool, an A2A skill,
the admin API's import), both backends store and read back, everywhere it is read: the tools
(inspect, search, stats), the admin API (the job list, one namespace's and everyone's, and the
export), and the inspector (memories, each memory's page, search, the queue). The rest is
refused at the entry with INVALID_PARAM (the admin API: 422 from its schema or 400), and then
nothing is stored. `kit/representable.py` is the rule.

The edges tried: dates (Python's years 1..9999 against PostgreSQL's timestamptz, whose
asyncpg codec turns the first and last Python instant into -infinity/infinity; offsets that
push a time past a bound once in UTC; naive and aware), numbers (beyond int64, beyond a
double, NaN/Infinity, -0, subnormals), strings (NUL, which PostgreSQL text refuses; lone
surrogates, which UTF-8 cannot encode; lengths an index cannot hold) and JSON (nesting depth,
integers beyond 2^53, numbers beyond a double such as 1e400, which Python reads as Infinity).

Every named edge (`KINDS`, 277 of them then) runs on SQLite and, with RECALL_TEST_PG_URL, on
PostgreSQL, then hypothesis draws more around them. Before the rule (main at 651dd15, with the
inspector's empty-search fix d497462) the survey found, on PostgreSQL, 28 kinds accepted and
then unreadable (a year-1 first instant in any time an entry takes: 16 imported rows that made
the namespace unreadable and its export truncated, 12 stores/A2A stores/extracting imports that
answered INTERNAL yet left a job that broke the worker and the job lists) and 34 more answered
500/INTERNAL at the entry (NUL and lone surrogates in import lines, NaN and +-1e400 in import
numbers and A2A metadata, nesting beyond Python's parser); on SQLite 0 accepted-and-unreadable
and 28 entry failures. After: 0 and 0 on both (bench/RESULTS.md, "Representable values").
`python tests/test_representable.py [sqlite|postgres] [name filter]` prints the survey.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import string
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_testkit.inspector import admin_token, backends, database, start_server
from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("RECALL_FUZZ_EXAMPLES", "25"))
TEXT = "I prefer green tea over coffee."


def raw(source: str) -> str:
    """A JSON literal sent exactly as written (1e400, '"\\ud800"' with its quotes)."""
    return f"@@raw:{source}@@"


def dumps(body: Any) -> bytes:
    text = json.dumps(body, allow_nan=True)
    text = re.sub(r'"@@raw:(.*?)@@"', lambda m: json.loads(f'"{m.group(1)}"'), text)
    return text.encode("utf-8", "surrogatepass")


def nested(depth: int) -> str:
    """`depth` nested objects, as raw JSON (too deep for Python's own encoder)."""
    return raw('{"a":' * depth + "1" + "}" * depth)


@dataclass
class Kind:
    """One edge value sent through one entry: `entry` is store (MCP store_memory), search
    (MCP search_memories), a2a (A2A store_memories), import / import-extract (admin API)."""
    name: str
    entry: str
    fields: dict[str, Any]


DATES = {
    "year 1, first instant": "0001-01-01T00:00:00Z",
    "year 1, first instant as a bare date": "0001-01-01",
    "year 1 with an offset, first instant in UTC": "0001-01-01T05:00:00+05:00",
    "year 1, naive": "0001-01-01T00:00:00",
    "year 1, one microsecond in": "0001-01-01T00:00:00.000001Z",
    "year 1, an offset before year 1 in UTC": "0001-01-01T00:00:00+05:00",
    "year 9999, last instant": "9999-12-31T23:59:59.999999Z",
    "year 9999, last instant with an offset": "9999-12-31T18:59:59.999999-05:00",
    "year 9999, an offset past 9999 in UTC": "9999-12-31T23:00:00-05:00",
    "year 9999 as a bare date": "9999-12-31",
    "year 9000": "9000-06-01T00:00:00Z",
    "1970 epoch": "1970-01-01T00:00:00Z",
    "before the epoch": "1969-12-31T23:59:59Z",
    "offset of a day": "2020-01-01T00:00:00+23:59",
}
STRINGS = {
    "NUL": "tea\x00coffee",
    "lone surrogate": raw('"tea \\ud800 coffee"'),
    "lone low surrogate": raw('"\\udfff"'),
    "C0 controls": "tea\x01\x1f\x7f",
    "10k characters": "t" * 10_000,
    "3k four-byte characters": "\U0001f375" * 3_000,
    # a btree entry holds 2704 bytes after compression: repeated letters compress, these not
    "3k random letters": "".join(random.Random(28).choices(string.ascii_letters, k=3000)),
}
NUMBERS = {
    "-0": -0.0, "subnormal": 5e-324, "smallest normal": 2.2250738585072014e-308,
    "1e400 (Infinity in Python)": raw("1e400"), "-1e400": raw("-1e400"),
    "NaN": raw("NaN"), "2^63": 2**63, "2^64": 2**64, "-2^63-1": -(2**63) - 1,
    "2^53+1": 2**53 + 1, "10^30": 10**30,
}


def _kinds() -> list[Kind]:
    kinds: list[Kind] = []
    for label, value in DATES.items():
        kinds.append(Kind(f"store created_at {label}", "store", {"created_at": value}))
        kinds.append(Kind(f"search as_of {label}", "search", {"as_of": value}))
        kinds.append(Kind(f"a2a created_at {label}", "a2a", {"created_at": value}))
        for name in ("created_at", "valid_from", "last_accessed_at"):
            extra = {"valid_from": "2020-01-01T00:00:00Z"} if name == "last_accessed_at" else {}
            kinds.append(Kind(f"import {name} {label}", "import", {**extra, name: value}))
        kinds.append(Kind(f"import valid_until {label}", "import",
                          {"valid_from": "0001-01-02T00:00:00Z", "valid_until": value}))
        kinds.append(Kind(f"import-extract created_at {label}", "import-extract",
                          {"created_at": value}))
    for label, value in STRINGS.items():
        for name in ("text", "topic", "session_id", "agent_id"):
            text = {"text": value} if name == "text" else {name: value}
            kinds.append(Kind(f"store {name} {label}", "store", text))
            kinds.append(Kind(f"a2a {name} {label}", "a2a", text))
        for name in ("text", "topic", "entity", "attribute", "value", "session_id", "agent_id",
                     "id"):
            fields = {name: value}
            if name in ("entity", "attribute", "value"):
                fields = {"entity": "user", "attribute": "drink", "value": "tea", name: value}
            kinds.append(Kind(f"import {name} {label}", "import", fields))
        kinds.append(Kind(f"search query {label}", "search", {"query": value}))
    for label, value in NUMBERS.items():
        for name in ("importance", "base_importance", "access_count"):
            extra = {"valid_from": "2020-01-01T00:00:00Z"} if name != "importance" else {}
            kinds.append(Kind(f"import {name} {label}", "import", {**extra, name: value}))
        kinds.append(Kind(f"a2a metadata number {label}", "a2a", {"meta": {"n": value}}))
        kinds.append(Kind(f"search max_tokens {label}", "search", {"max_tokens": value}))
    # long keys and values an extractor reads out of an accepted text (indexed on Postgres)
    long_word = "x" * 3000
    for label, said in (("a long fact key", f"My favourite {long_word} is green tea."),
                        ("a long fact value", f"I prefer {long_word} tea."),
                        ("a long subject", f"{long_word} prefers green tea.")):
        kinds.append(Kind(f"store text with {label}", "store", {"text": said}))
        kinds.append(Kind(f"import-extract text with {label}", "import-extract", {"text": said}))
    for depth in (100, 2000):
        kinds.append(Kind(f"a2a metadata nested {depth} deep", "a2a", {"meta": nested(depth)}))
    return kinds


KINDS = _kinds()


# == the server and its clients ===========================================================
class Clients:
    """A running server and an admin's ways in: the admin API and a signed-in inspector."""

    def __init__(self, srv: ServerProcess):
        self.srv = srv
        token = admin_token(srv)
        self.admin = httpx.Client(base_url=srv.base + "/admin", timeout=60,
                                  headers={"Authorization": f"Bearer {token}"})
        self.ui = httpx.Client(base_url=srv.base + "/ui", timeout=60)
        signin = self.ui.post("/signin", data={"token": token})
        assert signin.status_code == 303, signin.text[:300]
        cookie = signin.headers["set-cookie"].split(";", 1)[0]
        name, value = cookie.split("=", 1)
        self.ui.cookies.set(name, value.strip('"'), domain="127.0.0.1", path="/ui")

    def token(self, namespace: str) -> str:
        r = self.admin.post(f"/namespaces/{namespace}/tokens")
        assert r.status_code == 201, r.text[:300]
        return r.json()["token"]

    def close(self) -> None:
        self.admin.close()
        self.ui.close()


def _refused_mcp(env: dict[str, Any]) -> bool | None:
    """True: refused clearly; False: accepted; None: an unclear failure."""
    if env["status"] == "ok":
        return False
    return True if env["code"] in ("INVALID_PARAM", "TEXT_TOO_LARGE") else None


async def _mcp(url: str, token: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """One tools/call with the arguments as raw JSON (for 1e400 and lone surrogates)."""
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}",
               "Content-Type": "application/json"}
    async with httpx.AsyncClient(timeout=60, headers=headers) as http:
        init = await http.post(url, content=dumps({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "edges", "version": "0"}}}))
        http.headers["mcp-session-id"] = init.headers["mcp-session-id"]
        await http.post(url, content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        r = await http.post(url, content=dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                "params": {"name": tool, "arguments": args}}))
        if r.status_code >= 500:
            return {"status": "error", "code": f"HTTP {r.status_code}", "error": r.text[:200],
                    "data": None}
        text = r.text
        if text.startswith("event:") or "\ndata:" in text or text.startswith("data:"):
            text = [ln[5:] for ln in text.splitlines() if ln.startswith("data:")][-1]
        reply = json.loads(text)
        if "error" in reply:  # a protocol-level refusal: clear when it is invalid params
            code = "INVALID_PARAM" if reply["error"]["code"] in (-32700, -32602) else "RPC"
            return {"status": "error", "code": code, "error": reply["error"]["message"],
                    "data": None}
        result = reply["result"]
        return result.get("structuredContent") or json.loads(result["content"][0]["text"])


def _a2a(base: str, token: str, fields: dict[str, Any]) -> bool | None:
    """A2A store_memories with `fields` in a data part (`meta` as message metadata)."""
    meta = fields.pop("meta", None)
    data = {"skill": "store_memories", "text": TEXT, **fields}
    message: dict[str, Any] = {"role": "ROLE_USER", "messageId": str(uuid.uuid4()),
                               "parts": [{"data": data}]}
    if meta is not None:
        message["metadata"] = meta
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": message, "configuration": {"returnImmediately": False}}}
    r = httpx.post(base + "/a2a", content=dumps(body), timeout=60, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "A2A-Version": "1.0"})
    if r.status_code >= 500:
        return None
    if r.status_code in (400, 413):
        return True
    reply = r.json()
    if "error" in reply:
        return True if reply["error"]["code"] in (-32602, -32600, -32700) else None
    task = reply["result"]["task"]
    state = task["status"]["state"]
    if state == "TASK_STATE_REJECTED":
        (env,) = [p["data"] for p in task["status"]["message"]["parts"] if "data" in p]
        return True if env["code"] in ("INVALID_PARAM", "TEXT_TOO_LARGE") else None
    return False if state in ("TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED") else None


def _import(c: Clients, namespace: str, fields: dict[str, Any], mode: str) -> bool | None:
    line = {"text": TEXT, **fields}
    r = c.admin.post(f"/namespaces/{namespace}/import", content=dumps(
        {"mode": mode, "memories": [line]}), headers={"Content-Type": "application/json"})
    if r.status_code in (400, 422):
        return True
    return False if r.status_code == 200 else None


async def _send(c: Clients, kind: Kind, namespace: str, token: str) -> bool | None:
    """Send one edge: True refused clearly, False accepted, None an unclear failure."""
    fields = json.loads(json.dumps(kind.fields))  # a copy (nested dicts too)
    if kind.entry == "store":
        return _refused_mcp(await _mcp(c.srv.url, token, "store_memory",
                                       {"text": TEXT, **fields}))
    if kind.entry == "search":
        await _mcp(c.srv.url, token, "store_memory", {"text": TEXT})
        return _refused_mcp(await _mcp(c.srv.url, token, "search_memories",
                                       {"query": "tea", **fields}))
    if kind.entry == "a2a":
        return _a2a(c.srv.base, token, fields)
    return _import(c, namespace, fields, "extract" if kind.entry == "import-extract" else "verbatim")


async def unreadable(c: Clients, namespace: str, token: str) -> list[str]:
    """Where the namespace (or everyone's view of the queue) cannot be read."""
    bad: list[str] = []
    try:
        listed = await _tools(c, token, bad)
    except Exception as exc:  # noqa: BLE001 - the MCP session itself broke: say so
        bad.append(f"tools: {type(exc).__name__}: {exc}"[:200])
        listed = {"status": "error"}
    ids = [m["id"] for m in listed["data"]["memories"]] if listed["status"] == "ok" else []
    for status in ("done", "failed", "queued"):
        for params in ({"namespace": namespace, "status": status}, {"status": status, "limit": 200}):
            _get(c.admin, "/jobs", params, bad, f"admin jobs {params}")
    export = _get(c.admin, f"/namespaces/{namespace}/export", {}, bad, "export")
    if export is not None:
        try:
            lines = [json.loads(ln) for ln in export.text.splitlines() if ln.strip()]
            if len({ln["id"] for ln in lines} & set(ids)) != len(ids):
                bad.append(f"export: {len(lines)} lines for {len(ids)} memories")
        except ValueError:
            bad.append("export: truncated or not JSON lines")
    pages = [("/memories", {"ns": namespace}), ("/search", {"ns": namespace, "query": "tea"}),
             ("/queue", {"ns": namespace}), *((f"/memories/{i}", {"ns": namespace}) for i in ids)]
    for path, params in pages:
        _get(c.ui, path, params, bad, f"inspector {path}")
    return bad


async def _tools(c: Clients, token: str, bad: list[str]) -> dict[str, Any]:
    """Stats (the jobs done, none failed), inspect and search; inspect's answer."""
    async with Agent(c.srv.url, token) as agent:
        deadline = time.monotonic() + 20
        while True:
            stats = await agent.call("get_memory_stats")
            if stats["status"] != "ok":
                bad.append(f"stats {stats['code']}")
                break
            if stats["data"]["pending_extractions"] == 0:
                if stats["data"]["failed_extractions"]:
                    bad.append(f"job failed: {stats['data'].get('recent_failures')}"[:200])
                break
            if time.monotonic() > deadline:
                bad.append("job still pending after 20 s")
                break
            await asyncio.sleep(0.1)
        listed = await agent.call("inspect_memories", limit=50)
        if listed["status"] != "ok":
            bad.append(f"inspect_memories {listed['code']}")
        found = await agent.call("search_memories", query="tea")
        if found["status"] != "ok":
            bad.append(f"search_memories {found['code']}")
    return listed


def _get(http: httpx.Client, path: str, params: dict[str, Any], bad: list[str],
         what: str) -> httpx.Response | None:
    """GET that must answer 200; otherwise the failure is added to `bad`."""
    try:
        r = http.get(path, params=params)
    except httpx.HTTPError as exc:  # a 500 the server answered by closing the connection
        bad.append(f"{what}: {type(exc).__name__}")
        return None
    if r.status_code != 200:
        bad.append(f"{what}: {r.status_code}")
        return None
    return r


async def check(c: Clients, kind: Kind) -> tuple[str, list[str]]:
    """("refused" | "accepted" | "unclear", where it is unreadable)."""
    namespace = "edge-" + uuid.uuid4().hex[:10]
    token = c.token(namespace)
    try:
        outcome = await _send(c, kind, namespace, token)
    except httpx.HTTPError as exc:
        return "unclear", [f"the entry broke the connection ({type(exc).__name__})"]
    problems = await unreadable(c, namespace, token)
    if outcome is None:
        problems.insert(0, "the entry answered neither ok nor INVALID_PARAM")
    return {True: "refused", False: "accepted", None: "unclear"}[outcome], problems


# == tests ================================================================================
@pytest.fixture(scope="module", params=backends())
def clients(request, tmp_path_factory):
    work = tmp_path_factory.mktemp(f"edges-{request.param}")
    db, cleanup = database(request.param, work)
    srv = start_server(work, db)
    c = Clients(srv)
    yield c
    c.close()
    srv.stop()
    cleanup()


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
async def test_an_edge_value_is_refused_or_readable_everywhere(clients, kind):
    outcome, problems = await check(clients, kind)
    assert not problems, (kind.name, outcome, problems, clients.srv.log()[-2000:])


async def test_a_refusal_names_the_range_and_what_to_send(clients):
    token = clients.token("edge-words")
    said = await _mcp(clients.srv.url, token, "store_memory",
                      {"text": TEXT, "created_at": "0001-01-01T05:00:00+05:00"})
    assert said["code"] == "INVALID_PARAM", said
    assert "from 0001-01-02T00:00:00Z to 9999-12-30T23:59:59Z" in said["error"], said
    assert "omit created_at" in said["error"], said
    r = clients.admin.post("/namespaces/edge-words/import", content=dumps(
        {"memories": [{"text": TEXT, "importance": raw("1e400")}]}),
        headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json() == {
        "code": "INVALID_PARAM", "error": "body.memories[0].importance is Infinity, which is "
        "not a JSON number. Send a finite number, or omit the field."}, r.text
    r = clients.admin.post("/namespaces/edge-words/import", json={"memories": [
        {"text": TEXT, "valid_from": "9999-12-31T23:59:59Z"}]})
    assert r.status_code == 422 and "0001-01-02T00:00:00Z to 9999-12-30" in r.text, r.text
    r = clients.admin.post("/namespaces/edge-words/import", json={"memories": [
        {"text": TEXT, "entity": "e" * 201, "attribute": "a", "value": "v"}]})
    assert r.status_code == 422 and "entity is 201 characters; at most 200" in r.text, r.text
    async with Agent(clients.srv.url, token) as agent:
        assert (await agent.ok("inspect_memories"))["total"] == 0  # nothing was stored


async def test_rows_an_older_version_stored_at_the_edges_stay_readable(clients):
    """Before the rule, Postgres could hold -infinity/infinity (what asyncpg writes for
    Python's first and last instants) in a memory's times and a queued job's created_at: the
    worker failed at every claim and the namespace's pages answered 500. Such rows are read
    as those instants, in UTC: the job is done and the namespace reads everywhere. (SQLite
    keeps times as ISO text and reads every time an older version stored: nothing to repair,
    as the survey of the kinds shows.)"""
    if not clients.srv.db.startswith("postgres"):
        pytest.skip("SQLite stores no time it cannot read back (the kinds above pass on it)")
    import asyncpg

    namespace = "old-" + uuid.uuid4().hex[:10]
    token = clients.token(namespace)
    assert _refused_mcp(await _mcp(clients.srv.url, token, "store_memory", {"text": TEXT})) is False
    assert await unreadable(clients, namespace, token) == []
    con = await asyncpg.connect(clients.srv.db)
    try:
        await con.execute("UPDATE memories SET created_at = '-infinity', valid_from = "
                          "'-infinity', last_accessed_at = 'infinity' WHERE namespace = $1",
                          namespace)
        await con.execute(
            "INSERT INTO operations (id, namespace, idempotency_key, kind, status, payload, "
            "created_at) VALUES ($1, $2, $1, 'extract', 'queued', $3::jsonb, '-infinity')",
            uuid.uuid4().hex, namespace, json.dumps({"text": "My name is Ada.", "topic": ""}))
    finally:
        await con.close()
    assert await unreadable(clients, namespace, token) == []
    async with Agent(clients.srv.url, token) as agent:
        texts = {m["text"] for m in (await agent.ok("inspect_memories"))["memories"]}
    assert TEXT in texts and any("Ada" in t for t in texts), texts


@pytest.fixture(scope="module", params=backends())
def literal_clients(request, tmp_path_factory):
    """A server whose extractor answers what the text spells out (as a model could)."""
    work = tmp_path_factory.mktemp(f"edges-literal-{request.param}")
    db, cleanup = database(request.param, work)
    srv = ServerProcess(db, work, env={
        "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.literal_extractor",
        "RECALL_EXTRACTOR": "literal"}).start()
    c = Clients(srv)
    yield c
    c.close()
    srv.stop()
    cleanup()


async def test_what_an_extractor_answers_at_the_edges_is_stored_and_readable(literal_clients):
    """A model's answer is not an entry a caller can be refused at: a key beyond what a
    Postgres index holds (2704 bytes; random letters do not compress), a NUL or a lone
    surrogate from a JSON escape. The memory is kept (its text repaired: NUL removed, a lone
    surrogate made U+FFFD; a NUL in a fact value is removed by the key spelling rule) and a key
    or value that cannot be stored is dropped, never a failed job, on both backends."""
    rng = random.Random(28)
    word = "".join(rng.choice(string.ascii_letters) for _ in range(3000))
    answers = [
        [{"text": "A long subject.", "entity": word, "attribute": "drink", "value": "tea"}],
        [{"text": "A long attribute.", "entity": "user", "attribute": word, "value": "tea"}],
        [{"text": "A long value.", "entity": "user", "attribute": "drink", "value": word}],
        [{"text": "A NUL in the value.", "entity": "user", "attribute": "editor",
          "value": "vi\u0000m"}],
        [{"text": "A NUL \u0000 and a lone surrogate \ud800 in the text."}],
    ]
    c = literal_clients
    namespace = "edge-" + uuid.uuid4().hex[:10]
    token = c.token(namespace)
    for answer in answers:  # the text is JSON whose escapes the extractor decodes
        text = json.dumps(answer)
        assert _refused_mcp(await _mcp(c.srv.url, token, "store_memory", {"text": text})) is False
    assert await unreadable(c, namespace, token) == []
    async with Agent(c.srv.url, token) as agent:
        memories = (await agent.ok("inspect_memories"))["memories"]
    texts = {m["text"]: m for m in memories}
    assert len(memories) == len(answers), texts
    assert "A NUL  and a lone surrogate \ufffd in the text." in texts, texts
    assert all(m.get("entity") is None for m in memories if m["text"].startswith("A long")), texts
    # The fact key's spelling rule (kit/keys) removes invisible and control characters, NUL
    # among them, before the storable check: the value is repaired, as the text is.
    assert texts["A NUL in the value."].get("value") == "vim", texts


# Around the named edges: dates near the bounds at any offset, any float, any string.
OFFSETS = st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59)
EDGE_DATES = st.builds(
    lambda year, day, secs, off, micro: (
        f"{year:04d}-{'01-01' if day else '12-31'}T{secs // 3600:02d}:{secs // 60 % 60:02d}:"
        f"{secs % 60:02d}.{micro:06d}{'+' if off >= 0 else '-'}{abs(off) // 60:02d}:{abs(off) % 60:02d}"),
    st.sampled_from([1, 2, 9998, 9999]), st.booleans(), st.integers(0, 86399),
    OFFSETS, st.sampled_from([0, 1, 999999]))
DRAWN = st.one_of(
    st.builds(lambda d, n: Kind(f"import {n} {d}", "import",
                                {"valid_from": "2020-01-01T00:00:00Z", n: d}),
              EDGE_DATES, st.sampled_from(["created_at", "valid_from", "last_accessed_at"])),
    st.builds(lambda d: Kind(f"store created_at {d}", "store", {"created_at": d}), EDGE_DATES),
    st.builds(lambda d: Kind(f"a2a created_at {d}", "a2a", {"created_at": d}), EDGE_DATES),
    st.builds(lambda x: Kind(f"import importance {x!r}", "import", {"importance": x}),
              st.floats(min_value=0, max_value=1)),
    st.builds(lambda s, n: Kind(f"import {n} {s!r}"[:80], "import", {n: s}),
              st.text(min_size=1, max_size=30).filter(str.strip),
              st.sampled_from(["text", "topic", "session_id", "entity"])),
    st.builds(lambda s: Kind(f"store text {s!r}"[:80], "store", {"text": s}),
              st.text(min_size=1, max_size=30).filter(str.strip)),
)


async def test_values_around_the_edges_are_refused_or_readable(clients):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(kind=DRAWN)
    def run(kind: Kind) -> None:
        outcome, problems = asyncio.run(check(clients, kind))
        assert not problems, (kind.name, outcome, problems)

    await asyncio.to_thread(run)


# == the survey (before/after figures) ====================================================
def survey(backend: str, only: str = "") -> list[tuple[str, str, list[str]]]:
    """Every kind, on a fresh server after each failure (a broken row can break the queue or
    the shared pages, which would blame the kinds after it)."""
    import tempfile

    failures = []
    work = Path(tempfile.mkdtemp(prefix=f"edges-{backend}-"))
    c = None
    cleanup = lambda: None  # noqa: E731
    try:
        for kind in KINDS:
            if only not in kind.name:
                continue
            if c is None:
                db, cleanup = database(backend, Path(tempfile.mkdtemp(dir=work)))
                c = Clients(start_server(work, db))
            outcome, problems = asyncio.run(check(c, kind))
            print(f"{'FAIL' if problems else 'ok  '} {outcome:8} {kind.name}: {problems}",
                  flush=True)
            if problems:
                failures.append((kind.name, outcome, problems))
                c.close()
                c.srv.stop()
                cleanup()
                c = None
    finally:
        if c is not None:
            c.close()
            c.srv.stop()
            cleanup()
    return failures


if __name__ == "__main__":
    backend_names = sys.argv[1:2] or backends()
    for backend in backend_names:
        found = survey(backend, " ".join(sys.argv[2:]))
        print(f"{backend}: {len(found)} kinds failed (accepted-and-unreadable, or an entry "
              f"answering neither ok nor INVALID_PARAM)")
