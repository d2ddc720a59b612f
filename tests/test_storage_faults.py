"""Storage faults named, through the real server and the real MCP client: a SQLite database
on a filesystem that fills up (a real tmpfs, mounted here as root), and a PostgreSQL database
that refuses writes (default_transaction_read_only on our own scratch database, its sessions
reconnected as after a failover). Stores answer STORAGE_FULL / STORAGE_READ_ONLY with what to
do, /health says degraded with the reason and recovers when the condition clears, and every
store acknowledged before, during and after is extracted once, none failed."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest

from recall_testkit.backends import PG_URL
from recall_testkit.serverproc import Agent, ServerProcess

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.slow]

FAST = {"RECALL_WORKER__RETRY_BACKOFF": "0.2", "RECALL_WORKER__CONCURRENCY": "1"}


def health(srv: ServerProcess, token: str | None = None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = httpx.get(srv.base + "/health", headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


async def until(check, timeout: float = 30, every: float = 0.3):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(every)


@pytest.fixture
def small_fs(tmp_path):
    """A real 8 MB tmpfs: SQLite meets ENOSPC exactly as on a full disk."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root (this test fills a real filesystem)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(path: Path) -> Path:
    """Write a filler file until the filesystem says ENOSPC (unbuffered: every byte that
    fitted is written)."""
    filler = path / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 16, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


async def store_until_refused(a: Agent, texts: list[str], code: str
                              ) -> tuple[dict[str, str], dict]:
    """Store texts until one answers `code`; returns ({key: text} acknowledged, the refusal)."""
    acked = {}
    for i, text in enumerate(texts):
        key = f"k-{i}"
        try:
            env = await a.call("store_memory", text=text, idempotency_key=key)
        except Exception as exc:  # noqa: BLE001 - the token check met a dropped connection:
            assert "503" in str(exc) or "Server returned an error" in str(exc), exc
            continue  # HTTP 503 STORAGE_UNAVAILABLE before the tool ran; nothing acknowledged
        if env["status"] == "ok":
            acked[key] = text
            continue
        assert env["code"] in (code, "STORAGE_UNAVAILABLE"), env  # a dropped connection first
        if env["code"] == code:
            return acked, {**env, "key": key, "text": text}
    raise AssertionError(f"no store answered {code} after {len(texts)} stores")


async def all_done(a: Agent, stores: dict[str, str]) -> None:
    """Every acknowledged store's job ended done (resent with its key: cached, its status)."""
    for key, text in stores.items():
        again = await a.ok("store_memory", text=text, idempotency_key=key)
        assert again["queued"] is False and again["status"] == "done", (key, again)


async def test_sqlite_on_a_full_filesystem(small_fs):
    # Extraction held at a gate (a file outside the full filesystem), so acknowledged stores
    # are still queued when the disk fills, and the worker meets the full disk on its writes.
    gate = small_fs.parent / "gate"
    env = {**FAST, "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.gated_extractor",
           "RECALL_EXTRACTOR": "gated", "GATED_EXTRACTOR_GATE": str(gate),
           "RECALL_WORKER__LEASE_SECONDS": "10"}
    srv = ServerProcess(str(small_fs / "recall.db"), small_fs.parent, env=env).start()
    filler = None
    try:
        token = srv.token("fran")
        async with Agent(srv.url, token) as a:
            queued = {f"q-{i}": f"Note {i}: the staging cluster number {i} lives in rack r{i}."
                      for i in range(10)}
            for key, text in queued.items():
                await a.ok("store_memory", text=text, idempotency_key=key)
            filler = fill(small_fs)
            texts = [f"Fact {i}: the build agent number {i} runs on host h{i}.example.lan "
                     + "with notes " * 200 for i in range(400)]
            acked, refused = await store_until_refused(a, texts, "STORAGE_FULL")
            msg = refused["error"]
            assert "disk is full" in msg and "free space" in msg and "idempotency_key" in msg

            # /health names it (publicly without the driver's words; with a token, with them).
            public = health(srv)
            assert public["status"] == "degraded"
            assert any(r.startswith("storage: STORAGE_FULL") for r in public["degraded"])
            detailed = health(srv, token)
            assert any("STORAGE_FULL" in r and "full" in r for r in detailed["degraded"])

            # The worker meets the full disk for longer than max_attempts (5) retries would
            # last: its jobs go back uncounted, none fails.
            gate.touch()
            await asyncio.sleep(8)
            stats = await a.ok("get_memory_stats")
            assert stats["failed_extractions"] == 0, stats
            assert stats["pending_extractions"] > 0, stats
            assert health(srv)["status"] == "degraded"

            filler.unlink()
            filler = None
            await until(lambda: health(srv)["status"] == "ok", timeout=20)
            # The refused store, retried with its key, is queued now, once.
            again = await a.ok("store_memory", text=refused["text"],
                               idempotency_key=refused["key"])
            assert again["queued"] is True
            stats = await a.wait_idle(timeout=120)
            assert stats["failed_extractions"] == 0, stats
            await all_done(a, {**queued, **acked, refused["key"]: refused["text"]})
        srv.stop()
        srv.start()  # what was acknowledged is on disk, not only in a live process
        async with Agent(srv.url, token) as a:
            stats = await a.ok("get_memory_stats")
            assert stats["pending_extractions"] == 0 and stats["failed_extractions"] == 0
            await all_done(a, {**queued, **acked, refused["key"]: refused["text"]})
    finally:
        if filler is not None and filler.exists():
            filler.unlink()
        srv.stop()


@pytest.fixture
async def pg_database():
    """A database of our own on the test server (made read-only by the test, dropped after)."""
    if not PG_URL:
        pytest.skip("RECALL_TEST_PG_URL not set: the Postgres half of this test")
    import asyncpg

    from recall_testkit.postgres import with_database

    name = f"recall_ro_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(PG_URL)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin, name, with_database(PG_URL, name)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def reconnect_sessions(admin, name: str) -> None:
    """End the server's sessions on `name`, as a failover does: its pool reconnects, and new
    sessions take the database's settings."""
    await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = $1 AND pid <> pg_backend_pid()", name)


async def test_postgres_that_refuses_writes(tmp_path, pg_database):
    admin, name, url = pg_database
    srv = ServerProcess(url, tmp_path, env=FAST).start()
    try:
        token = srv.token("gus")
        async with Agent(srv.url, token) as a:
            before = {f"b-{i}": f"I prefer tea number {i} in the morning." for i in range(5)}
            for key, text in before.items():
                await a.ok("store_memory", text=text, idempotency_key=key)
            await a.wait_idle()

            await admin.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
            await reconnect_sessions(admin, name)
            texts = [f"Fact {i}: the printer on floor {i} is named p{i}." for i in range(50)]
            acked, refused = await store_until_refused(a, texts, "STORAGE_READ_ONLY")
            msg = refused["error"]
            assert "refuses writes" in msg and "default_transaction_read_only" in msg
            public = health(srv)
            assert public["status"] == "degraded"
            assert any(r.startswith("storage: STORAGE_READ_ONLY") for r in public["degraded"])
            # Reads still answer, from the same read-only database.
            found = await a.ok("search_memories", query="tea in the morning")
            assert found["results"]

            await admin.execute(f'ALTER DATABASE "{name}" RESET default_transaction_read_only')
            await reconnect_sessions(admin, name)
            await until(lambda: health(srv)["status"] == "ok", timeout=30)
            again = await a.ok("store_memory", text=refused["text"],
                               idempotency_key=refused["key"])
            assert again["queued"] is True
            stats = await a.wait_idle(timeout=60)
            assert stats["failed_extractions"] == 0, stats
            await all_done(a, {**before, **acked, refused["key"]: refused["text"]})
    finally:
        srv.stop()
