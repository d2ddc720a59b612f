"""The CLI as a user runs it: tokens, status, plugins, export/import, history, config errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from recall_testkit.serverproc import free_port, recall_cli

ENV = {"RECALL_DISABLE_PLUGINS": "embeddings"}


def _export(db, ns, *extra):
    return [json.loads(line) for line in
            recall_cli("export", ns, "--db", db, *extra, env=ENV).stdout.splitlines()]


def test_export_import_round_trip_field_for_field(tmp_path):
    db = str(tmp_path / "r.db")
    src = tmp_path / "in.jsonl"
    rows = [
        {"text": "I like green tea", "topic": "drinks", "type": "preference", "importance": 0.7,
         "created_at": "2023-05-08T13:56:00+00:00", "session_id": "s1", "agent_id": "a1"},
        {"text": "Deploys happen on Fridays", "type": "procedure", "entity": "team",
         "attribute": "deploy_day", "value": "friday", "created_at": "2024-01-02T03:04:05+00:00"},
    ]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = json.loads(recall_cli("import", str(src), "--namespace", "one", "--db", db, "--quiet",
                                "--create", env=ENV).stdout)
    assert out["imported"] == 2
    first = _export(db, "one")
    dump = tmp_path / "dump.jsonl"
    dump.write_text("\n".join(json.dumps(r) for r in first) + "\n")
    recall_cli("import", str(dump), "--namespace", "two", "--db", db, "--quiet", env=ENV)
    second = _export(db, "two")
    strip = lambda rs: sorted(({k: v for k, v in r.items() if k != "id"} for r in rs), key=lambda r: r["text"])
    assert strip(first) == strip(second)
    plain = lambda rs: strip([{k: r[k] for k in (*rows[0], *rows[1], "importance", "topic")
                               if k in r} for r in rs])
    assert plain(first) == plain([{**r, "topic": r.get("topic", ""),
                                   "importance": r.get("importance", 0.5)} for r in rows])
    # --keep-ids (moving a namespace to another database) resumes instead of duplicating.
    db2 = str(tmp_path / "other.db")
    recall_cli("import", str(dump), "--namespace", "one", "--db", db2, "--keep-ids", "--quiet",
               "--create", env=ENV)
    again = json.loads(recall_cli("import", str(dump), "--namespace", "one", "--db", db2,
                                  "--keep-ids", "--quiet", env=ENV).stdout)
    assert again["imported"] == 0 and _export(db2, "one") == first


def test_export_with_history_round_trips_exactly(tmp_path):
    # Issue 13 #8: history, validity times, base importance and access data survive; a plain
    # line with "User"/"Editor" is normalised and superseded like the worker would.
    db = str(tmp_path / "r.db")
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"text": "I use vim", "entity": "User", "attribute": "Editor", "value": "vim",
         "created_at": "2024-01-01T00:00:00+00:00", "importance": 0.9},
        {"text": "I use emacs", "entity": "user", "attribute": "editor", "value": "emacs",
         "created_at": "2024-02-01T00:00:00+00:00"},
        {"text": "I used nano", "entity": "user ", "attribute": "editor", "value": "nano",
         "created_at": "2023-06-01T00:00:00+00:00"},
    ]) + "\n")
    recall_cli("import", str(src), "--namespace", "one", "--db", db, "--quiet", "--create", env=ENV)
    first = _export(db, "one")
    by_value = {r["value"]: r for r in first}
    assert {r["entity"] for r in first} == {"user"} and by_value["emacs"]["valid_until"] is None
    assert by_value["vim"]["valid_until"] == "2024-02-01T00:00:00+00:00"
    assert by_value["vim"]["superseded_by"] == by_value["emacs"]["id"]
    assert by_value["nano"]["valid_until"] == "2024-01-01T00:00:00+00:00"  # said earliest
    assert by_value["vim"]["base_importance"] == 0.9
    active = _export(db, "one", "--active-only")
    assert [r["value"] for r in active] == ["emacs"]
    dump = tmp_path / "dump.jsonl"
    dump.write_text("\n".join(json.dumps(r) for r in first) + "\n")
    recall_cli("import", str(dump), "--namespace", "two", "--db", db, "--quiet", env=ENV)
    second = _export(db, "two")
    ids = {r["id"] for r in second}
    assert not ids & {r["id"] for r in first}  # new ids in another namespace...
    strip = lambda rs: sorted(({k: v for k, v in r.items() if k not in ("id", "superseded_by")}
                               for r in rs), key=lambda r: r["valid_from"])
    assert strip(first) == strip(second)
    links = {r["value"]: r.get("superseded_by") for r in second}
    assert links["vim"] in ids and links["nano"] in ids  # ...and the links follow them
    # --keep-ids into another namespace of the same database: a clear error, nothing written.
    proc = recall_cli("import", str(dump), "--namespace", "three", "--db", db, "--keep-ids",
                      check=False, env=ENV)
    assert proc.returncode != 0 and "without --keep-ids" in proc.stderr
    assert "Traceback" not in proc.stderr and _export(db, "three") == []


def test_malformed_line_is_reported_and_nothing_written(tmp_path):
    db = str(tmp_path / "r.db")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": "also fine", "importance": 7}\n')
    proc = recall_cli("import", str(bad), "--namespace", "x", "--db", db, check=False, env=ENV)
    assert proc.returncode == 2 and "line 2" in proc.stderr and "importance" in proc.stderr
    bad.write_text('{"text": "fine"}\n{oops\n')
    proc = recall_cli("import", str(bad), "--namespace", "x", "--db", db, check=False, env=ENV)
    assert proc.returncode == 2 and "line 2" in proc.stderr
    # booleans are booleans, numbers and times are not booleans (the schema's types)
    for line, field in (('{"text": "t", "pinned": 0}', "pinned"),
                        ('{"text": "t", "importance": true}', "importance"),
                        ('{"text": "t", "created_at": 0}', "created_at")):
        bad.write_text(line + "\n")
        proc = recall_cli("import", str(bad), "--namespace", "x", "--db", db, "--create",
                          check=False, env=ENV)
        assert proc.returncode == 2 and "line 1" in proc.stderr and field in proc.stderr, proc.stderr
    assert not Path(db).exists()  # checked before the database was even opened


def test_import_extract_queues_and_extracts_resumably(tmp_path):
    db = str(tmp_path / "r.db")
    src = tmp_path / "chat.jsonl"
    src.write_text('{"text": "I use vim for everything."}\n{"text": "hi there!"}\n')
    out = json.loads(recall_cli("import", str(src), "--namespace", "u", "--db", db, "--extract",
                                "--quiet", "--create", env=ENV).stdout)
    assert out["queued"] == 2 and out["failed_jobs"] == 0
    again = json.loads(recall_cli("import", str(src), "--namespace", "u", "--db", db, "--extract", "--quiet", env=ENV).stdout)
    assert again["queued"] == 0 and again["already_queued"] == 2
    texts = [r["text"] for r in _export(db, "u")]
    assert texts == ["I use vim for everything."]


def test_plugins_lists_builtins_and_installed(tmp_path):
    rows = json.loads(recall_cli("plugins", "--json").stdout)
    names = {r["name"] for r in rows}
    assert {"recall-core", "recall-sqlite", "recall-extractors"} <= names
    bm25 = next(r for r in rows if r["plugin"] == "recall_core.builtin.bm25")
    assert bm25["hooks"] == ["register_rankers"] and bm25["version"]


def test_config_errors_name_the_choices(tmp_path):
    def serve(*args: str, env=ENV):
        return recall_cli("serve", *args, "--port", str(free_port()), check=False, env=env)

    cfg = tmp_path / "recall.toml"
    cfg.write_text('extractor = "nope"\n')
    proc = serve("--config", str(cfg), "--db", str(tmp_path / "r.db"))
    assert proc.returncode == 2 and "nope" in proc.stderr and "stub" in proc.stderr
    cfg.write_text('colour = "blue"\n[limits]\ntool_timeout = 3\n')
    proc = serve("--config", str(cfg), "--db", str(tmp_path / "r.db"))
    assert proc.returncode == 2 and "unknown key 'colour'" in proc.stderr
    cfg.write_text('[rankers]\nbm25 = 1.0\nmagic = 1.0\n')
    proc = serve("--config", str(cfg), "--db", str(tmp_path / "r.db"))
    assert proc.returncode == 2 and "magic" in proc.stderr and "bm25" in proc.stderr
    proc = serve("--db", "postgresql://nobody@127.0.0.1:1/x",
                 env={**ENV, "RECALL_DISABLE_PLUGINS": "embeddings,postgres"})
    assert proc.returncode == 2 and "recall-postgres" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recall.toml"]  # no database made


def test_status_reports_queue(tmp_path):
    db = str(tmp_path / "r.db")
    recall_cli("create-token", "ns", "--db", db, "--create", env=ENV)
    out = json.loads(recall_cli("status", "--db", db, "--json", env=ENV).stdout)
    assert out["jobs"] == {"queued": 0, "running": 0, "done": 0, "failed": 0}
    assert "sqlite" in out["storage"].lower() and out["extractor"] == "stub"
    # per-namespace counts
    src = tmp_path / "m.jsonl"
    src.write_text('{"text": "I like tea"}\n{"text": "I live in Porto"}\n')
    recall_cli("import", str(src), "--namespace", "other", "--db", db, "--quiet", "--no-embed", env=ENV)
    out = json.loads(recall_cli("status", "--db", db, "--json", env=ENV).stdout)
    rows = {n["namespace"]: n for n in out["namespaces"]}
    assert out["namespace_count"] == 2 and rows["other"]["active_memories"] == 2
    assert rows["ns"]["active_tokens"] == 1 and rows["ns"]["active_memories"] == 0
    text = recall_cli("status", "--db", db, env=ENV).stdout
    assert "namespaces: 2" in text and re.search(r"other\s+2\s+0\s+0", text), text


def test_blas_threads_are_told_not_to_spin_before_numpy_loads():
    # cli.main sets OPENBLAS_THREAD_TIMEOUT for numpy's OpenBLAS, which reads it only when
    # numpy is first imported: importing the CLI must not import numpy already.
    import os
    import subprocess
    import sys

    code = ("import os, sys\n"
            "import recall_core.cli as cli\n"
            "assert 'numpy' not in sys.modules, 'numpy imported with the CLI module'\n"
            "cli.main(['plugins', '--json'])\n"
            "print(os.environ['OPENBLAS_THREAD_TIMEOUT'])\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "4"
    # an explicit setting wins
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**env, "OPENBLAS_THREAD_TIMEOUT": "10"}, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "10"


def test_version_and_help():
    from recall_core import __version__

    assert recall_cli("--version").stdout.strip() == f"recall {__version__}"
    bare = recall_cli()
    assert bare.returncode == 0 and "serve" in bare.stdout and "create-token" in bare.stdout
    serve = recall_cli("serve", "--help").stdout
    for flag in ("--db", "--config", "--host", "--port", "--transport", "--metrics-port",
                 "--log-level", "--log-format"):
        assert flag in serve
    assert serve.count("default") >= 8, serve


@pytest.mark.slow
def test_backup_is_an_online_consistent_copy(tmp_path):
    from recall_testkit.serverproc import Agent, ServerProcess
    import asyncio

    db = str(tmp_path / "live.db")
    srv = ServerProcess(db, tmp_path, env=ENV).start()
    try:
        token = srv.token("keeper")

        async def store():
            async with Agent(srv.url, token) as a:
                for i in range(5):
                    await a.ok("store_memory", text=f"Backup fact number {i} is worth keeping.")
                await a.wait_idle()
        asyncio.run(store())
        out = json.loads(recall_cli("backup", str(tmp_path / "copy.db"), "--db", db, "--json", env=ENV).stdout)
        assert out["bytes"] > 0
    finally:
        srv.stop()
    assert _export(str(tmp_path / "copy.db"), "keeper") == _export(db, "keeper")
    assert len(_export(db, "keeper")) == 5
    again = recall_cli("backup", str(tmp_path / "copy.db"), "--db", db, check=False, env=ENV)
    assert again.returncode == 2 and "never overwrites" in again.stderr
    pg = recall_cli("backup", str(tmp_path / "x.db"), "--db", "postgresql://u@127.0.0.1:1/x",
                    check=False, env=ENV)
    assert pg.returncode == 2 and "pg_dump" in pg.stderr


def test_status_reports_jobs_whose_worker_died(tmp_path):
    # Issue 13: `recall status` says when running jobs are past their lease (a worker died
    # or hangs: a live one renews its lease), and is "ok" otherwise.
    import asyncio

    from recall_core.models import Operation
    from recall_sqlite import make_storage

    db = str(tmp_path / "r.db")
    recall_cli("create-token", "n", "--db", db, "--create", env=ENV)
    assert json.loads(recall_cli("status", "--db", db, "--json", env=ENV).stdout)["workers"] == {
        "ok": True, "jobs_past_lease": 0}

    async def claim_and_die():
        s = make_storage(f"sqlite:///{db}")
        await s.open()
        await s.enqueue(Operation(namespace="n", idempotency_key="k", payload={"text": "x"}))
        await s.claim_job(0.01)
        await s.close()

    asyncio.run(claim_and_die())
    out = recall_cli("status", "--db", db, env=ENV).stdout
    assert [line for line in out.splitlines() if line.startswith("workers:")] == [
        "workers:   1 running job(s) past their lease: a worker died or is stuck (they are "
        "re-run up to worker.max_attempts; check the server log and /health)"]


def test_status_says_which_extractor_made_a_namespaces_memories(tmp_path):
    # issue 14: provenance recorded by each store (writes.provenance), summed by recall status
    db = str(tmp_path / "r.db")
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in (
        "I use vim.", "We decided to deploy only on Tuesdays.", "I prefer dark mode.")))
    out = json.loads(recall_cli("import", str(src), "--namespace", "alice", "--extract",
                                "--db", db, "--quiet", "--create", env=ENV).stdout)
    assert out["failed_jobs"] == 0
    recall_cli("import", str(src), "--namespace", "bob", "--db", db, "--quiet", env=ENV)

    def sources(*args: str) -> list[dict]:
        info = json.loads(recall_cli("status", "--db", db, "--json", *args, env=ENV).stdout)
        return info["memory_sources"]

    assert sources("--namespace", "alice") == [
        {"extractor": "stub", "model": None, "prompt_version": "rules-v3", "memories": 3}]
    assert sources("--namespace", "bob") == [
        {"extractor": None, "model": None, "prompt_version": None, "memories": 3}]
    assert sorted(sources(), key=lambda s: s["extractor"] or "") == [
        {"extractor": None, "model": None, "prompt_version": None, "memories": 3},
        {"extractor": "stub", "model": None, "prompt_version": "rules-v3", "memories": 3}]
    assert sources("--namespace", "nobody") == []
    text = recall_cli("status", "--db", db, "--namespace", "alice", env=ENV).stdout
    assert "memories of 'alice' made by: 3 by stub (prompt_version rules-v3)" in text, text
    text = recall_cli("status", "--db", db, "--namespace", "bob", env=ENV).stdout
    assert "3 imported verbatim (no extractor)" in text, text


def test_serve_says_where_to_connect_and_the_command_that_makes_a_token(tmp_path):
    # A newcomer reads the start-up lines: the MCP URL, the inspector, and a create-token
    # command that, pasted in any folder, makes a token this server accepts.
    import asyncio
    import shlex
    import time

    import httpx

    from recall_testkit.serverproc import Agent, ServerProcess

    home = tmp_path / "my data"  # a space: the printed command must still paste
    home.mkdir()
    srv = ServerProcess(str(home / "recall.db"), tmp_path, env=ENV).start()
    try:
        deadline = time.monotonic() + 20
        while "create-token" not in srv.log():
            assert time.monotonic() < deadline, srv.log()
            time.sleep(0.1)
        log = srv.log()
        assert f"serving MCP on {srv.base}/mcp" in log and f"inspector on {srv.base}/ui" in log
        assert httpx.get(f"{srv.base}/ui", follow_redirects=True).status_code == 200
        printed = log.split("create a token with: ", 1)[1].split(" (--admin", 1)[0]
        assert printed == f"recall create-token NAMESPACE --db '{home / 'recall.db'}'", printed
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        args = shlex.split(printed.replace("NAMESPACE", "newcomer"))[1:] + ["--json"]
        made = json.loads(recall_cli(*args, env=ENV, cwd=elsewhere).stdout)
        assert made["db"] == str(home / "recall.db") and list(elsewhere.iterdir()) == []

        async def works() -> dict:
            async with Agent(srv.url, made["token"]) as agent:
                return await agent.ok("get_memory_stats")
        assert asyncio.run(works())["total"] == 0
    finally:
        srv.stop()


def test_a_command_run_in_another_folder_makes_no_database_and_says_where_it_looked(tmp_path):
    # create-token used to create an empty ./recall.db wherever it ran, and print a token the
    # server (on its own database) then answered 401.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    missing = elsewhere / "recall.db"
    for args, offers_create in ((("create-token", "alice"), True), (("status",), False),
                                (("export", "alice"), False)):
        proc = recall_cli(*args, env=ENV, cwd=elsewhere, check=False)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert f"No Recall database at {missing} (--db not given" in lines[0]
        assert "--db" in lines[0] and ("--create" in lines[0]) == offers_create, lines[0]
        assert list(elsewhere.iterdir()) == []
    # asked to, it creates one, and says which database the token is good for
    text = recall_cli("create-token", "alice", "--create", env=ENV, cwd=elsewhere).stdout
    assert f"Stored in {missing}: valid on a server that uses this database." in text
    assert missing.is_file()
