"""Shared by the inspector's tests: a `recall serve` process with data in it, tokens, and a
way to run the async MCP client from synchronous (browser) tests."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

from .serverproc import Agent, ServerProcess, recall_cli

CHROMIUM = os.environ.get("RECALL_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def chromium_missing() -> str | None:
    """Why browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not os.path.exists(CHROMIUM):
        return (f"no Chromium at {CHROMIUM}: install Debian's chromium (apt-get install -y "
                f"chromium chromium-driver) or set RECALL_TEST_CHROMIUM")
    return None


def run(coro: Any) -> Any:
    """Run a coroutine to completion on a fresh loop in another thread (the sync Playwright
    API owns this thread's loop)."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            out["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


def backends() -> list[str]:
    """SQLite always; Postgres too when RECALL_TEST_PG_URL is set."""
    return ["sqlite", "postgres"] if os.environ.get("RECALL_TEST_PG_URL") else ["sqlite"]


def _ddl(sql: str) -> None:
    import asyncpg

    async def go() -> None:
        con = await asyncpg.connect(os.environ["RECALL_TEST_PG_URL"])
        try:
            await con.execute(sql)
        finally:
            await con.close()
    run(go())


def database(backend: str, work: Path) -> tuple[str, Any]:
    """(database path or URL, cleanup) for a fresh database of `backend`: a new schema on
    RECALL_TEST_PG_URL for Postgres."""
    if backend == "sqlite":
        return str(work / "recall.db"), lambda: None
    schema = f"inspector_{uuid.uuid4().hex[:10]}"
    _ddl(f"CREATE SCHEMA {schema}")
    base = os.environ["RECALL_TEST_PG_URL"]
    url = base + ("&" if "?" in base else "?") + f"search_path={schema},public"
    return url, lambda: _ddl(f"DROP SCHEMA {schema} CASCADE")


def start_server(work: Path, db: str | None = None, **extra_env: str) -> ServerProcess:
    flag = work / "fail"
    env = {**extra_env, "RECALL_PLUGIN_MODULES": "recall_testkit.plugins.switch_extractor",
           "RECALL_EXTRACTOR": "switch", "RECALL_TEST_FAIL_FILE": str(flag)}
    srv = ServerProcess(db or str(work / "recall.db"), work, env=env).start()
    srv.fail_flag = flag
    return srv


def admin_token(srv: ServerProcess, name: str = "ops") -> str:
    out = recall_cli("create-token", "--admin", "--name", name, "--db", srv.db, "--json",
                     env=srv.env)
    return json.loads(out.stdout)["token"]


async def store_all(srv: ServerProcess, token: str, texts: list[str], **extra: Any) -> list[str]:
    """store_memory each text in order (waiting for each extraction, so a later fact
    supersedes an earlier one); returns the job ids."""
    jobs = []
    async with Agent(srv.url, token) as a:
        for text in texts:
            jobs.append((await a.ok("store_memory", text=text, **extra))["job_id"])
            await a.wait_idle()
    return jobs


async def search(srv: ServerProcess, token: str, query: str) -> list[str]:
    async with Agent(srv.url, token) as a:
        return [r["text"] for r in (await a.ok("search_memories", query=query))["results"]]


def signed_in(srv: ServerProcess, token: str, **headers: str) -> Any:
    """An httpx client signed in to the inspector with `token` through /ui/signin, as a
    browser is: it holds the session cookie (a session id, not the token) and, as `.csrf`,
    the CSRF value the pages' forms carry. `headers` are sent from then on (e.g. a foreign
    Origin, to play a cross-site post from a signed-in browser)."""
    import re

    import httpx

    c = httpx.Client(base_url=srv.base, headers={"Origin": srv.base}, follow_redirects=False)
    r = c.post("/ui/signin", data={"token": token})
    assert r.status_code == 303, (r.status_code, r.text[:500])
    session = r.cookies.get("recall_ui") or re.search(r"recall_ui=([^;]+)",
                                                      r.headers["set-cookie"]).group(1)
    # The cookie is Secure; httpx sends such cookies over https only, browsers to loopback too.
    c.cookies.clear()
    c.cookies.set("recall_ui", session, domain="127.0.0.1", path="/ui")
    c.session_id = session  # type: ignore[attr-defined]
    page = c.get("/ui/memories" if r.headers["location"] == "/ui/memories" else "/ui/admin").text
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    c.csrf = found.group(1) if found else None  # type: ignore[attr-defined]
    c.headers.update(headers)
    return c
