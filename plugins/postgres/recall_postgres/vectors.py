"""Dense vectors: pgvector when the server has it, a real[] column plus numpy otherwise.

pgvector path. The `embedding` column is an untyped `vector` (no dimension), because the
dimension is only known when the first embedding arrives and a server may hold memories of
two embedders at once (e.g. during a model change). HNSW needs a fixed dimension, so for each
dimension seen we create, once and lazily, a partial expression index

    CREATE INDEX memories_embedding_hnsw_<d> ON memories
        USING hnsw ((embedding::vector(<d>)) vector_cosine_ops)
        WHERE vector_dims(embedding) = <d> AND valid_until IS NULL;

and search with the same expression and predicate, so the planner can use it. Only active
rows are indexed (superseded ones leave the index when their valid_until is set). pgvector
>= 0.8 runs the scan iteratively (`hnsw.iterative_scan = strict_order`), so the namespace
filter never starves the result list. HNSW indexes at most 2000 dimensions; above that the
search is an exact scan.

Fallback path. `embedding real[]`; search keeps the namespace's active vectors of the query's
dimension in a row-normalised float32 matrix (recall_core's VectorIndex) and answers with one
matrix-vector product and argpartition: exact cosine, no Python loop over rows. The matrix is
loaded once (3-4 s for 100k 384-d vectors here, nearly all of it the query; the vectors come as
`array_send` bytes that numpy decodes, not as Python floats) and then kept fresh
incrementally: triggers on `memories` (real[] mode only) record each memory whose vector or
active state changed in `vector_changes`, and the version bump that ends every write stamps
those rows with the namespace's new version. Versions of a namespace are handed out under its
`namespaces` row lock, right before commit, so a snapshot that sees version V sees every
change stamped <= V: a search reads the version and the changes after its cursor in one
snapshot, applies those few rows, and moves the cursor to V. It reloads when the log was
pruned past its cursor or when most of the namespace changed.

Namespaces of `array_ann_min_rows` rows or more are served by an approximate index instead
(recall_core.kit.ann_index: faiss IVF over int8 vectors, candidates re-scored exactly with the
stored vectors read here by seq), following the same version cursor. With
`vector_index_dir` set it is saved there (under a folder per database and schema), so a
restart loads it and applies only the changes after its cursor; without it, in a temporary
folder, rebuilt at each start.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np

from recall_core import ConfigError
from recall_core import ScoredId
from recall_core.contracts import NotReady
from recall_core.kit import ann_index
from recall_core.kit.ann_files import AnnFiles
from recall_core.kit.ann_index import AnnIndex
from recall_core.kit.vector_index import NamespaceLocks, VectorCache, VectorIndex, maybe_in_thread
from recall_core.kit.vector_loads import INLINE_ROWS, BackgroundLoads

log = logging.getLogger("recall_postgres")

INDEX_LOCK = 0x524543414C4C4958  # "RECALLIX": serialises lazy HNSW index creation
HNSW_MAX_DIMS = 2000
INDEX_PREFIX = "memories_embedding_hnsw_"
#: vector_changes keeps the rows of the last this many namespace versions (all namespaces
#: count); an index whose cursor is older reloads.
KEEP_VERSIONS = 20_000
#: Prune vector_changes every this many version bumps of one storage instance.
PRUNE_EVERY = 500
_CHANGE_TRIGGERS = ("memories_vector_insert", "memories_vector_update", "memories_vector_delete")
_CHANGE_TRIGGER_SQL = (
    """CREATE OR REPLACE FUNCTION recall_vector_change() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                INSERT INTO vector_changes (namespace, memory_seq) VALUES (OLD.namespace, OLD.seq);
            ELSE
                INSERT INTO vector_changes (namespace, memory_seq) VALUES (NEW.namespace, NEW.seq);
            END IF;
            RETURN NULL;
        END $$""",
    """CREATE TRIGGER memories_vector_insert AFTER INSERT ON memories FOR EACH ROW
        WHEN (NEW.embedding IS NOT NULL AND NEW.valid_until IS NULL)
        EXECUTE FUNCTION recall_vector_change()""",
    """CREATE TRIGGER memories_vector_update AFTER UPDATE OF embedding, valid_until ON memories
        FOR EACH ROW WHEN ((OLD.embedding IS NOT NULL AND OLD.valid_until IS NULL)
                           OR (NEW.embedding IS NOT NULL AND NEW.valid_until IS NULL))
        EXECUTE FUNCTION recall_vector_change()""",
    """CREATE TRIGGER memories_vector_delete AFTER DELETE ON memories FOR EACH ROW
        WHEN (OLD.embedding IS NOT NULL AND OLD.valid_until IS NULL)
        EXECUTE FUNCTION recall_vector_change()""",
)


class VectorSetupError(ConfigError):
    """vector="pgvector" was asked for and the server cannot provide it."""


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def as_float32(vec: Sequence[float]) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"an embedding must be a non-empty flat list of floats, got shape {arr.shape}")
    return arr


def _encode_vector(vec: Any) -> bytes:
    arr = as_float32(vec)
    return struct.pack(">HH", arr.size, 0) + arr.astype(">f4").tobytes()


def _decode_vector(data: bytes) -> list[float]:
    dim, _ = struct.unpack_from(">HH", data)
    return np.frombuffer(data, dtype=">f4", count=dim, offset=4).astype(np.float64).tolist()


@dataclass
class VectorChoice:
    mode: str  # "pgvector" | "array"
    reason: str
    schema: str | None = None  # schema of the vector extension
    version: str | None = None  # pgvector version


def _version_tuple(v: str | None) -> tuple[int, ...]:
    out = []
    for part in (v or "0").split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


async def _installed(con: asyncpg.Connection) -> tuple[str, str] | None:
    row = await con.fetchrow(
        "SELECT extnamespace::regnamespace::text AS schema, extversion FROM pg_extension "
        "WHERE extname = 'vector'")
    return (row["schema"], row["extversion"]) if row else None


async def choose(con: asyncpg.Connection, requested: str) -> VectorChoice:
    """Decide pgvector or array, creating the extension when allowed. Runs in the migration
    transaction; a failed CREATE EXTENSION is contained in a savepoint."""
    if requested == "array":
        return VectorChoice("array", "vector=\"array\" in the plugin settings")
    installed = await _installed(con)
    problem = ""
    if installed is None:
        available = await con.fetchval(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
        if available is None:
            problem = "the pgvector extension is not installed on this PostgreSQL server"
        else:
            try:
                async with con.transaction():
                    await con.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except asyncpg.PostgresError as exc:
                problem = (f"pgvector {available} is available but CREATE EXTENSION vector "
                           f"failed: {exc}")
            else:
                installed = await _installed(con)
    if installed is not None:
        schema, version = installed
        return VectorChoice("pgvector", "pgvector extension present", schema, version)
    if requested == "pgvector":
        raise VectorSetupError(
            f"vector=\"pgvector\" is configured but {problem}. Install pgvector on the server "
            f"(https://github.com/pgvector/pgvector) and run CREATE EXTENSION vector as a "
            f"superuser, or set vector = \"auto\" / \"array\" in [plugins.postgres].")
    return VectorChoice("array", problem)


def hnsw_index_sql(vs: str, dim: int, m: int, ef_construction: int) -> str:
    name = quote_ident(f"{INDEX_PREFIX}{int(dim)}")
    return (f"CREATE INDEX IF NOT EXISTS {name} ON memories USING hnsw "
            f"((embedding::{vs}.vector({int(dim)})) {vs}.vector_cosine_ops) "
            f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
            f"WHERE {vs}.vector_dims(embedding) = {int(dim)} AND valid_until IS NULL")


async def setup_vector_column(con: asyncpg.Connection, choice: VectorChoice,
                              hnsw_m: int = 16, hnsw_ef_construction: int = 64) -> None:
    """Add `memories.embedding` with the chosen type, or convert it when the choice changed
    (e.g. pgvector was installed since). Runs under the migration lock."""
    current = await con.fetchval(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'memories'::regclass AND attname = 'embedding' AND NOT attisdropped")
    if choice.mode == "pgvector":
        target = f"{quote_ident(choice.schema or 'public')}.vector"
        is_target = current is not None and current.split(".")[-1].strip('"') == "vector"
    else:
        target = "real[]"
        is_target = current == "real[]"
    if current is None:
        await con.execute(f"ALTER TABLE memories ADD COLUMN embedding {target}")
    # The backfill loop's question: active memories still without a vector, oldest first.
    await con.execute("CREATE INDEX IF NOT EXISTS memories_missing_embedding ON memories (seq) "
                      "WHERE embedding IS NULL AND valid_until IS NULL")
    # Vectors by the model that made them (migration 9): search's count of another model's
    # vectors, and `recall reindex`'s walk in seq order.
    await con.execute("CREATE INDEX IF NOT EXISTS memories_embedding_model ON memories "
                      "(namespace, embedding_model) WHERE embedding IS NOT NULL")
    await con.execute("CREATE INDEX IF NOT EXISTS memories_vector_seq ON memories (seq) "
                      "WHERE embedding IS NOT NULL")
    if current is None or is_target:
        await _change_triggers(con, enabled=choice.mode == "array")
        return
    # The triggers name the column, so they go before its type changes and come back after.
    await _change_triggers(con, enabled=False)
    log.warning("converting memories.embedding from %s to %s (vector mode is now %s); this "
                "rewrites the table and blocks writes until it is done",
                current, target, choice.mode)
    for name in await hnsw_index_names(con):
        await con.execute(f"DROP INDEX IF EXISTS {quote_ident(name)}")
    await con.execute(
        f"ALTER TABLE memories ALTER COLUMN embedding TYPE {target} USING embedding::{target}")
    if choice.mode == "pgvector":
        # Build the indexes now, inside the start-up migration, rather than lazily at the
        # first write later on while a whole table of vectors blocks other writers.
        vs = quote_ident(choice.schema or "public")
        dims = await con.fetch(
            f"SELECT DISTINCT {vs}.vector_dims(embedding) AS d FROM memories "
            f"WHERE embedding IS NOT NULL AND valid_until IS NULL")
        for row in dims:
            if row["d"] <= HNSW_MAX_DIMS:
                await con.execute(hnsw_index_sql(vs, row["d"], hnsw_m, hnsw_ef_construction))
    else:
        await _change_triggers(con, enabled=True)


async def _change_triggers(con: asyncpg.Connection, enabled: bool) -> None:
    """The vector_changes triggers exist exactly in real[] mode (checked, not re-created, at
    every start: DDL on memories would wait for every writer of other processes)."""
    have = {r["tgname"] for r in await con.fetch(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = 'memories'::regclass AND NOT tgisinternal")}
    present = [t for t in _CHANGE_TRIGGERS if t in have]
    if enabled and len(present) < len(_CHANGE_TRIGGERS):
        for name in present:
            await con.execute(f"DROP TRIGGER {name} ON memories")
        for sql in _CHANGE_TRIGGER_SQL:
            await con.execute(sql)
        # Changes before the triggers were never logged: no cursor may pass over that gap.
        await con.execute("DELETE FROM vector_changes")
        await con.execute("UPDATE vector_changes_pruned SET upto = "
                          "(SELECT last_value FROM namespace_version_seq)")
    elif not enabled and present:
        for name in present:
            await con.execute(f"DROP TRIGGER {name} ON memories")
        await con.execute("DELETE FROM vector_changes")


async def prune_vector_changes(con: asyncpg.Connection) -> None:
    """Drop change rows older than the last KEEP_VERSIONS versions (any namespace's)."""
    upto = await con.fetchval("SELECT last_value - $1 FROM namespace_version_seq", KEEP_VERSIONS)
    if upto <= 0:
        return
    await con.execute("DELETE FROM vector_changes WHERE version <= $1", upto)
    await con.execute("UPDATE vector_changes_pruned SET upto = greatest(upto, $1)", upto)


async def hnsw_index_names(con: asyncpg.Connection) -> list[str]:
    rows = await con.fetch(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = 'memories'::regclass AND c.relname LIKE $1",
        INDEX_PREFIX.replace("_", r"\_") + "%")
    return [r["relname"] for r in rows]


class PgVectorIndex:
    """Vectors in a pgvector column, searched through per-dimension HNSW indexes."""

    mode = "pgvector"

    def __init__(self, choice: VectorChoice, ef_search: int, m: int, ef_construction: int):
        self.choice = choice
        self.vs = quote_ident(choice.schema or "public")
        self.ef_search = ef_search
        self.m = m
        self.ef_construction = ef_construction
        self.indexed_dims: set[int] = set()
        self.exact_dims: set[int] = set()  # seen, but searched without an index (see log)
        self._lock = asyncio.Lock()
        self.iterative = _version_tuple(choice.version) >= (0, 8)
        self.hnsw = _version_tuple(choice.version) >= (0, 5)  # HNSW arrived in pgvector 0.5

    @property
    def column_type(self) -> str:
        return f"{self.vs}.vector"

    def describe(self) -> str:
        dims = ",".join(str(d) for d in sorted(self.indexed_dims)) or "none yet"
        out = f"pgvector {self.choice.version}, HNSW cosine (dims indexed: {dims})"
        if self.exact_dims:
            out += f", exact scan for dims {','.join(str(d) for d in sorted(self.exact_dims))}"
        return out

    def server_settings(self) -> dict[str, str]:
        # Given at connect time, so they are the session defaults that the pool's RESET ALL
        # on release returns to (a SET in the pool's init would be wiped after first use).
        out = {"hnsw.ef_search": str(int(self.ef_search))}
        if self.iterative:
            out["hnsw.iterative_scan"] = "strict_order"
        return out

    async def init_connection(self, con: asyncpg.Connection) -> None:
        await con.set_type_codec("vector", schema=self.choice.schema or "public",
                                 encoder=_encode_vector, decoder=_decode_vector,
                                 format="binary")

    async def load(self, con: asyncpg.Connection) -> None:
        for name in await hnsw_index_names(con):
            suffix = name[len(INDEX_PREFIX):]
            if suffix.isdigit():
                self.indexed_dims.add(int(suffix))

    def param(self, vec: Sequence[float] | None) -> Any:
        return None if vec is None or len(vec) == 0 else as_float32(vec)

    async def ensure_indexes(self, pool: asyncpg.Pool, dims: set[int]) -> None:
        missing = dims - self.indexed_dims - self.exact_dims
        if not missing:
            return
        async with self._lock:
            for dim in sorted(missing - self.indexed_dims - self.exact_dims):
                if not self.hnsw:
                    log.warning("pgvector %s has no HNSW (0.5+): %d-dimensional vector search "
                                "is an exact scan; upgrade pgvector for an index",
                                self.choice.version, dim)
                    self.exact_dims.add(dim)
                    continue
                if dim > HNSW_MAX_DIMS:
                    log.warning("embeddings of %d dimensions: HNSW indexes at most %d, vector "
                                "search for them is an exact scan", dim, HNSW_MAX_DIMS)
                    self.exact_dims.add(dim)
                    continue
                # A new dimension has few rows yet, so this short build under the table's
                # SHARE lock is cheap; whole-table builds happen at start-up (conversion).
                try:
                    async with pool.acquire() as con, con.transaction():
                        await con.execute("SET LOCAL statement_timeout = 0")
                        await con.execute("SELECT pg_advisory_xact_lock($1)", INDEX_LOCK)
                        await con.execute(
                            hnsw_index_sql(self.vs, dim, self.m, self.ef_construction))
                except asyncpg.PostgresError as exc:
                    # The rows are committed and searches stay correct (exact scan); only
                    # the index is missing. Said once per process; the next start retries.
                    log.warning("could not create the HNSW index for %d-dimensional vectors "
                                "(%s: %s); vector search for them is an exact scan until it "
                                "exists", dim, type(exc).__name__, exc)
                    self.exact_dims.add(dim)
                else:
                    log.info("HNSW index ready for %d-dimensional embeddings", dim)
                    self.indexed_dims.add(dim)

    async def search(self, pool: asyncpg.Pool, namespace: str, vector: Sequence[float],
                     limit: int, model: str | None = None) -> list[ScoredId]:
        q = as_float32(vector)
        if not np.isfinite(q).all() or not np.any(q):
            return []
        d = int(q.size)
        vs = self.vs
        dist = f"embedding::{vs}.vector({d}) OPERATOR({vs}.<=>) $2::{vs}.vector({d})"
        # The dimension is a literal so the partial index predicate is provably implied; a
        # single ORDER BY expression (no tie-breaker) so the HNSW index can serve it.
        rows = await pool.fetch(
            f"SELECT id, 1 - ({dist}) AS score FROM memories "
            f"WHERE namespace = $1 AND valid_until IS NULL AND {vs}.vector_dims(embedding) = {d} "
            f"AND {OF_MODEL.format(p=4)} ORDER BY {dist} LIMIT $3", namespace, q, limit, model)
        out = []
        for r in rows:
            score = r["score"]
            out.append(ScoredId(id=r["id"], score=float(score) if score == score else 0.0))
        out.sort(key=lambda s: -s.score)  # NaN (zero vectors) sorted last by SQL already
        return out


def _array_rows(rows: Sequence[Any], dim: int) -> tuple[list[int], list[str], np.ndarray]:
    """(seqs, ids, matrix) of rows (seq, id, array_send(embedding)) holding a well-formed
    vector of `dim` values; anything else (NULL elements, another shape) is skipped."""
    size = 20 + 8 * dim
    rows = [r for r in rows if r[2] is not None and len(r[2]) == size]
    if not rows:
        return [], [], np.zeros((0, dim), dtype=np.float32)
    buf = b"".join(r[2] for r in rows)
    head = np.ndarray(shape=(len(rows), 2), dtype=">i4", buffer=buf, strides=(size, 4))
    good = np.flatnonzero((head[:, 0] == 1) & (head[:, 1] == 0))  # one dimension, no NULLs
    values = np.ndarray(shape=(len(rows), dim), dtype=">f4", buffer=buf, offset=24,
                        strides=(size, 8))
    return ([rows[i][0] for i in good], [rows[i][1] for i in good],
            values[good].astype(np.float32))


#: Vectors of one embedding model (${p}: its id): recorded with it or before ids were kept;
#: every vector when the parameter is NULL.
OF_MODEL = "(${p}::text IS NULL OR embedding_model IS NULL OR embedding_model = ${p}::text)"

#: Rows streamed per query while an approximate index is built.
BUILD_CHUNK = 20_000

_VECTORS = ("SELECT seq, id, array_send(embedding) FROM memories WHERE namespace = $1 "
            "AND valid_until IS NULL AND array_length(embedding, 1) = $2 AND "
            + OF_MODEL.format(p=3))


class ArrayIndex:
    """Vectors in a real[] column; exact cosine search over in-process matrices that follow
    vector_changes (see the module docstring)."""

    mode = "array"

    def __init__(self, choice: VectorChoice, cache_size: int, max_bytes: int = 0,
                 inline_rows: int = INLINE_ROWS, ann_min_rows: int = 20_000,
                 index_dir: str | None = None):
        self.choice = choice
        self.ann_min_rows = ann_min_rows
        self._index_root = index_dir
        self.files = AnnFiles(None)  # replaced in load(), once the database is known
        self._cache = VectorCache(cache_size, max_bytes)
        self._locks = NamespaceLocks()
        #: A big namespace loads in the background; searches meanwhile get NotReady.
        self._loads = BackgroundLoads(self._cache, inline_rows, "array_cache_mb")
        #: How each search found its matrix (tests and benchmarks read it).
        self.refreshes: dict[str, int] = {"fresh": 0, "changes": 0, "reload": 0}

    column_type = "real[]"

    def describe(self) -> str:
        return (f"real[] + numpy exact cosine, faiss IVF (int8, re-scored) from "
                f"{self.ann_min_rows} rows (no pgvector: {self.choice.reason})")

    def server_settings(self) -> dict[str, str]:
        return {}

    async def init_connection(self, con: asyncpg.Connection) -> None:
        return None

    async def load(self, con: asyncpg.Connection) -> None:
        if self._index_root:
            # One folder per cluster, database and schema: a shared setting never mixes
            # two databases' files.
            try:
                async with con.transaction():
                    cluster = await con.fetchval(
                        "SELECT system_identifier::text FROM pg_control_system()")
            except asyncpg.PostgresError:
                cluster = await con.fetchval(
                    "SELECT coalesce(host(inet_server_addr()), 'local') || ':' || "
                    "current_setting('port')")
            where = await con.fetchval("SELECT current_database() || '/' || current_schema()")
            key = hashlib.sha256(f"{cluster}/{where}".encode()).hexdigest()[:24]
            self.files = AnnFiles(Path(self._index_root) / key)

    def param(self, vec: Sequence[float] | None) -> Any:
        return None if vec is None or len(vec) == 0 else as_float32(vec).tolist()

    async def ensure_indexes(self, pool: asyncpg.Pool, dims: set[int]) -> None:
        return None

    async def _index(self, pool: asyncpg.Pool, namespace: str, dim: int,
                     model: str | None = None) -> VectorIndex:
        """The namespace's matrix of `model`'s vectors with every committed change applied."""
        version = await pool.fetchval(
            "SELECT version FROM namespaces WHERE namespace = $1", namespace) or 0
        index = self._of_model(namespace, dim, model)
        if index is not None and (index.cursor == version or getattr(index, "saving", False)):
            self.refreshes["fresh"] += 1  # (while saving, changes wait in the log)
            return index
        async with self._locks(namespace):
            async with pool.acquire() as con:
                # The version and the changes from one snapshot.
                async with con.transaction(isolation="repeatable_read", readonly=True):
                    version = await con.fetchval(
                        "SELECT version FROM namespaces WHERE namespace = $1", namespace) or 0
                    index = self._of_model(namespace, dim, model)
                    if index is not None and index.cursor == version:
                        self.refreshes["fresh"] += 1
                        return index
                    if index is not None and await self._apply_changes(con, namespace, index,
                                                                       version):
                        self.refreshes["changes"] += 1
                        self._cache.trim()  # it may have grown past the byte budget
                        return index
                    rows_now = await con.fetchval(
                        "SELECT coalesce(ft_docs, 0) FROM namespaces WHERE namespace = $1",
                        namespace) or 0
            # Inline (small) under this lock, else in the background under it (NotReady now).
            if rows_now >= self.ann_min_rows:
                return await self._loads.load(
                    namespace, dim, rows_now, lambda: self._load_ann(pool, namespace, dim, model),
                    self._locks(namespace), ann_index.estimated_bytes(rows_now, dim))
            return await self._loads.load(namespace, dim, rows_now,
                                          lambda: self._load(pool, namespace, dim, model),
                                          self._locks(namespace))

    async def _load_ann(self, pool: asyncpg.Pool, namespace: str, dim: int,
                        model: str | None) -> AnnIndex:
        """The saved approximate index with the changes after its cursor applied, or a new
        one built from the rows (streamed) and saved."""
        path = self.files.path(namespace, dim)
        index = await asyncio.to_thread(AnnIndex.open, path, dim, model)
        if index is not None:
            async with pool.acquire() as con:
                async with con.transaction(isolation="repeatable_read", readonly=True):
                    version = await con.fetchval(
                        "SELECT version FROM namespaces WHERE namespace = $1", namespace) or 0
                    # A cursor ahead of the namespace: another database's file.
                    fresh = index.cursor <= version and (
                        index.cursor == version
                        or await self._apply_changes(con, namespace, index, version))
            if not fresh:
                log.info("vector index %s is behind the change log or not this database's; "
                         "rebuilding", path)
                ann_index.remove_files(path)
                index = None
        if index is None:
            erased = self.files.generation(namespace)
            index = await self._build_ann(pool, namespace, dim, model)
            if self.files.generation(namespace) != erased:
                raise NotReady("dense: this namespace was erased while its index was built")
            await self.files.save_now(namespace, index)
        self.refreshes["reload"] += 1
        self._cache.put(namespace, index)
        return index

    async def _build_ann(self, pool: asyncpg.Pool, namespace: str, dim: int,
                         model: str | None) -> AnnIndex:
        """`ann_index.build_streamed` over this namespace's rows; the version is read first."""
        version = await pool.fetchval(
            "SELECT version FROM namespaces WHERE namespace = $1", namespace) or 0
        rows_now = await pool.fetchval(
            "SELECT coalesce(ft_docs, 0) FROM namespaces WHERE namespace = $1", namespace) or 0
        return await ann_index.build_streamed(
            dim, version, model, rows_now, lambda: self._stream(pool, namespace, dim, model))

    async def _stream(self, pool: asyncpg.Pool, namespace: str, dim: int, model: str | None):
        """(seqs, ids, float32 block) of the namespace's current vectors, in chunks."""
        after = -1
        while True:
            rows = await pool.fetch(_VECTORS + " AND seq > $4 ORDER BY seq LIMIT $5",
                                    namespace, dim, model, after, BUILD_CHUNK)
            if not rows:
                return
            after = rows[-1][0]
            seqs, ids, block = await asyncio.to_thread(_array_rows, rows, dim)
            del rows
            yield seqs, ids, block

    async def _rebuild(self, pool: asyncpg.Pool, namespace: str, old: AnnIndex) -> None:
        """A stale index is replaced by a freshly trained one; the old one answers until
        then."""
        erased = self.files.generation(namespace)
        new = await self._build_ann(pool, namespace, old.dim, old.model)
        async with self._locks(namespace):
            if (self._cache.get(namespace, old.dim) is not old
                    or self.files.generation(namespace) != erased):
                return  # erased or reloaded meanwhile
            async with pool.acquire() as con:
                async with con.transaction(isolation="repeatable_read", readonly=True):
                    version = await con.fetchval(
                        "SELECT version FROM namespaces WHERE namespace = $1", namespace) or 0
                    ok = new.cursor == version or await self._apply_changes(
                        con, namespace, new, version)
            if ok:
                await self.files.save_now(namespace, new)
                self._cache.put(namespace, new)

    async def _load(self, pool: asyncpg.Pool, namespace: str, dim: int,
                    model: str | None) -> VectorIndex:
        """Every current vector of the namespace of width `dim` (and `model`), into the
        cache, streamed into a matrix sized once (peak memory near the final size). The
        version is read first: rows written after it are re-applied later, which is
        harmless (remove, then add); the other order could miss a change."""
        version = await pool.fetchval(
            "SELECT version FROM namespaces WHERE namespace = $1", namespace) or 0
        rows_now = await pool.fetchval(
            "SELECT coalesce(ft_docs, 0) FROM namespaces WHERE namespace = $1", namespace) or 0
        self.refreshes["reload"] += 1
        index = VectorIndex(dim, version)
        index.model = model  # type: ignore[attr-defined]
        index.reserve(rows_now + rows_now // 8)
        async for seqs, ids, block in self._stream(pool, namespace, dim, model):
            await maybe_in_thread(len(seqs) * dim, index.add_matrix, seqs, ids, block)
        self._cache.put(namespace, index)
        return index

    def loading(self) -> list[str]:
        return self._loads.loading()

    async def close(self) -> None:
        await self._loads.close()
        await self.files.close()

    async def _apply_changes(self, con: asyncpg.Connection, namespace: str, index: VectorIndex,
                             version: int) -> bool:
        """Apply the changes between the index's cursor and `version`; False when the index
        must reload instead (log pruned past the cursor, unstamped rows, most rows changed)."""
        if index.cursor < await con.fetchval("SELECT upto FROM vector_changes_pruned"):
            return False
        changes = await con.fetch(
            "SELECT memory_seq, version FROM vector_changes WHERE namespace = $1 "
            "AND (version > $2 OR version IS NULL)", namespace, index.cursor)
        if any(c["version"] is None for c in changes):
            # Committed but never stamped: a write that skipped its version bump. Safe path.
            log.warning("vector_changes of namespace %r has unstamped rows; reloading", namespace)
            return False
        seqs = sorted({c["memory_seq"] for c in changes})
        if len(seqs) > max(1000, len(index) // 2):
            return False
        rows = await con.fetch(_VECTORS + " AND seq = ANY($4::bigint[])", namespace, index.dim,
                               getattr(index, "model", None), seqs) if seqs else []
        index.remove(seqs)
        index.add_matrix(*_array_rows(rows, index.dim))
        index.cursor = version
        return True

    def _of_model(self, namespace: str, dim: int, model: str | None) -> VectorIndex | None:
        """The cached matrix, if it holds `model`'s vectors (a process embeds with one model;
        another model's matrix is rebuilt)."""
        index = self._cache.get(namespace, dim)
        return index if index is not None and getattr(index, "model", None) == model else None

    async def search(self, pool: asyncpg.Pool, namespace: str, vector: Sequence[float],
                     limit: int, model: str | None = None) -> list[ScoredId]:
        q = as_float32(vector)
        norm = float(np.linalg.norm(q))
        if not np.isfinite(norm) or norm == 0.0 or limit < 1:
            return []
        self._loads.refuse_while_loading(namespace, int(q.size))
        index = await self._index(pool, namespace, int(q.size), model)
        # Under the namespace lock: another coroutine applying writes to this same index
        # (remove, add, compact) while a thread searches it gave IndexErrors and, after a
        # compaction, wrong ids (issue 13 #5). SQLite's index is searched the same way.
        async with self._locks(namespace):
            if not isinstance(index, AnnIndex):
                hits = await maybe_in_thread(len(index) * index.dim, index.search, q, limit)
                return [ScoredId(id=mid, score=score) for mid, score in hits]
            seqs = await asyncio.to_thread(index.candidates, q, limit)
            self.files.after_search(namespace, index,
                                    lambda: self._rebuild(pool, namespace, index))
        return await self._rescore(pool, namespace, q, seqs, limit, model)

    async def _rescore(self, pool: asyncpg.Pool, namespace: str, q: np.ndarray,
                       seqs: np.ndarray, limit: int, model: str | None) -> list[ScoredId]:
        """Exact cosine of the candidates, from their stored vectors; only rows still
        active, of this namespace and model, count."""
        if not len(seqs):
            return []
        rows = await pool.fetch(_VECTORS + " AND seq = ANY($4::bigint[])", namespace,
                                int(q.size), model, [int(x) for x in seqs])
        _, ids, mat = _array_rows(rows, int(q.size))
        if not ids:
            return []
        norms = np.linalg.norm(mat, axis=1)
        norms[norms == 0] = 1.0
        scores = (mat @ (q / np.linalg.norm(q))) / norms
        top = np.argsort(-scores, kind="stable")[:limit]
        return [ScoredId(id=ids[i], score=float(scores[i])) for i in top]

    def forget(self, namespace: str) -> None:
        """Drop the namespace's vectors from this process (erase)."""
        self._cache.drop(namespace)
        self._loads.forget(namespace)
        self.files.forget(namespace)
