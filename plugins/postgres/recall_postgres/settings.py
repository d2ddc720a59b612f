"""Settings of the postgres plugin: the `[plugins.postgres]` table of recall.toml, or
`RECALL_PLUGIN_POSTGRES_<KEY>` environment variables. The database itself comes from the
URL (`RECALL_DB_URL=postgresql://...`); secrets belong in that URL or in PG* env vars /
`.pgpass`, never in the config file."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class PostgresSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: Connections kept open / opened at most by the asyncpg pool of one process.
    pool_min: int = Field(1, ge=0)
    pool_max: int = Field(10, ge=1)
    #: "auto": pgvector when the server has it (created if we may), else the real[] fallback.
    #: "pgvector": refuse to start without it. "array": never use it.
    vector: Literal["auto", "pgvector", "array"] = "auto"
    #: Server-side limit per statement, seconds; 0 disables.
    statement_timeout: float = Field(30.0, ge=0)
    #: Seconds to wait for a connection to the server.
    connect_timeout: float = Field(10.0, gt=0)
    #: HNSW search breadth (pgvector `hnsw.ef_search`), at least the candidates asked for.
    hnsw_ef_search: int = Field(100, ge=1, le=1000)
    #: HNSW build parameters, used when the index for a dimension is first created.
    hnsw_m: int = Field(16, ge=2, le=100)
    hnsw_ef_construction: int = Field(64, ge=4, le=1000)
    #: Namespaces whose vector matrix the real[] fallback keeps in memory (LRU).
    array_cache_namespaces: int = Field(4096, ge=1)
    #: The real[] fallback's vector cache budget in MiB, all namespaces together (LRU); a
    #: namespace whose vectors alone need more answers from full text and says so.
    array_cache_mb: int = Field(2048, ge=0)
    #: Below this many rows a namespace's matrix loads inline on first search; a bigger one
    #: loads in the background while its searches answer from full text (and say so).
    array_inline_rows: int = Field(20_000, ge=0)
    #: The real[] fallback serves a namespace of at least this many rows through an
    #: approximate index (IVF over int8 vectors, the top candidates re-scored exactly);
    #: smaller ones keep the exact scan (bench/RESULTS.md). 0: every namespace.
    array_ann_min_rows: int = Field(20_000, ge=0)
    #: Where the real[] fallback saves approximate indexes (a folder per database and
    #: schema inside), so a restart loads them instead of rebuilding. Unset: a temporary
    #: folder per process, rebuilt at each start. (pgvector keeps its HNSW in the database.)
    vector_index_dir: str | None = None

    @model_validator(mode="after")
    def _pool_bounds(self) -> "PostgresSettings":
        if self.pool_min > self.pool_max:
            raise ValueError(f"pool_min ({self.pool_min}) is larger than pool_max "
                             f"({self.pool_max}); lower pool_min or raise pool_max")
        if self.hnsw_ef_construction < 2 * self.hnsw_m:
            raise ValueError("hnsw_ef_construction must be at least 2 * hnsw_m (pgvector rule)")
        return self
