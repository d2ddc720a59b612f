"""How long one store from namespace B waits behind a backlog from namespace A (issue 28):
a real `recall serve` (stub extractor, default worker), A's N stores queued first with
said-at times backdated years (as a backdating tenant would send them), then B stores one
text over MCP and polls get_memory_stats until it is extracted.

    python bench/fair_queue.py --n 3000 [--db postgresql://...] [--limit 120]
    # the code before a change: the server imports recall_core from another checkout
    PYTHONPATH=/path/to/old/checkout python bench/fair_queue.py --n 3000

Prints B's wait, and how many of A's stores were still queued when B's was done.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from recall_core.cli.common import open_storage
from recall_core.config import load_config
from recall_core.models import Operation
from recall_core.server.auth import create_token
from recall_testkit.serverproc import Agent, ServerProcess

LONG_AGO = datetime(2001, 1, 1, tzinfo=timezone.utc)


async def run(db: str, n: int, workdir: Path, limit: float) -> dict:
    storage = await open_storage(load_config(None, db=db), create=True)
    token = await create_token(storage, "b")
    for i in range(n):
        await storage.enqueue(Operation(
            namespace="a", idempotency_key=f"backlog-{i}", created_at=LONG_AGO + timedelta(seconds=i),
            payload={"text": f"Build {i} of the nightly job took {i % 97} minutes.",
                     "topic": "builds", "session_id": None, "agent_id": None}))
    srv = ServerProcess(db, workdir).start()
    try:
        async with Agent(srv.url, token) as b:
            t = time.monotonic()
            await b.ok("store_memory", text="I live in Lisbon.", topic="home")
            done = False
            while time.monotonic() - t < limit:
                if (await b.ok("get_memory_stats"))["pending_extractions"] == 0:
                    done = True
                    break
                await asyncio.sleep(0.1)
            waited = time.monotonic() - t
        left = await storage.count_jobs("a", "queued")
    finally:
        srv.stop()
        await storage.close()
    return {"backend": db.split(":")[0] if "://" in db else "sqlite", "backlog": n,
            "b_done": done, "b_wait_s": round(waited, 2), "a_still_queued": left}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--db", help="a Postgres URL (an empty database/schema); default: SQLite")
    ap.add_argument("--limit", type=float, default=120, help="give up on B after this long")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="recall-fair-") as tmp:
        db = args.db or str(Path(tmp) / "fair.db")
        print(json.dumps(asyncio.run(run(db, args.n, Path(tmp), args.limit))), flush=True)


if __name__ == "__main__":
    main()
