"""Versioned schema migrations.

`MIGRATIONS` is append-only: each entry is (version, statements) and runs once, in its own
transaction, recorded in `schema_version`. Never edit a released migration; add a new one.
"""

from __future__ import annotations

from typing import Any

import aiosqlite

from .codec import now_text
from .fts_terms import COUNT as FTS_COUNT, FUNCTION as FTS_TERMS
from .respell import respell_keys
from .webhooks import SCHEMA as WEBHOOK_SCHEMA

#: A step is SQL, or an async function of the connection (for a rule core writes in Python).
Migration = tuple[int, tuple[Any, ...]]

#: Tokens of the full-text `pad` column (migration 4): a floor under FTS5's average row length.
PAD_TOKENS = 24
PAD = "'" + " ".join(["pad"] * PAD_TOKENS) + "'"

MIGRATIONS: tuple[Migration, ...] = (
    (1, (
        # `seq` is the rowid the FTS index points at; `id` is the public uuid.
        """CREATE TABLE memories (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            text TEXT NOT NULL,
            topic TEXT NOT NULL DEFAULT '',
            type TEXT NOT NULL,
            entity TEXT,
            attribute TEXT,
            value TEXT,
            importance REAL NOT NULL,
            valid_from TEXT NOT NULL,
            valid_until TEXT,
            created_at TEXT NOT NULL,
            last_accessed_at TEXT,
            access_count INTEGER NOT NULL DEFAULT 0,
            session_id TEXT,
            agent_id TEXT,
            source_job_id TEXT,
            embedding BLOB
        )""",
        # Active rows, newest first (inspect), and the count of a namespace's active rows.
        "CREATE INDEX memories_active ON memories (namespace, created_at, seq) "
        "WHERE valid_until IS NULL",
        # Every row of a namespace, oldest first (export, history, delete_namespace).
        "CREATE INDEX memories_all ON memories (namespace, created_at, seq)",
        "CREATE INDEX memories_triple ON memories (namespace, entity, attribute)",
        # Backfill queue of the embedder: tiny once everything has a vector.
        "CREATE INDEX memories_no_vector ON memories (seq) "
        "WHERE valid_until IS NULL AND embedding IS NULL",
        # Full text over active rows only (superseded rows leave the index), so a search never
        # pays for history. Contentless: we only need rowids and bm25(). The `ns` column holds
        # one token per namespace ('ns' || hex(namespace): injective, tokenizer-safe), so the
        # MATCH itself is namespace-scoped and other tenants' rows are never even scored.
        """CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, ns, content='', tokenize='porter unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
            WHEN new.valid_until IS NULL BEGIN
            INSERT INTO memories_fts (rowid, text, ns)
                VALUES (new.seq, new.text, 'ns' || hex(new.namespace));
        END""",
        """CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
            WHEN old.valid_until IS NULL BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns)
                VALUES ('delete', old.seq, old.text, 'ns' || hex(old.namespace));
        END""",
        """CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, valid_until, namespace
            ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns)
                SELECT 'delete', old.seq, old.text, 'ns' || hex(old.namespace)
                WHERE old.valid_until IS NULL;
            INSERT INTO memories_fts (rowid, text, ns)
                SELECT new.seq, new.text, 'ns' || hex(new.namespace)
                WHERE new.valid_until IS NULL;
        END""",
        # Active memories per (namespace, type), kept by triggers: stats(), list totals and
        # the full-text term pruning read one row instead of counting an index.
        """CREATE TABLE active_counts (
            namespace TEXT NOT NULL,
            type TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (namespace, type)
        ) WITHOUT ROWID""",
        """CREATE TRIGGER memories_count_insert AFTER INSERT ON memories
            WHEN new.valid_until IS NULL BEGIN
            INSERT INTO active_counts (namespace, type, n) VALUES (new.namespace, new.type, 1)
                ON CONFLICT (namespace, type) DO UPDATE SET n = n + 1;
        END""",
        """CREATE TRIGGER memories_count_delete AFTER DELETE ON memories
            WHEN old.valid_until IS NULL BEGIN
            UPDATE active_counts SET n = n - 1
                WHERE namespace = old.namespace AND type = old.type;
        END""",
        """CREATE TRIGGER memories_count_update AFTER UPDATE OF valid_until, type, namespace
            ON memories BEGIN
            UPDATE active_counts SET n = n - 1
                WHERE old.valid_until IS NULL AND namespace = old.namespace AND type = old.type;
            INSERT INTO active_counts (namespace, type, n)
                SELECT new.namespace, new.type, 1 WHERE new.valid_until IS NULL
                ON CONFLICT (namespace, type) DO UPDATE SET n = n + 1;
        END""",
        # Change log of searchable vectors, read by the in-process vector indexes (vectors.py)
        # to update incrementally. Pruned from the front; `vector_events_pruned` tells a
        # reader whose cursor fell behind that it must reload. memory_seq -1 = reset.
        """CREATE TABLE vector_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            memory_seq INTEGER NOT NULL
        )""",
        "CREATE INDEX vector_events_namespace ON vector_events (namespace, seq)",
        "CREATE TABLE vector_events_pruned (id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL)",
        "INSERT INTO vector_events_pruned (id, upto) VALUES (1, 0)",
        """CREATE TRIGGER memories_vector_insert AFTER INSERT ON memories
            WHEN new.embedding IS NOT NULL AND new.valid_until IS NULL BEGIN
            INSERT INTO vector_events (namespace, memory_seq) VALUES (new.namespace, new.seq);
        END""",
        """CREATE TRIGGER memories_vector_update AFTER UPDATE OF embedding, valid_until ON memories
            WHEN (old.embedding IS NOT NULL AND old.valid_until IS NULL)
              OR (new.embedding IS NOT NULL AND new.valid_until IS NULL) BEGIN
            INSERT INTO vector_events (namespace, memory_seq) VALUES (new.namespace, new.seq);
        END""",
        """CREATE TRIGGER memories_vector_delete AFTER DELETE ON memories
            WHEN old.embedding IS NOT NULL AND old.valid_until IS NULL BEGIN
            INSERT INTO vector_events (namespace, memory_seq) VALUES (old.namespace, old.seq);
        END""",
        """CREATE TABLE operations (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            idempotency_key TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            payload TEXT NOT NULL,
            error TEXT,
            lease_until TEXT,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            UNIQUE (namespace, idempotency_key)
        )""",
        "CREATE INDEX operations_queue ON operations (status, created_at)",
        "CREATE INDEX operations_namespace ON operations (namespace, status)",
        """CREATE TABLE api_tokens (
            token_hash TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        "CREATE INDEX api_tokens_namespace ON api_tokens (namespace)",
        """CREATE TABLE tool_call_records (
            seq INTEGER PRIMARY KEY,
            tool TEXT NOT NULL,
            namespace TEXT,
            inputs_hash TEXT NOT NULL,
            status TEXT NOT NULL,
            code TEXT,
            duration_ms REAL NOT NULL,
            at TEXT NOT NULL
        )""",
        "CREATE INDEX tool_call_records_namespace ON tool_call_records (namespace, at)",
        """CREATE TABLE a2a_tasks (
            namespace TEXT NOT NULL,
            task_id TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (namespace, task_id)
        )""",
        # namespace_version(): every change of a namespace's active memories stores the next
        # value of one global counter, so a version is never reused, not even after
        # delete_namespace dropped the row (a stale cache can never look fresh).
        """CREATE TABLE namespace_versions (
            namespace TEXT PRIMARY KEY,
            version INTEGER NOT NULL
        )""",
        """CREATE TABLE version_counter (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            value INTEGER NOT NULL
        )""",
        "INSERT INTO version_counter (id, value) VALUES (1, 0)",
    )),
    (2, (
        # The decay job's base: the importance before decay. NULL = same as `importance`
        # (nothing decayed since it was last written); `importance` is what tools see.
        "ALTER TABLE memories ADD COLUMN base_importance REAL",
    )),
    (3, (
        # What was said just before in the session (Memory.context): indexed at a low weight
        # so a turn is found by the question it answers. The FTS table gains a column, so it
        # is rebuilt with its triggers.
        "ALTER TABLE memories ADD COLUMN context TEXT",
        "DROP TRIGGER memories_fts_insert",
        "DROP TRIGGER memories_fts_delete",
        "DROP TRIGGER memories_fts_update",
        "DROP TABLE memories_fts",
        """CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, ns, context, content='', tokenize='porter unicode61 remove_diacritics 2'
        )""",
        """INSERT INTO memories_fts (rowid, text, ns, context)
            SELECT seq, text, 'ns' || hex(namespace), coalesce(context, '') FROM memories
            WHERE valid_until IS NULL""",
        """CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
            WHEN new.valid_until IS NULL BEGIN
            INSERT INTO memories_fts (rowid, text, ns, context)
                VALUES (new.seq, new.text, 'ns' || hex(new.namespace), coalesce(new.context, ''));
        END""",
        """CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
            WHEN old.valid_until IS NULL BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns, context)
                VALUES ('delete', old.seq, old.text, 'ns' || hex(old.namespace),
                        coalesce(old.context, ''));
        END""",
        """CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, valid_until, namespace, context
            ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns, context)
                SELECT 'delete', old.seq, old.text, 'ns' || hex(old.namespace),
                       coalesce(old.context, '')
                WHERE old.valid_until IS NULL;
            INSERT INTO memories_fts (rowid, text, ns, context)
                SELECT new.seq, new.text, 'ns' || hex(new.namespace), coalesce(new.context, '')
                WHERE new.valid_until IS NULL;
        END""",
    )),
    (4, (
        # bm25() spent ~0.85 of its ~1 us per matching row looking up the row's length in
        # memories_fts_docsize. `columnsize=0` drops that table: bm25() then takes every row
        # to be one length (-1 token per indexed column, FTS5's contentless convention), i.e.
        # keyword scores ignore length. Memories are short; on LoCoMo this changed recall@10
        # by -0.001 while searches at 100k rows got ~3x faster (bench/RESULTS.md).
        # With that constant length, bm25's per-term saturation is
        # k1 * (1 - b - b * columns / avgdl), which must stay positive (else a context-only
        # hit outscores a text hit, and the max-score bound in fulltext.py breaks): it needs
        # avgdl > 12 for 4 columns. The `pad` column, never queried and weighted 0, holds
        # PAD_TOKENS tokens per row so avgdl is at least 25 whatever the memories' lengths.
        "DROP TRIGGER memories_fts_insert",
        "DROP TRIGGER memories_fts_delete",
        "DROP TRIGGER memories_fts_update",
        "DROP TABLE memories_fts",
        """CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, ns, context, pad, content='', columnsize=0,
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
        f"""INSERT INTO memories_fts (rowid, text, ns, context, pad)
            SELECT seq, text, 'ns' || hex(namespace), coalesce(context, ''), {PAD} FROM memories
            WHERE valid_until IS NULL""",
        f"""CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
            WHEN new.valid_until IS NULL BEGIN
            INSERT INTO memories_fts (rowid, text, ns, context, pad)
                VALUES (new.seq, new.text, 'ns' || hex(new.namespace), coalesce(new.context, ''),
                        {PAD});
        END""",
        f"""CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
            WHEN old.valid_until IS NULL BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns, context, pad)
                VALUES ('delete', old.seq, old.text, 'ns' || hex(old.namespace),
                        coalesce(old.context, ''), {PAD});
        END""",
        f"""CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, valid_until, namespace, context
            ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns, context, pad)
                SELECT 'delete', old.seq, old.text, 'ns' || hex(old.namespace),
                       coalesce(old.context, ''), {PAD}
                WHERE old.valid_until IS NULL;
            INSERT INTO memories_fts (rowid, text, ns, context, pad)
                SELECT new.seq, new.text, 'ns' || hex(new.namespace), coalesce(new.context, ''),
                       {PAD}
                WHERE new.valid_until IS NULL;
        END""",
        "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')",
    )),
    (5, (
        # Admin API and inspector (recall_core/admin): admin tokens apart from namespace tokens
        # (so MCP can never accept one), and audit rows of admin actions, which outlive the
        # namespaces they name.
        """CREATE TABLE admin_tokens (
            token_hash TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        """CREATE TABLE admin_actions (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            namespace TEXT,
            detail TEXT NOT NULL,
            result TEXT NOT NULL,
            error TEXT
        )""",
    )),
    (6, (
        # Memory integrity (issue 13). superseded_by links a history row to its successor
        # (forget follows it); pinned rows are skipped by decay.
        "ALTER TABLE memories ADD COLUMN superseded_by TEXT",
        "ALTER TABLE memories ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
        # Fact keys compare case- and space-insensitively (recall_core.memory.facts.norm_key);
        # rows written by an older verbatim import may hold "User"/"Editor".
        """UPDATE memories SET entity = lower(trim(entity)), attribute = lower(trim(attribute))
            WHERE entity IS NOT NULL AND attribute IS NOT NULL
              AND (entity != lower(trim(entity)) OR attribute != lower(trim(attribute)))""",
        # Races before this version could leave two current rows of one key: the newest
        # statement stays current, the others end where it begins.
        """UPDATE memories AS m SET valid_until = k.valid_from, superseded_by = k.id
            FROM (SELECT namespace, entity, attribute, id, valid_from FROM (
                    SELECT namespace, entity, attribute, id, valid_from, row_number() OVER (
                        PARTITION BY namespace, entity, attribute
                        ORDER BY valid_from DESC, seq DESC) AS rn
                      FROM memories WHERE valid_until IS NULL AND entity IS NOT NULL
                       AND attribute IS NOT NULL AND value IS NOT NULL) WHERE rn = 1) AS k
           WHERE m.valid_until IS NULL AND m.value IS NOT NULL AND m.namespace = k.namespace
             AND m.entity = k.entity AND m.attribute = k.attribute AND m.id != k.id""",
        # The database itself refuses a second current value of one fact.
        """CREATE UNIQUE INDEX memories_one_current ON memories (namespace, entity, attribute)
            WHERE valid_until IS NULL AND entity IS NOT NULL AND attribute IS NOT NULL
              AND value IS NOT NULL""",
        "CREATE INDEX memories_successor ON memories (superseded_by) WHERE superseded_by IS NOT NULL",
    )),
    (7, (
        # Which embedding model made each vector (issue 14): search compares only vectors of
        # the configured model; `recall reindex` re-embeds the others. NULL: stored before
        # model ids were recorded.
        "ALTER TABLE memories ADD COLUMN embedding_model TEXT",
        "CREATE INDEX memories_embedding_model ON memories (namespace, embedding_model, seq) "
        "WHERE embedding IS NOT NULL",
    )),
    (8, (
        # A2A ListTasks filters, orders and pages in the database (issue 15): the fields it
        # needs, beside the task document (recall_core.server.a2a.task_store.task_keys).
        "ALTER TABLE a2a_tasks ADD COLUMN context_id TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE a2a_tasks ADD COLUMN state TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE a2a_tasks ADD COLUMN status_ns INTEGER",
        # Existing tasks: read from the document. Its timestamp is RFC 3339 in UTC ("Z") with
        # 0 to 9 fractional digits: whole seconds from strftime, the fraction padded to ns.
        """UPDATE a2a_tasks SET
             context_id = coalesce(json_extract(data, '$.task.contextId'), ''),
             state = coalesce(json_extract(data, '$.task.status.state'), 'TASK_STATE_UNSPECIFIED'),
             status_ns = (SELECT CAST(strftime('%s', t) AS INTEGER) * 1000000000
                                 + CAST(substr(CASE WHEN instr(t, '.') > 0
                                                    THEN substr(t, instr(t, '.') + 1,
                                                                length(t) - instr(t, '.') - 1)
                                                    ELSE '' END || '000000000', 1, 9) AS INTEGER)
                            FROM (SELECT json_extract(data, '$.task.status.timestamp') AS t)
                           WHERE t IS NOT NULL)""",
        "CREATE INDEX a2a_tasks_listing ON a2a_tasks (namespace, status_ns, task_id)",
    )),
    (9, (
        # Search's neighbour step (issue 14) reads the memories just before and after each
        # candidate in its session: two index seeks a candidate instead of a namespace scan.
        "CREATE INDEX memories_session_order ON memories (namespace, session_id, created_at, seq) "
        "WHERE valid_until IS NULL AND session_id IS NOT NULL",
    )),
    (10, (
        # Fact keys spelt one way (recall_core.kit.keys.key_form: NFKC, case fold, no
        # invisible characters, one space); keys that meet are merged by the fact rules.
        respell_keys,
    )),
    (11, (
        # A fair queue (issue 28): claims take turns across namespaces (the one served least
        # recently first) and, within one, go in enqueue order: never by created_at, which is
        # the caller's "when it was said". enqueued_seq numbers inserts (rowid is not stable
        # across VACUUM); claimed_at stamps a namespace's turns.
        "ALTER TABLE operations ADD COLUMN enqueued_seq INTEGER",
        "ALTER TABLE operations ADD COLUMN claimed_at TEXT",
        "UPDATE operations SET enqueued_seq = rowid",
        "CREATE UNIQUE INDEX operations_enqueued ON operations (enqueued_seq)",
        "CREATE INDEX operations_fair ON operations (status, namespace, enqueued_seq)",
        "CREATE INDEX operations_turns ON operations (namespace, claimed_at) "
        "WHERE claimed_at IS NOT NULL",
    )),
    (12, (
        # Scoped tokens (issue 29): a token may be bound to an agent inside its namespace and
        # carry scopes; NULL scopes (every token made before) means all of them.
        "ALTER TABLE api_tokens ADD COLUMN agent TEXT",
        "ALTER TABLE api_tokens ADD COLUMN scopes TEXT",
    )),
    (13, (
        # The retrieval audit (issue 30): which memories each search returned, by rank and
        # score, under its tool-call record; erased with the namespace, and a memory's rows
        # go when it is forgotten.
        "ALTER TABLE tool_call_records ADD COLUMN call_id TEXT",
        "CREATE UNIQUE INDEX tool_call_records_call ON tool_call_records (call_id)",
        """CREATE TABLE retrieval_results (
            call_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            rank INTEGER NOT NULL,
            score REAL NOT NULL,
            at TEXT NOT NULL,
            PRIMARY KEY (call_id, rank)
        )""",
        "CREATE INDEX retrieval_results_memory ON retrieval_results (memory_id, at)",
        "CREATE INDEX retrieval_results_namespace ON retrieval_results (namespace)",
    )),
    (14, (
        # Recall's own OAuth authorization server (issue 29, recall_sqlite.oauth): registered
        # clients, single-use codes, grants (what the owner approved) and their tokens. Codes
        # and tokens by SHA-256 only.
        """CREATE TABLE oauth_clients (
            client_id TEXT PRIMARY KEY,
            document TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE oauth_grants (
            grant_id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            agent TEXT,
            scopes TEXT NOT NULL,
            client_id TEXT NOT NULL,
            client_name TEXT,
            redirect_uri TEXT NOT NULL,
            resource TEXT,
            created_at TEXT NOT NULL,
            revoked_at TEXT,
            refreshed_at TEXT
        )""",
        "CREATE INDEX oauth_grants_namespace ON oauth_grants (namespace, created_at)",
        """CREATE TABLE oauth_codes (
            code_hash TEXT PRIMARY KEY,
            grant_id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            agent TEXT,
            scopes TEXT NOT NULL,
            client_id TEXT NOT NULL,
            client_name TEXT,
            redirect_uri TEXT NOT NULL,
            resource TEXT,
            code_challenge TEXT NOT NULL,
            redirect_uri_explicit INTEGER NOT NULL,
            expires_at TEXT NOT NULL,
            redeemed_at TEXT
        )""",
        "CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at)",
        """CREATE TABLE oauth_tokens (
            token_hash TEXT PRIMARY KEY,
            grant_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            expires_at TEXT,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        )""",
        "CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id)",
    )),
    # Webhooks (issue 30): subscriptions, the transactional outbox and its deliveries
    # (webhooks.py), in one step.
    (15, WEBHOOK_SCHEMA),
    (16, (
        # Full text per tenant (issue 31): the text and context columns hold each word
        # prefixed with the namespace's number (fts_terms.py), so a term's doclist is one
        # namespace's and a small tenant's search no longer walks every tenant's postings.
        # The columns, the ns token and the pad stay as they were; the index is rebuilt from
        # the active rows. fts_namespaces also counts each namespace's indexed rows and
        # tokens (all columns, as FTS5 counts them: text, context, 1 ns token, the pad), so
        # BM25's row count and average length can be the namespace's (fulltext.py).
        # AUTOINCREMENT: a number is never given to another namespace, even after an erase.
        """CREATE TABLE fts_namespaces (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL UNIQUE,
            docs INTEGER NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL DEFAULT 0
        )""",
        "DROP TRIGGER memories_fts_insert",
        "DROP TRIGGER memories_fts_delete",
        "DROP TRIGGER memories_fts_update",
        "DROP TABLE memories_fts",
        """CREATE VIRTUAL TABLE memories_fts USING fts5(
            text, ns, context, pad, content='', columnsize=0,
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
        f"""INSERT INTO fts_namespaces (namespace, docs, tokens)
            SELECT namespace, count(*),
                   sum({FTS_COUNT}(text) + {FTS_COUNT}(context) + {1 + PAD_TOKENS})
              FROM memories WHERE valid_until IS NULL GROUP BY namespace ORDER BY namespace""",
        f"""INSERT INTO memories_fts (rowid, text, ns, context, pad)
            SELECT m.seq, {FTS_TERMS}(f.id, m.text), 'ns' || hex(m.namespace),
                   {FTS_TERMS}(f.id, m.context), {PAD}
              FROM memories AS m JOIN fts_namespaces AS f ON f.namespace = m.namespace
             WHERE m.valid_until IS NULL""",
        f"""CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
            WHEN new.valid_until IS NULL BEGIN
            INSERT INTO fts_namespaces (namespace) VALUES (new.namespace)
                ON CONFLICT (namespace) DO NOTHING;
            UPDATE fts_namespaces SET docs = docs + 1, tokens = tokens + {FTS_COUNT}(new.text)
                   + {FTS_COUNT}(new.context) + {1 + PAD_TOKENS}
             WHERE namespace = new.namespace;
            INSERT INTO memories_fts (rowid, text, ns, context, pad)
                SELECT new.seq, {FTS_TERMS}(f.id, new.text), 'ns' || hex(new.namespace),
                       {FTS_TERMS}(f.id, new.context), {PAD}
                  FROM fts_namespaces AS f WHERE f.namespace = new.namespace;
        END""",
        f"""CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
            WHEN old.valid_until IS NULL BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns, context, pad)
                SELECT 'delete', old.seq, {FTS_TERMS}(f.id, old.text), 'ns' || hex(old.namespace),
                       {FTS_TERMS}(f.id, old.context), {PAD}
                  FROM fts_namespaces AS f WHERE f.namespace = old.namespace;
            UPDATE fts_namespaces SET docs = docs - 1, tokens = tokens - {FTS_COUNT}(old.text)
                   - {FTS_COUNT}(old.context) - {1 + PAD_TOKENS}
             WHERE namespace = old.namespace;
        END""",
        f"""CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, valid_until, namespace, context
            ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, ns, context, pad)
                SELECT 'delete', old.seq, {FTS_TERMS}(f.id, old.text), 'ns' || hex(old.namespace),
                       {FTS_TERMS}(f.id, old.context), {PAD}
                  FROM fts_namespaces AS f
                 WHERE f.namespace = old.namespace AND old.valid_until IS NULL;
            UPDATE fts_namespaces SET docs = docs - 1, tokens = tokens - {FTS_COUNT}(old.text)
                   - {FTS_COUNT}(old.context) - {1 + PAD_TOKENS}
             WHERE namespace = old.namespace AND old.valid_until IS NULL;
            INSERT INTO fts_namespaces (namespace) SELECT new.namespace
                WHERE new.valid_until IS NULL ON CONFLICT (namespace) DO NOTHING;
            UPDATE fts_namespaces SET docs = docs + 1, tokens = tokens + {FTS_COUNT}(new.text)
                   + {FTS_COUNT}(new.context) + {1 + PAD_TOKENS}
             WHERE namespace = new.namespace AND new.valid_until IS NULL;
            INSERT INTO memories_fts (rowid, text, ns, context, pad)
                SELECT new.seq, {FTS_TERMS}(f.id, new.text), 'ns' || hex(new.namespace),
                       {FTS_TERMS}(f.id, new.context), {PAD}
                  FROM fts_namespaces AS f
                 WHERE f.namespace = new.namespace AND new.valid_until IS NULL;
        END""",
        "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')",
    )),
)

LATEST = MIGRATIONS[-1][0]


async def migrate(db: aiosqlite.Connection) -> list[int]:
    """Apply pending migrations; returns the versions applied (empty when up to date).

    Each runs under BEGIN IMMEDIATE, so two processes opening a new file at once cannot both
    apply it: the second waits (busy_timeout), then sees the version recorded.
    """
    applied: list[int] = []
    await db.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    for version, statements in MIGRATIONS:
        await db.execute("BEGIN IMMEDIATE")
        try:
            rows = await db.execute_fetchall(
                "SELECT 1 FROM schema_version WHERE version = ?", (version,))
            if rows:
                await db.execute("ROLLBACK")
                continue
            for sql in statements:
                if callable(sql):
                    await sql(db)
                else:
                    await db.execute(sql)
            await db.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                             (version, now_text()))
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied

