"""Schema migrations, numbered and recorded in `schema_version`.

`migrate()` runs in one transaction holding a transaction-level advisory lock, so when several
`recall serve` processes start at once exactly one applies the pending steps and the others
wait, then find nothing left to do. DDL is transactional in PostgreSQL: a failed step leaves
the schema as it was.

Everything lives in the first schema of the connection's `search_path` (add
`?search_path=myschema` to the URL to use another one).

The `embedding` column is not part of the numbered steps: its type depends on the server
(pgvector or not), so `vectors.setup_vector_column` adds or converts it after them, under the
same lock.
"""

from __future__ import annotations

import logging

import asyncpg

log = logging.getLogger("recall_postgres")

# pg_advisory_xact_lock key for migrations: "RECALLMG" as a 64-bit integer.
MIGRATION_LOCK = 0x524543414C4C4D47

_V1 = """
CREATE TABLE memories (
    id               text PRIMARY KEY,
    namespace        text NOT NULL,
    text             text NOT NULL,
    topic            text NOT NULL DEFAULT '',
    type             text NOT NULL
                     CHECK (type IN ('preference', 'fact', 'decision', 'procedure')),
    entity           text,
    attribute        text,
    value            text,
    importance       double precision NOT NULL DEFAULT 0.5,
    valid_from       timestamptz NOT NULL,
    valid_until      timestamptz,
    created_at       timestamptz NOT NULL,
    last_accessed_at timestamptz,
    access_count     integer NOT NULL DEFAULT 0,
    session_id       text,
    agent_id         text,
    source_job_id    text,
    -- `text` folded by recall_core.textproc.fold (lowercase, diacritics stripped), the same
    -- normalisation core applies to query terms, so 'Café' is found by 'cafe' whatever the
    -- server's locale or extensions. Written by the storage with every row.
    search_text      text NOT NULL,
    -- Kept in sync by PostgreSQL itself on every write of search_text.
    tsv              tsvector GENERATED ALWAYS AS (
                         to_tsvector('english'::regconfig, search_text)) STORED
);
CREATE INDEX memories_active_newest ON memories (namespace, created_at DESC, id DESC)
    WHERE valid_until IS NULL;
CREATE INDEX memories_oldest ON memories (namespace, created_at, id);
CREATE INDEX memories_triple ON memories (namespace, entity, attribute)
    WHERE entity IS NOT NULL;
CREATE INDEX memories_tsv ON memories USING gin (tsv);

CREATE TABLE operations (
    id              text PRIMARY KEY,
    namespace       text NOT NULL,
    idempotency_key text NOT NULL,
    kind            text NOT NULL,
    status          text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    payload         jsonb NOT NULL DEFAULT '{}'::jsonb,
    error           text,
    lease_until     timestamptz,
    created_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    -- Owner key of the process holding the claim (see queue.py: liveness via advisory lock).
    claimed_by      integer,
    UNIQUE (namespace, idempotency_key)
);
CREATE INDEX operations_ready ON operations (created_at, id)
    WHERE status IN ('queued', 'running');
CREATE INDEX operations_ns_status ON operations (namespace, status);

CREATE TABLE api_tokens (
    token_hash text PRIMARY KEY,
    namespace  text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE INDEX api_tokens_namespace ON api_tokens (namespace);

CREATE TABLE tool_call_records (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tool        text NOT NULL,
    namespace   text,
    inputs_hash text NOT NULL,
    status      text NOT NULL CHECK (status IN ('ok', 'error')),
    code        text,
    duration_ms double precision NOT NULL,
    at          timestamptz NOT NULL
);
CREATE INDEX tool_call_records_ns_at ON tool_call_records (namespace, at);

CREATE TABLE a2a_tasks (
    namespace  text NOT NULL,
    task_id    text NOT NULL,
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (namespace, task_id)
);

-- namespace_version(): a global sequence, so a version never repeats, not even after a
-- namespace is erased and written again (a cache keyed by it can never be fooled).
CREATE SEQUENCE namespace_version_seq;
CREATE TABLE namespaces (
    namespace text PRIMARY KEY,
    version   bigint NOT NULL
);
"""

# (version, description, SQL). Append only; never edit a released step.
MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "memories, operations, tokens, audit, a2a tasks, namespace versions", _V1),
]

LATEST = MIGRATIONS[-1][0]


async def current_version(con: asyncpg.Connection) -> int:
    exists = await con.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    return int(await con.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))


async def migrate(con: asyncpg.Connection) -> list[int]:
    """Apply pending steps. Call inside a transaction that holds MIGRATION_LOCK."""
    await con.execute("""
        CREATE TABLE IF NOT EXISTS schema_version (
            version     integer PRIMARY KEY,
            description text NOT NULL,
            applied_at  timestamptz NOT NULL DEFAULT now()
        )""")
    have = await current_version(con)
    if have > LATEST:
        raise RuntimeError(
            f"The database schema is at version {have}, newer than this recall-postgres "
            f"understands ({LATEST}). Upgrade recall-postgres (pip install -U recall-postgres) "
            f"or point RECALL_DB_URL at another database.")
    applied = []
    for version, description, sql in MIGRATIONS:
        if version <= have:
            continue
        log.info("applying schema migration %d: %s", version, description)
        await con.execute(sql)
        await con.execute("INSERT INTO schema_version (version, description) VALUES ($1, $2)",
                          version, description)
        applied.append(version)
    return applied
