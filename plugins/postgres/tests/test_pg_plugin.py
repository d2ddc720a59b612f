"""Registration through the hook, settings validation, migrations and start-up reporting."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import ValidationError

import recall_postgres
from recall_core.config import RecallConfig, plugin_settings
from recall_core.errors import ConfigError
from recall_core.plugins import get_plugin_manager
from recall_core.testing import registrations
from recall_postgres import PostgresSettings, PostgresStorage
from recall_postgres.migrations import LATEST


def test_registers_both_url_schemes_with_typed_settings():
    pm = get_plugin_manager(load_entrypoints=False, defaults=False)
    pm.register(recall_postgres, name="postgres")
    try:
        registry = registrations(pm, "register_storage")
        assert registry.names() == ["postgres", "postgresql"]
        for name in registry.names():
            entry = registry.get(name)
            assert entry.settings is PostgresSettings
            storage = entry.factory("postgresql://u:secret@db.example:6543/recall",
                                    PostgresSettings(pool_max=3))
            assert isinstance(storage, PostgresStorage)
            assert "secret" not in storage.description
            assert "u@db.example:6543/recall" in storage.description
    finally:
        pm.unregister(name="postgres")


def test_entry_point_is_installed():
    from importlib.metadata import entry_points
    eps = {ep.name: ep.value for ep in entry_points(group="recall")}
    assert eps.get("postgres") == "recall_postgres"


def test_settings_are_validated_from_config_and_env(monkeypatch):
    cfg = RecallConfig(plugins={"postgres": {"pool_max": 4, "vector": "array"}})
    monkeypatch.setenv("RECALL_PLUGIN_POSTGRES_POOL_MIN", "2")
    s = plugin_settings(cfg, "postgres", PostgresSettings)
    assert (s.pool_min, s.pool_max, s.vector) == (2, 4, "array")
    with pytest.raises(ConfigError, match="unknown key 'pool_size'"):
        plugin_settings(RecallConfig(plugins={"postgres": {"pool_size": 4}}), "postgres",
                        PostgresSettings)
    with pytest.raises(ValidationError, match="pool_min"):
        PostgresSettings(pool_min=5, pool_max=2)
    with pytest.raises(ValidationError):
        PostgresSettings(vector="faiss")


async def test_unreachable_server_is_a_clear_config_error():
    s = PostgresStorage("postgresql://nobody@127.0.0.1:1/none", PostgresSettings(connect_timeout=2))
    with pytest.raises(ConfigError, match="Cannot connect to PostgreSQL at nobody@127.0.0.1:1/none"):
        await s.open()


async def test_concurrent_start_ups_migrate_once(db_url):
    # Six processes' worth of storages starting at the same moment on an empty database.
    storages = [PostgresStorage(db_url, PostgresSettings(pool_min=0, pool_max=2)) for _ in range(6)]
    try:
        await asyncio.gather(*[s.open() for s in storages])
        rows = await storages[0].pool.fetch("SELECT version FROM schema_version ORDER BY version")
        assert [r["version"] for r in rows] == list(range(1, LATEST + 1))
        assert {s.schema_version for s in storages} == {LATEST}
    finally:
        for s in storages:
            await s.close()


async def test_status_and_start_up_log(db_url, caplog):
    s = PostgresStorage(db_url, PostgresSettings(pool_min=1, pool_max=3))
    with caplog.at_level(logging.INFO, logger="recall_postgres"):
        await s.open()
    try:
        st = s.status()
        assert st["backend"] == "postgresql" and st["schema_version"] == LATEST
        assert st["pool"]["max"] == 3 and st["pool"]["size"] >= 1
        assert st["vector_mode"] in ("pgvector", "array")
        assert any("vectors:" in r.getMessage() for r in caplog.records)
        assert "vectors:" in s.description and "not opened" not in s.description
    finally:
        await s.close()


async def test_search_path_selects_the_schema(pg_scratch, make_storage):
    import uuid

    import asyncpg

    from recall_testkit.postgres import with_search_path
    schema = f"tenant_{uuid.uuid4().hex[:8]}"
    con = await asyncpg.connect(pg_scratch.url)
    await con.execute(f"CREATE SCHEMA {schema}")
    try:
        s = await make_storage(with_search_path(pg_scratch.url, schema))
        assert await s.pool.fetchval(f"SELECT to_regclass('{schema}.memories') IS NOT NULL")
        assert await s.pool.fetchval("SELECT to_regclass('public.memories') IS NULL")
        await s.close()
    finally:
        await con.execute(f"DROP SCHEMA {schema} CASCADE")
        await con.close()


async def at_migration_1(con) -> None:
    """Leave the database as recall-postgres with only its first migration did."""
    from recall_postgres.migrations import MIGRATIONS

    await con.execute("CREATE TABLE schema_version (version integer PRIMARY KEY, "
                      "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
    version, description, sql = MIGRATIONS[0]
    await con.execute(sql)
    await con.execute("INSERT INTO schema_version (version, description) VALUES ($1, $2)",
                      version, description)


async def test_upgrades_a_version_1_database_in_place(db_url, make_storage):
    import asyncpg

    con = await asyncpg.connect(db_url)
    try:
        # A database as recall-postgres with only migration 1 left it, with data in it.
        await at_migration_1(con)
        await con.execute("ALTER TABLE memories ADD COLUMN embedding real[]")
        await con.execute(
            "INSERT INTO memories (id, namespace, text, type, valid_from, created_at, search_text, "
            "session_id) VALUES ('m1', 'ns', 'Kept across upgrades', 'fact', now(), now(), "
            "'kept across upgrades', 's')")
    finally:
        await con.close()
    s = await make_storage(db_url)
    assert s.schema_version == LATEST >= 2
    assert (await s.latest_in_session("ns", "s")).text == "Kept across upgrades"
    assert [h.id for h in await s.search_fulltext("ns", ["upgrade"], 5)] == ["m1"]
    assert await s.ids_missing_embeddings(5) == [("ns", "m1", "Kept across upgrades")]


async def test_refuses_a_database_newer_than_itself(db_url, make_storage):
    await make_storage(db_url)
    import asyncpg
    con = await asyncpg.connect(db_url)
    await con.execute("INSERT INTO schema_version (version, description) VALUES (999, 'future')")
    await con.close()
    with pytest.raises(ConfigError, match="newer than this recall-postgres") as refused:
        await make_storage(db_url)
    # How to upgrade, as the README says: from the checkout. `pip install -U recall-postgres`
    # would look the name up on the public index, where it is not ours.
    assert "pip install -e . -e plugins/postgres" in str(refused.value)
    assert "-U" not in str(refused.value) and "Downgrades are not supported" in str(refused.value)


async def test_keys_spelt_apart_before_migration_11_are_merged(db_url, make_storage,
                                                              monkeypatch):
    # Migration 11 spells every stored fact key one way (recall_core.kit.keys.key_form) and
    # merges the keys that meet by the fact rules (the shared check in
    # recall_core.testing.key_migration).
    from recall_core.testing.key_migration import check_merged, write_spelt_apart
    from recall_postgres import migrations

    with monkeypatch.context() as m:
        m.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:10])
        m.setattr(migrations, "LATEST", 10)
        old = await make_storage(db_url)
        await write_spelt_apart(old)
        await old.close()
        make_storage.opened.remove(old)
    await check_merged(await make_storage(db_url))


async def test_a2a_tasks_stored_before_migration_10_are_listed_by_their_keys(db_url, make_storage):
    # Migration 10 reads context, state and status time out of the documents of tasks stored
    # before ListTasks paged in the database, so those tasks filter and order like new ones.
    import asyncpg

    from recall_core.testing.helpers import check_tasks_listed_by_keys, tasks_stored_before_task_keys

    con = await asyncpg.connect(db_url)
    try:
        await at_migration_1(con)
        await con.executemany("INSERT INTO a2a_tasks (namespace, task_id, data) VALUES ('ns', $1, $2)",
                              tasks_stored_before_task_keys())
    finally:
        await con.close()
    await check_tasks_listed_by_keys(await make_storage(db_url))