"""Throughput of `recall serve --workers 1` against `--workers 2`, side by side in one run.

Both servers run at once on one database (a fresh SQLite file, or a fresh Postgres database
with --postgres) holding --memories synthetic memories (bench/speed.py's corpus, loaded
with `recall import --no-embed`; BM25 only unless --hybrid). The load generator is `wrk`
(apt-get install wrk: C, one thread, so it takes little of a 2-core machine) sending the
stateless MCP 2026-07-28 request by hand (NOTES.md "MCP 2026-07-28"): `search_memories`
with 50 queries in rotation, and `get_memory_stats`. Every body is checked once with curl
first (an envelope with status ok), and wrk counts non-2xx answers.

The machine is shared: each round measures workers 1 then workers 2 for --seconds each,
for each call, and the rounds repeat (--rounds), so both sides see the same load; the load
average is printed beside every figure and the ratio is taken per round.

    python bench/workers.py                         # SQLite, 10k memories, 3 rounds x 10 s
    python bench/workers.py --postgres postgresql://postgres@127.0.0.1:5432/postgres
    python bench/workers.py --memories 2000 --rounds 1 --seconds 5      # smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "testkit"))

import speed  # noqa: E402  (the corpus, queries and helpers)
from recall_testkit.serverproc import ServerProcess, token_in_process  # noqa: E402

NS = "bench"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "wrk", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def body(tool: str, arguments: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments, "_meta": META}})


def lua(token: str, tool: str, bodies: list[str]) -> str:
    """A wrk script: POST /mcp with the stateless headers, bodies in rotation."""
    quoted = ",\n".join("[==[" + b + "]==]" for b in bodies)
    return f"""
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer {token}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "{tool}"
local bodies = {{ {quoted} }}
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, "/mcp", nil, bodies[i])
end
"""


def check(srv: ServerProcess, token: str, tool: str, one: str) -> None:
    out = subprocess.run(["curl", "-s", "-X", "POST", srv.url, "-H", f"Authorization: Bearer {token}",
                          "-H", "Content-Type: application/json",
                          "-H", "Accept: application/json, text/event-stream",
                          "-H", "MCP-Protocol-Version: 2026-07-28", "-H", "Mcp-Method: tools/call",
                          "-H", f"Mcp-Name: {tool}", "-d", one], capture_output=True, text=True)
    env = json.loads(out.stdout)["result"]["structuredContent"]
    assert env["status"] == "ok", env


def wrk(srv: ServerProcess, script: Path, seconds: int, connections: int) -> dict:
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency",
                          "-s", str(script), srv.url], capture_output=True, text=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: (.*)", out)
    p50 = re.search(r"50%\s+([\d.]+\w+)", out)
    return {"rate": rate, "non2xx": int(errors.group(1)) if errors else 0,
            "socket_errors": sock.group(1) if sock else "", "p50": p50.group(1) if p50 else "?",
            "load": speed.loadavg()}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--postgres", metavar="ADMIN_URL")
    ap.add_argument("--hybrid", action="store_true", help="load the embeddings plugin too")
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed: apt-get install wrk")
    work = Path(tempfile.mkdtemp(prefix="recall-bench-workers-"))
    pg_name = None
    if a.postgres:
        pg_name = await speed.pg_create(a.postgres)
        db = speed.pg_with_db(a.postgres, pg_name)
    else:
        db = str(work / "r.db")
    servers: dict[int, ServerProcess] = {}
    try:
        jsonl = work / "corpus.jsonl"
        speed.write_jsonl(jsonl, speed.corpus(a.memories))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "recall_core.cli", "import", str(jsonl),
                        "--namespace", NS, "--db", db, "--create", "--no-embed", "--quiet"],
                       check=True, capture_output=True,
                       # without the embeddings plugin: --no-embed needs no model, and with
                       # it loaded this CLI aborted at exit ("terminate called ...") here
                       env={**os.environ, "RECALL_DISABLE_PLUGINS": "embeddings"})
        print(f"imported {a.memories} memories in {time.perf_counter() - t0:.1f} s", flush=True)
        env = {"RECALL_DECAY__INTERVAL": "0"}
        for n in (1, 2):
            srv = ServerProcess(db, work, env=env, args=("--workers", str(n)))
            if a.hybrid:
                srv.env.pop("RECALL_DISABLE_PLUGINS", None)
            servers[n] = srv.start(timeout=300)
        token = await token_in_process(db, NS)
        time.sleep(3)  # every child of the group up (the parent answers after the first)
        queries = [q for _, q in speed.make_queries(50)]
        calls = {"search_memories": [body("search_memories", {"query": q, "limit": 10})
                                     for q in queries],
                 "get_memory_stats": [body("get_memory_stats", {})]}
        scripts = {}
        for tool, bodies in calls.items():
            scripts[tool] = work / f"{tool}.lua"
            scripts[tool].write_text(lua(token, tool, bodies))
            for srv in servers.values():
                check(srv, token, tool, bodies[0])
                wrk(srv, scripts[tool], 2, a.connections)  # warm-up, not counted
        results: list[dict] = []
        for r in range(a.rounds):
            for tool in calls:
                row = {"round": r + 1, "tool": tool}
                for n, srv in servers.items():
                    row[f"w{n}"] = wrk(srv, scripts[tool], a.seconds, a.connections)
                row["ratio"] = round(row["w2"]["rate"] / row["w1"]["rate"], 2)
                results.append(row)
                print(f"round {r + 1} {tool:17s} workers 1: {row['w1']['rate']:7.1f}/s "
                      f"(p50 {row['w1']['p50']}, load {row['w1']['load']})  workers 2: "
                      f"{row['w2']['rate']:7.1f}/s (p50 {row['w2']['p50']}, load "
                      f"{row['w2']['load']})  x{row['ratio']}"
                      + ("" if not (row['w1']['non2xx'] or row['w2']['non2xx']) else
                         f"  NON-2XX {row['w1']['non2xx']}/{row['w2']['non2xx']}"), flush=True)
        for tool in calls:
            ratios = [r["ratio"] for r in results if r["tool"] == tool]
            print(f"{tool}: median ratio x{statistics.median(ratios)} over {len(ratios)} rounds")
        if a.json:
            Path(a.json).write_text(json.dumps({"machine": speed.machine(), "args": vars(a),
                                                "results": results}, indent=1))
    finally:
        for srv in servers.values():
            srv.stop()
        if pg_name:
            await speed.pg_drop(a.postgres, pg_name)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
