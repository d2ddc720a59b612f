"""What one caller can cost the shared server (issue 28, "bounded per caller").

    python bench/caller_bounds.py [--sessions 2000] [--cap 64]

Starts a real `recall serve` (SQLite, stub extractor) and, with one token:
- opens N MCP sessions by hand (initialize, no GET stream; what a load tool or a careless client
  leaves behind) and reports the server's RSS growth per session, with the per-token cap
  (`limits.sessions_per_token`) at --cap and, for comparison, at a value no caller reaches
  (the server before the cap);
- times a 1 MB search query, with the query limit (`limits.max_query_chars`, default 4096) and
  with it raised past 1 MB (before the limit).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "testkit"))
from recall_testkit.serverproc import ServerProcess  # noqa: E402

ACCEPT = "application/json, text/event-stream"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def sessions(n: int, cap: int, work: Path) -> tuple[float, int]:
    srv = ServerProcess(str(work / f"s{cap}.db"), work,
                        env={"RECALL_LIMITS__SESSIONS_PER_TOKEN": str(cap)}).start()
    try:
        token = srv.token("bench")
        headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "0"}}}
        with httpx.Client(headers=headers, timeout=30) as http:
            for _ in range(50):  # warm the allocator before the baseline
                http.post(srv.url, json=body)
            time.sleep(1)
            before = rss_kib(srv.proc.pid)
            for _ in range(n):
                assert http.post(srv.url, json=body).status_code == 200
            time.sleep(1)
            after = rss_kib(srv.proc.pid)
        return (after - before) / n, after - before
    finally:
        srv.stop()


def big_query(limit: int, work: Path) -> tuple[float, str]:
    srv = ServerProcess(str(work / f"q{limit}.db"), work,
                        env={"RECALL_LIMITS__MAX_QUERY_CHARS": str(limit)}).start()
    try:
        token = srv.token("bench")
        headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT,
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                   "Mcp-Name": "search_memories"}
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "search_memories", "_meta": meta,
                           "arguments": {"query": "word " * 200_000}}}
        with httpx.Client(headers=headers, timeout=120) as http:
            started = time.perf_counter()
            r = http.post(srv.url, json=body)
            took = time.perf_counter() - started
        code = r.json()["result"]["structuredContent"]["code"] or "ok"
        return took, code
    finally:
        srv.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--cap", type=int, default=64)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for label, cap in (("no cap (before)", 10**6), (f"cap {args.cap} (after)", args.cap)):
            per, total = sessions(args.sessions, cap, work)
            print(f"{args.sessions} sessions, {label}: RSS +{total / 1024:.1f} MiB "
                  f"({per:.1f} KiB per session)")
        for label, limit in (("no limit (before)", 2_000_000), ("limit 4096 (after)", 4096)):
            took, code = big_query(limit, work)
            print(f"1 MB query, {label}: {took:.2f} s, {code}")


if __name__ == "__main__":
    main()
