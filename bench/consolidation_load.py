"""How long /health and another tenant's search take while one tenant consolidates a large
topic (issue 28): a real `recall serve` with the embedding model, N templated notes seeded
with their vectors (recall_testkit.load), one consolidate_memories(dry_run=True) timed.

    python bench/consolidation_load.py --n 6000 [--n 15000 ...]
    # the code before a change: the server imports recall_core from another checkout
    PYTHONPATH=/path/to/old/checkout python bench/consolidation_load.py --n 6000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import tempfile
import time
from pathlib import Path

import httpx
from mcp.shared.exceptions import MCPError

from recall_core.server.auth import create_token
from recall_sqlite import SQLiteSettings, make_storage
from recall_testkit.load import seed_memories, templated_notes, watch_latency
from recall_testkit.serverproc import Agent, ServerProcess


async def run(n: int, workdir: Path) -> dict:
    srv = ServerProcess(str(workdir / f"c{n}.db"), workdir,
                        env={"RECALL_DISABLE_PLUGINS": "",
                             "RECALL_LIMITS__TOOL_TIMEOUT": "300"}).start()
    try:
        while httpx.get(srv.base + "/health").json()["degraded"]:
            time.sleep(0.2)
        storage = make_storage(f"sqlite:///{srv.db}", SQLiteSettings())
        await storage.open()
        big, other = await create_token(storage, "big"), await create_token(storage, "other")
        async with Agent(srv.url, big) as a, Agent(srv.url, other) as b:
            await b.ok("store_memory", text="The staging server runs Debian 12.", topic="infra")
            await b.wait_idle(60)
            with sqlite3.connect(srv.db) as con:
                (model, dim), = con.execute(
                    "SELECT embedding_model, length(embedding) / 4 FROM memories").fetchall()
            texts, vecs = templated_notes(n, dim)
            await seed_memories(storage, "big", "notes", texts, vecs, model)
            await storage.close()
            async def consolidate() -> dict:
                try:
                    return await a.call("consolidate_memories", topic="notes", dry_run=True)
                except MCPError as exc:  # the client gave up (30 s): the server went on
                    return {"status": "client gave up", "code": str(exc), "data": None}

            t = time.perf_counter()
            env, seen = await watch_latency(
                srv.base, consolidate(),
                lambda: b.ok("search_memories", query="Which OS does staging run?"))
            took = time.perf_counter() - t
        data = env["data"] or {}
        groups = data.get("groups", [])
        return {"n": n, "status": env["status"], "code": env["code"],
                "consolidate_s": round(took, 2), "groups": len(groups),
                "largest_group": max((len(g["merged_ids"]) for g in groups), default=0),
                "partial": data.get("partial"), "examined": data.get("memories_examined"),
                **seen.summary()}
    finally:
        srv.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, action="append")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="recall-consolidation-") as tmp:
        for n in args.n or [6000]:
            print(json.dumps(asyncio.run(run(n, Path(tmp)))), flush=True)


if __name__ == "__main__":
    main()
