"""ListTasks latency over real HTTP (issue 15): a `recall serve` process, one namespace holding
`--tasks` A2A tasks, timed through the a2a-sdk client.

    python bench/a2a_tasks.py [--tasks 500] [--db sqlite|postgresql://...] [--repeat 20]

Tasks are made with the search_memories skill (cheap: no extraction), `--concurrency` at a
time. Then it times the first page (page_size 50) `--repeat` times, and one walk through every
page (page_size 100). Runs against whatever recall_core is importable, so the same script
measures an older checkout for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_data_part
from a2a.types.a2a_pb2 import ListTasksRequest, Message, Role, SendMessageRequest

from recall_testkit.serverproc import ServerProcess


async def run(base: str, token: str, tasks: int, repeat: int, concurrency: int) -> dict:
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    client = await create_client(base, ClientConfig(httpx_client=http, streaming=False))
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        msg = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()),
                      parts=[new_data_part({"skill": "search_memories", "query": f"q{i}"})])
        async with gate:
            async for _ in client.send_message(SendMessageRequest(message=msg)):
                pass

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(tasks)))
    made = time.perf_counter() - started
    firsts = []
    for _ in range(repeat):
        t = time.perf_counter()
        page = await client.list_tasks(ListTasksRequest(page_size=50))
        firsts.append((time.perf_counter() - t) * 1000)
    assert page.total_size == tasks and len(page.tasks) == 50, (page.total_size, len(page.tasks))
    t = time.perf_counter()
    seen, token_, pages = set(), "", 0
    while True:
        page = await client.list_tasks(ListTasksRequest(page_size=100, page_token=token_))
        seen.update(task.id for task in page.tasks)
        pages += 1
        token_ = page.next_page_token
        if not token_:
            break
    walk = (time.perf_counter() - t) * 1000
    assert len(seen) == tasks, len(seen)
    await client.close()
    await http.aclose()
    return {"made_s": made, "first_median_ms": statistics.median(firsts),
            "first_p90_ms": sorted(firsts)[int(0.9 * len(firsts)) - 1], "walk_ms": walk,
            "pages": pages}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=500)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--db", default="sqlite", help="sqlite, or a postgresql:// URL (empty db)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = str(work / "recall.db") if args.db == "sqlite" else args.db
        srv = ServerProcess(db, work, env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")}).start()
        try:
            out = asyncio.run(run(srv.base, srv.token("bench"), args.tasks, args.repeat,
                                  args.concurrency))
        finally:
            srv.stop()
    kind = "sqlite" if args.db == "sqlite" else "postgres"
    print(f"{kind} tasks={args.tasks}: made in {out['made_s']:.1f} s; ListTasks page_size=50 "
          f"median {out['first_median_ms']:.1f} ms (p90 {out['first_p90_ms']:.1f}); walk of "
          f"{out['pages']} pages of 100: {out['walk_ms']:.0f} ms")


if __name__ == "__main__":
    main()
