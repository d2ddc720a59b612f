"""Migration 10: every stored fact key in `recall_core.kit.keys.key_form` (issue 28).

Before it, keys that differed only in Unicode normal form, width, case beyond ASCII or
invisible characters (from an import, an LLM extractor or an older version) were different
keys, so one fact could hold two current values. Core decides (`keys.respell`: the newest
current row stays current, the others become its history); this applies it inside the
migration's transaction. The FTS and count triggers follow the ended rows."""

from __future__ import annotations

import aiosqlite

from recall_core.kit.keys import KeyRow, respell

from .codec import from_db, to_db


async def respell_keys(db: aiosqlite.Connection) -> None:
    rows = await db.execute_fetchall(
        "SELECT id, namespace, entity, attribute, valid_until IS NULL AND value IS NOT NULL, "
        "valid_from, seq FROM memories WHERE entity IS NOT NULL AND attribute IS NOT NULL")
    plan = respell(KeyRow(r[0], r[1], r[2], r[3], bool(r[4]), (from_db(r[5]), r[6]))
                   for r in rows)
    await db.executemany(
        "UPDATE memories SET valid_until = ?, superseded_by = ? WHERE id = ?",
        [(to_db(until), successor, mid) for mid, until, successor in plan.ends])
    await db.executemany(
        "UPDATE memories SET entity = ?, attribute = ? WHERE id = ?",
        [(entity, attribute, mid) for mid, entity, attribute in plan.renames])
