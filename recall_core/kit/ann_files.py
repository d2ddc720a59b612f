"""Where a storage's approximate indexes live on disk, and their background saves and
rebuilds (one at a time per namespace and width). Shared by recall-sqlite and the
recall-postgres real[] fallback; see ann_index for what is saved and when."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from . import ann_index
from .ann_index import AnnIndex

log = logging.getLogger("recall.vectors")


class AnnFiles:
    """`directory`: the setting, or None for a temporary one removed at close (then a
    restart rebuilds)."""

    def __init__(self, directory: str | Path | None):
        self._dir = Path(directory) if directory else None
        self._own: str | None = None
        self._tasks: dict[tuple[str, int], asyncio.Task[Any]] = {}
        #: Erases per namespace: a save or build that began before one deletes its file.
        self._erased: dict[str, int] = {}

    @property
    def directory(self) -> Path:
        if self._dir is None:
            self._own = tempfile.mkdtemp(prefix="recall-vectors-")
            self._dir = Path(self._own)
        return self._dir

    @property
    def persistent(self) -> bool:
        return self._own is None

    def path(self, namespace: str, dim: int) -> Path:
        return self.directory / (ann_index.file_stem(namespace, dim) + ".faiss")

    def generation(self, namespace: str) -> int:
        return self._erased.get(namespace, 0)

    def forget(self, namespace: str) -> None:
        """Erase: delete the namespace's files (a save already running deletes its own
        when it ends)."""
        self._erased[namespace] = self.generation(namespace) + 1
        ann_index.remove_namespace(self.directory, namespace)

    async def save_now(self, namespace: str, index: AnnIndex) -> None:
        path = self.path(namespace, index.dim)
        gen = self.generation(namespace)
        await asyncio.to_thread(index.save, path)
        if self.generation(namespace) != gen:
            ann_index.remove_files(path)

    def after_search(self, namespace: str, index: AnnIndex,
                     rebuild: Callable[[], Awaitable[None]]) -> None:
        """Start a background save when removed vectors must leave the file or many
        changes are unsaved, or a rebuild when the index is stale. While a save runs the
        index takes no changes (searches still answer; the changes wait in the log)."""
        key = (namespace, index.dim)
        if key in self._tasks and not self._tasks[key].done():
            return
        if index.stale:
            self._tasks[key] = asyncio.create_task(self._guard(rebuild(), "rebuilding"))
        elif index.must_save:
            index.saving = True
            self._tasks[key] = asyncio.create_task(self._save(namespace, index))

    async def _save(self, namespace: str, index: AnnIndex) -> None:
        try:
            await self._guard(self.save_now(namespace, index), "saving")
        finally:
            index.saving = False

    @staticmethod
    async def _guard(work: Awaitable[None], what: str) -> None:
        try:
            await work
        except Exception:  # noqa: BLE001 - logged; the next search tries again
            log.exception("%s a namespace's vector index failed", what)

    async def close(self) -> None:
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        if self._own:
            shutil.rmtree(self._own, ignore_errors=True)
