"""Bad storage arguments, as a user or a supervisor meets them: one line saying what, why and
what to do, exit code 2, promptly (each run is a real `recall` process under a timeout; the
non-SQLite file used to print a traceback and then hang)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from recall_testkit.serverproc import free_port, recall_cli

ENV = {"RECALL_DISABLE_PLUGINS": "embeddings"}
COMMANDS = {
    "serve": lambda db: ("serve", "--db", db, "--port", str(free_port())),
    "status": lambda db: ("status", "--db", db),
    # --create: past the "no such database" refusal, to the storage plugin's own checks
    "create-token": lambda db: ("create-token", "alice", "--db", db, "--create"),
}


def _bad_db(kind: str, tmp: Path) -> tuple[str, str]:
    """(the --db value, a phrase the error must contain)."""
    if kind == "directory":
        return str(tmp), "is a directory"
    if kind == "unwritable":  # not writable even by root (the tests may run as root)
        return "/proc/recall.db", "writable"
    if kind == "under-a-file":
        (tmp / "plain.txt").write_text("x")
        return str(tmp / "plain.txt" / "sub" / "recall.db"), "which is a file"
    if kind == "not-sqlite":
        (tmp / "notes.txt").write_text("these are my notes, not a database\n" * 20)
        return str(tmp / "notes.txt"), "not a SQLite database"
    if kind == "corrupt-sqlite":
        (tmp / "broken.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
        return str(tmp / "broken.db"), "file is not a database"
    if kind == "typo-directory":
        return str(tmp / "dtaa" / "recall.db"), "does not exist"
    raise AssertionError(kind)


KINDS = ["directory", "unwritable", "under-a-file", "not-sqlite",
         "corrupt-sqlite", "typo-directory"]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", KINDS)
def test_bad_db_is_one_line_and_a_prompt_exit_2(kind, command, tmp_path):
    db, phrase = _bad_db(kind, tmp_path)
    if command == "status" and kind == "unwritable":  # a reader refuses any missing file
        phrase = "No Recall database at /proc/recall.db"
    before = sorted(p.name for p in tmp_path.iterdir())
    started = time.monotonic()
    proc = recall_cli(*COMMANDS[command](db), check=False, env=ENV, timeout=30)
    took = time.monotonic() - started
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("recall: error: "), proc.stderr
    assert phrase in lines[0] and "Traceback" not in proc.stderr
    assert took < 15, took
    # Nothing was created next to it: no typo'd directory, no database file, no WAL.
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_missing_parent_is_not_created_and_an_existing_one_is_used(tmp_path):
    db = str(tmp_path / "new" / "r.db")
    proc = recall_cli("create-token", "a", "--db", db, "--create", check=False, env=ENV)
    assert proc.returncode == 2 and "mkdir -p" in proc.stderr and not (tmp_path / "new").exists()
    (tmp_path / "new").mkdir()
    recall_cli("create-token", "a", "--db", db, "--create", env=ENV)
    assert (tmp_path / "new" / "r.db").is_file()


def test_memory_database_creates_no_file(tmp_path):
    proc = recall_cli("status", "--db", ":memory:", "--json", env=ENV)
    assert ":memory:" in proc.stdout
    # run from tmp_path: the old behaviour made a file named ":memory:" in the working dir
    import subprocess
    import sys
    subprocess.run([sys.executable, "-m", "recall_core.cli", "status", "--db", ":memory:"],
                   cwd=tmp_path, env={**os.environ, **ENV}, capture_output=True, timeout=30,
                   check=True)
    assert list(tmp_path.iterdir()) == []


def test_status_never_prints_a_password():
    url = "postgresql://alice:hunter2@127.0.0.1:1/x?password=hunter3&connect_timeout=1"
    proc = recall_cli("status", "--db", url, "--json", check=False, env=ENV, timeout=30)
    assert "hunter2" not in proc.stdout + proc.stderr
    assert "hunter3" not in proc.stdout + proc.stderr
    assert proc.returncode == 2


def test_unknown_log_level_is_refused(tmp_path):
    proc = recall_cli("serve", "--db", str(tmp_path / "r.db"), "--port", str(free_port()),
                      check=False, env={**ENV, "RECALL_LOG_LEVEL": "verbose"}, timeout=30)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "verbose" in lines[0] and "DEBUG" in lines[0]


def test_port_in_use_is_one_line_and_nothing_announced(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        started = time.monotonic()
        proc = recall_cli("serve", "--db", str(tmp_path / "r.db"), "--port", str(port),
                          check=False, env=ENV, timeout=30)
        took = time.monotonic() - started
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "in use" in lines[0] and "--port" in lines[0] and "serving" not in proc.stderr
    assert took < 15


def test_a_database_from_a_newer_recall_is_refused(tmp_path):
    import sqlite3

    db = str(tmp_path / "r.db")
    recall_cli("create-token", "a", "--db", db, "--create", env=ENV)
    with sqlite3.connect(db) as conn:
        (latest,) = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        conn.execute("INSERT INTO schema_version VALUES (?, '2099-01-01')", (latest + 1,))
    proc = recall_cli("status", "--db", db, check=False, env=ENV)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "newer" in lines[0] and "Downgrades" in lines[0]
    # upgrade from the checkout, as the README says; never a package name from the index
    assert "pip install -e . -e plugins/sqlite" in lines[0] and "-U" not in lines[0]


def test_a_public_url_that_is_not_a_url_is_refused(tmp_path):
    proc = recall_cli("serve", "--db", str(tmp_path / "r.db"), "--port", str(free_port()),
                      check=False, env={**ENV, "RECALL_PUBLIC_URL": "recall.example.org"}, timeout=30)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "public_url" in lines[0] and "https://" in lines[0]


BAD_CONFIGS = {
    "unknown extractor": ('extractor = "nope"\n', {}, "Unknown extractor 'nope'"),
    "extractor without its key": ('extractor = "haiku"\n', {"ANTHROPIC_API_KEY": ""},
                                  "ANTHROPIC_API_KEY"),
    "unknown ranker": ('[rankers]\nmagic = 1.0\n', {}, "Unknown ranker 'magic'"),
    "negative weight": ('[rankers]\nbm25 = -1.0\n', {}, "weights must be >= 0"),
    "no ranker on": ('[rankers]\nbm25 = 0.0\n', {}, "No ranker is enabled"),
    "bad plugin setting": ('[plugins.sqlite]\nno_such_key = 1\n', {}, "no_such_key"),
    "unknown middleware": ('middleware = ["nope"]\n', {}, "Unknown middleware 'nope'"),
    "misspelt plugin table": ('[plugins.sqlit]\ncache_size_kib = 1\n', {},
                              "[plugins.sqlit] names no installed plugin's settings"),
}


@pytest.mark.parametrize("case", list(BAD_CONFIGS))
def test_a_bad_config_value_stops_serve_before_the_database_is_created(case, tmp_path):
    # The README: "before anything is started or created". These used to exit 2 only after
    # the database file had been created and migrated.
    text, env, phrase = BAD_CONFIGS[case]
    (tmp_path / "recall.toml").write_text(text)
    proc = recall_cli("serve", "--config", str(tmp_path / "recall.toml"), "--db",
                      str(tmp_path / "r.db"), "--port", str(free_port()), check=False,
                      env={**ENV, **env}, timeout=30)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and phrase in lines[0], proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recall.toml"]
