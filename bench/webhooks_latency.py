"""Webhook delivery latency under a burst of stores (issue 30): a real `recall serve` (stub
extractor, default worker and deliverer) with one static subscription to a real receiver on
loopback (recall_testkit.webhook_receiver: Standard Webhooks verification of every delivery),
then N stores sent at once from C concurrent MCP clients.

    python bench/webhooks_latency.py --n 500 --clients 8 [--db postgresql://...]
    [--receiver-delay 0.0] [--subscriptions 1]

Per event it measures
- commit -> delivered: the receiver's arrival time minus the event's timestamp (taken in the
  transaction that committed the change), i.e. the outbox and the deliverer alone;
- ack -> delivered: arrival minus the moment store_memory answered (extraction queue included).
Prints JSON with p50/p95/max of both, and counts (sent, delivered, duplicates, lost).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

from recall_core.events.signing import new_secret
from recall_testkit.serverproc import Agent, ServerProcess
from recall_testkit.webhook_receiver import Receiver, config_toml


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000, 1)


async def burst(srv: ServerProcess, token: str, n: int, clients: int) -> dict[str, float]:
    """job id -> time.time() when its store was acknowledged."""
    acked: dict[str, float] = {}
    queue = list(range(n))

    async def client() -> None:
        async with Agent(srv.url, token) as a:
            while queue:
                i = queue.pop()
                env = await a.call("store_memory", text=f"Fact {i}: I have {i} unread books "
                                                          f"on shelf {i % 17}.")
                acked[env["data"]["job_id"]] = time.time()
    await asyncio.gather(*(client() for _ in range(clients)))
    return acked


def run(db: str | None, n: int, clients: int, delay: float, workdir: Path) -> dict:
    receiver = Receiver(new_secret(), delay=delay).start()
    (workdir / "recall.toml").write_text(config_toml(
        "bench", receiver.url, receiver.secret, ["extraction.completed"], poll_interval=0.5))
    srv = ServerProcess(db or str(workdir / "recall.db"), workdir,
                        args=("--config", str(workdir / "recall.toml"))).start()
    try:
        token = srv.token("bench")
        t0 = time.monotonic()
        acked = asyncio.run(burst(srv, token, n, clients))
        got = receiver.wait_for(n, "extraction.completed", timeout=600)
        wall = time.monotonic() - t0
        time.sleep(1.0)
    finally:
        srv.stop()
        receiver.stop()
    commit = [r.at - datetime.fromisoformat(json.loads(r.body)["timestamp"]).timestamp()
              for r in got]
    ack = [r.at - acked[r.data["job_id"]] for r in got if r.data["job_id"] in acked]
    delivered = len({r.data["job_id"] for r in got})
    return {
        "backend": "postgres" if db and "://" in db else "sqlite", "stores": n,
        "clients": clients, "receiver_delay_s": delay, "wall_s": round(wall, 2),
        "commit_to_delivered_ms": {"p50": pct(commit, 50), "p95": pct(commit, 95),
                                   "max": pct(commit, 100),
                                   "mean": round(statistics.mean(commit) * 1000, 1)},
        "ack_to_delivered_ms": {"p50": pct(ack, 50), "p95": pct(ack, 95), "max": pct(ack, 100)},
        "sent": n, "delivered": delivered,
        "duplicates": len(receiver.verified) - len(set(receiver.verified)),
        "lost": n - delivered, "rejected": len(receiver.rejected)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--db", default=None, help="database URL (default: a new SQLite file)")
    ap.add_argument("--receiver-delay", type=float, default=0.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(args.db, args.n, args.clients, args.receiver_delay, Path(tmp))))


if __name__ == "__main__":
    main()
