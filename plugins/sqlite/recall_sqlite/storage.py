"""`SQLiteStorage`: the Storage protocol on one SQLite file.

The methods live in one module per group of the contract (queue, memories, retrieval,
records, admin, oauth; `tx.py` is the write transaction). Every statement that reads or writes
tenant rows filters by namespace. Multi-statement writes
run in one BEGIN IMMEDIATE transaction (see `Database.transaction`), so they are all or
nothing, also against other processes using the same file.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from recall_core.contracts import Capabilities

from .admin import AdminMethods
from .connection import Database
from .faults import PROBE, check_free_space, classify
from .fulltext import FullText
from .memories import MemoryMethods
from .oauth import OAuthMethods
from .queue import QueueMethods
from .records import RecordMethods
from .retrieval import RetrievalMethods
from .settings import SQLiteSettings
from .vectors import VectorSearch, prune_vector_events
from .webhooks import WebhookMethods


class SQLiteStorage(QueueMethods, MemoryMethods, RetrievalMethods, RecordMethods,
                    AdminMethods, OAuthMethods, WebhookMethods):
    capabilities = Capabilities(fulltext=True, vectors=True, near_duplicates=True, history=True,
                                session_neighbours=True, time_ranges=True,
                                embedding_models=True, memory_sources=True, admin=True,
                                oauth=True, webhooks=True)

    def __init__(self, path: str, settings: SQLiteSettings | None = None):
        self.settings = settings or SQLiteSettings()
        self.db = Database(path, self.settings)
        self._fulltext = FullText(self.db)
        self._vectors = VectorSearch(self.db, self.settings.vector_cache_namespaces,
                                     self.settings.vector_cache_mb << 20,
                                     self.settings.vector_inline_rows,
                                     self.settings.vector_ann_min_rows,
                                     self.settings.vector_index_dir)
        self._writes = 0

    @property
    def path(self) -> str:
        return self.db.path

    @property
    def description(self) -> str:
        return f"sqlite {self.db.path} ({self.db.journal_mode})"

    async def open(self) -> None:
        await self.db.open()
        async with self.db.transaction() as db:
            await prune_vector_events(db)

    async def close(self) -> None:
        await self._vectors.close()  # background loads first: they read through self.db
        await self.db.close()

    def vectors_loading(self) -> list[str]:
        return self._vectors.loading()

    def status(self) -> dict[str, Any]:
        """What `recall status` shows about this backend."""
        return {"backend": "sqlite", "path": self.db.path, "journal_mode": self.db.journal_mode,
                "sqlite_version": sqlite3.sqlite_version,
                "fulltext": "FTS5 (BM25, context column weighted)",
                "vectors": ("in-process exact cosine index per namespace; approximate (faiss "
                            f"IVF, int8, re-scored) from {self.settings.vector_ann_min_rows} "
                            f"rows, saved in {self._vectors.index_dir}"),
                "vector_cache": {"bytes": self._vectors.cached_bytes,
                                 "max_bytes": self.settings.vector_cache_mb << 20,
                                 "loading": len(self._vectors.loading())}}

    def classify_failure(self, exc: BaseException) -> str | None:
        return classify(exc)

    async def check_writable(self) -> None:
        async with self.db.transaction() as db:
            await db.execute(PROBE)
        check_free_space(self.db.path)
