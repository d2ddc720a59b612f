"""Load that one tenant can put on a shared server (issue 28), for tests and bench/ alike.

- `templated_notes`: texts and vectors of notes written from one template, distinct but all
  alike to the embedding model (pairwise cosine ~0.92), the case that made single-linkage
  consolidation quadratic in Python and one group of thousands.
- `seed_memories`: put them straight into a server's database with their vectors (embedding
  thousands of texts through the real model would take minutes).
- `watch_latency`: while an awaitable runs, time /health and a search from another tenant.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import numpy as np

from recall_core.models import Memory


def templated_notes(n: int, dim: int, seed: int = 0, spread: float = 0.3
                    ) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=dim)
    base /= np.linalg.norm(base)
    vectors = base + rng.normal(scale=spread / np.sqrt(dim), size=(n, dim))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"Shipment {10000 + i} left warehouse {i % 7} on day {i % 28 + 1}." for i in range(n)]
    return texts, vectors.astype(np.float32)


async def seed_memories(storage: Any, namespace: str, topic: str, texts: list[str],
                        vectors: np.ndarray, model: str, batch: int = 1000) -> None:
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for start in range(0, len(texts), batch):
        rows = []
        for i in range(start, min(len(texts), start + batch)):
            at = t0 + timedelta(seconds=i)
            rows.append(Memory(namespace=namespace, text=texts[i], topic=topic, created_at=at,
                               valid_from=at, embedding=vectors[i].tolist(),
                               embedding_model=model))
        await storage.insert_memories(rows)


@dataclass
class Latencies:
    health: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name in ("health", "search"):
            xs = sorted(getattr(self, name))
            if xs:
                out[f"{name}_n"] = len(xs)
                out[f"{name}_p50"] = round(xs[len(xs) // 2], 3)
                out[f"{name}_max"] = round(xs[-1], 3)
        return out


async def watch_latency(base: str, work: Awaitable[Any],
                        search: Callable[[], Awaitable[Any]] | None = None,
                        pause: float = 0.1) -> tuple[Any, Latencies]:
    """Run `work`; until it ends, time GET /health and `search()` one after the other."""
    task = asyncio.ensure_future(work)
    seen = Latencies()
    async with httpx.AsyncClient(timeout=120) as http:
        while not task.done():
            t = time.perf_counter()
            assert (await http.get(base + "/health")).status_code in (200, 503)
            seen.health.append(time.perf_counter() - t)
            if search is not None and not task.done():
                t = time.perf_counter()
                await search()
                seen.search.append(time.perf_counter() - t)
            await asyncio.sleep(pause)
    return await task, seen
