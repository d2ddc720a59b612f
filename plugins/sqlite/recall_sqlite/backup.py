"""`recall backup DEST`: an online, consistent copy of the SQLite database.

SQLite's backup API copies pages while the server keeps writing (it restarts the copy when a
write lands mid-way), so the copy is one committed state, WAL included. PostgreSQL has its own
tool (pg_dump); this command says so instead of guessing.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

from .connection import MEMORY, SQLITE_HEADER, path_from_url


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dest", help="the copy's path; must not exist yet")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    from recall_core import ConfigError, load_config

    url = load_config(args.config, db=args.db).db_url
    if not url.startswith("sqlite://"):
        raise ConfigError(f"recall backup copies SQLite databases; {url.split('://', 1)[0]} is "
                          f"not one. For PostgreSQL use pg_dump (README, Backup and upgrade).")
    source = path_from_url(url)
    dest = Path(args.dest).expanduser()
    if source == MEMORY:
        raise ConfigError("An in-memory database (:memory:) cannot be backed up from another process.")
    src = Path(source)
    if not src.is_file() or src.read_bytes()[:len(SQLITE_HEADER)] != SQLITE_HEADER:
        raise ConfigError(f"Database file {src} does not exist or is not SQLite (--db, "
                          f"RECALL_DB_URL or db in recall.toml). Point --db at the server's database.")
    if dest.exists():
        raise ConfigError(f"{dest} already exists; recall backup never overwrites. Choose a new name.")
    if not dest.parent.is_dir():
        raise ConfigError(f"Directory {dest.parent} does not exist; create it first.")
    started = time.perf_counter()
    # Read-only URI: a backup never migrates or writes the source.
    source_conn = sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=30)
    tmp = dest.with_name(dest.name + ".partial")
    try:
        target = sqlite3.connect(tmp)
        try:
            source_conn.backup(target, pages=1024)
            target.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            target.close()
        os.replace(tmp, dest)
    except sqlite3.Error as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"Backup of {src} failed: {exc}. Nothing was written to {dest}.") from None
    finally:
        source_conn.close()
    out = {"source": str(src), "backup": str(dest), "bytes": dest.stat().st_size,
           "seconds": round(time.perf_counter() - started, 3)}
    print(json.dumps(out) if args.json
          else f"backed up {src} to {dest} ({out['bytes']} bytes, {out['seconds']} s)",
          file=sys.stdout)
    return 0
