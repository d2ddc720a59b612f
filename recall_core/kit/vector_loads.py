"""Loading a namespace's vectors without making a search wait: a storage plugin that keeps
vectors in process (recall_core's VectorIndex) loads a big namespace in the background and,
meanwhile, answers `search_vectors` with `NotReady`; search then answers from its other
rankers (full text) and says so in `degraded`, and `/health` names how many namespaces are
still loading. A namespace whose vectors would not fit the cache's byte budget is never
loaded: `NotReady` says so and what setting to raise.

Small namespaces (below `inline_rows`) load inline, as before: the first search waits a few
milliseconds rather than losing its semantic half.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..contracts import NotReady
from .vector_index import VectorCache, estimated_bytes

log = logging.getLogger("recall.vectors")

#: Below this many rows a namespace's vectors load inline (measured here: 20k rows x 384
#: floats load from SQLite in ~0.15 s; the miss cost grows linearly from there).
INLINE_ROWS = 20_000


class BackgroundLoads:
    """At most one background load per (namespace, dim); the loader puts the index into the
    cache itself."""

    def __init__(self, cache: VectorCache, inline_rows: int = INLINE_ROWS,
                 setting: str = "vector_cache_mb"):
        self.cache = cache
        self.inline_rows = inline_rows
        self.setting = setting
        self._tasks: dict[tuple[str, int], asyncio.Task[Any]] = {}

    def refuse_while_loading(self, namespace: str, dim: int) -> None:
        """NotReady at once while the namespace's load runs: the load holds the namespace's
        lock for its whole length (minutes for a 1M approximate index), and a search that
        waited for that lock would time out instead of answering from full text."""
        task = self._tasks.get((namespace, dim))
        if task is not None and not task.done():
            raise NotReady("dense: this namespace's vectors are still loading in the "
                           "background; full text answered this search, semantic search "
                           "joins when the load ends.")

    def loading(self) -> list[str]:
        """Namespaces whose vectors are loading now."""
        return sorted({ns for (ns, _), task in self._tasks.items() if not task.done()})

    async def load(self, namespace: str, dim: int, rows: int,
                   loader: Callable[[], Awaitable[Any]], lock: asyncio.Lock,
                   need: int | None = None) -> Any:
        """`await loader()` inline for a small namespace (the caller holds `lock`);
        otherwise start it in the background (once, under `lock`) and raise NotReady.
        Refuses (NotReady) a namespace whose `rows` would not fit the cache (`need`: the
        bytes its index takes, when not the exact matrix's)."""
        need = estimated_bytes(rows, dim) if need is None else need
        if not self.cache.fits(need):
            raise NotReady(
                f"dense: this namespace's {rows} vectors need about {need >> 20} MB, more "
                f"than the vector cache's {self.cache.max_bytes >> 20} MB; semantic search is "
                f"off for it (full text answered). Raise the storage plugin's {self.setting}.")
        if rows < self.inline_rows:
            return await loader()
        key = (namespace, dim)
        task = self._tasks.get(key)
        if task is None or task.done():  # (done: loaded and since evicted, or failed)
            self._tasks[key] = asyncio.create_task(self._run(loader, lock))
        raise NotReady(f"dense: loading this namespace's {rows} vectors (about {need >> 20} "
                       f"MB) in the background; full text answered this search, semantic "
                       f"search joins when the load ends.")

    async def _run(self, loader: Callable[[], Awaitable[Any]], lock: asyncio.Lock) -> None:
        try:
            async with lock:
                await loader()
        except Exception:  # noqa: BLE001 - logged; the next search starts a new load
            log.exception("loading the vectors of a namespace failed")
            raise

    def forget(self, namespace: str) -> None:
        for key in [k for k in self._tasks if k[0] == namespace]:
            task = self._tasks.pop(key)
            task.cancel()

    async def close(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()
