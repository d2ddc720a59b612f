"""Settings of the SQLite backend: the `[plugins.sqlite]` table of recall.toml, overridable
with `RECALL_PLUGIN_SQLITE_<KEY>` environment variables."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SQLiteSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: How long a writer waits for another connection's write lock (the server and a
    #: `recall create-token` CLI may share one file) before failing with "database is locked".
    busy_timeout_ms: int = Field(5000, ge=0)
    #: Page cache per connection, in KiB (SQLite `PRAGMA cache_size = -N`).
    cache_size_kib: int = Field(32768, ge=0)
    #: `NORMAL` is crash-safe in WAL mode (a killed process loses nothing); only a power cut
    #: can drop the last commits. `FULL` fsyncs every commit (slower acks, power-cut safe).
    synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = "NORMAL"
    #: Read-only connections (each its own thread and page cache). Reads go to the least busy
    #: one, so a quick read never queues behind a slow one (the worker's full-text checks).
    readers: int = Field(3, ge=1, le=32)
    #: Memory-mapped I/O size in MiB (0 disables); speeds up reads of large databases.
    mmap_size_mib: int = Field(256, ge=0)
    #: How many namespaces keep their vector matrix cached in memory (least recently used
    #: are dropped first). Each costs about rows x dimensions x 4 bytes.
    vector_cache_namespaces: int = Field(4096, ge=0)
    #: The vector cache's memory budget in MiB, all namespaces together (least recently used
    #: dropped first). A namespace whose vectors alone need more is never loaded: its
    #: searches answer from full text and say so. 2 GiB holds ~1M MiniLM vectors.
    vector_cache_mb: int = Field(2048, ge=0)
    #: A namespace with fewer rows loads its vectors inline on first search; a bigger one
    #: loads in the background while its searches answer from full text (and say so).
    vector_inline_rows: int = Field(20_000, ge=0)
    #: A namespace with at least this many rows is searched through an approximate index
    #: (HNSW over int8 vectors, the top candidates re-scored exactly), saved per namespace
    #: in `vector_index_dir` so a restart loads it instead of rebuilding; smaller ones keep
    #: the exact scan, which is as fast there (bench/RESULTS.md). 0: every namespace.
    vector_ann_min_rows: int = Field(20_000, ge=0)
    #: Where approximate indexes are saved; default `<database file>.vectors/` beside it.
    vector_index_dir: str | None = None
