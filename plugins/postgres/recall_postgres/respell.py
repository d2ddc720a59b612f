"""Migration 11: every stored fact key in `recall_core.kit.keys.key_form` (issue 28).

Before it, keys that differed only in Unicode normal form, width, case beyond ASCII or
invisible characters (from an import, an LLM extractor or an older version) were different
keys, so one fact could hold two current values. Core decides (`keys.respell`: the newest
current row stays current, the others become its history); this applies it inside the
migration's transaction, and the ended rows leave the keyword index and its counts."""

from __future__ import annotations

import asyncpg

from recall_core.kit.keys import KeyRow, respell


async def respell_keys(con: asyncpg.Connection) -> None:
    from .fulltext import sync
    from .memories import _BUMP

    rows = await con.fetch(
        """SELECT id, namespace, entity, attribute,
                  valid_until IS NULL AND value IS NOT NULL AS current, valid_from, seq
             FROM memories WHERE entity IS NOT NULL AND attribute IS NOT NULL""")
    plan = respell(KeyRow(r["id"], r["namespace"], r["entity"], r["attribute"], r["current"],
                          (r["valid_from"], r["seq"])) for r in rows)
    if plan.ends:
        await con.executemany(
            "UPDATE memories SET valid_until = $2, superseded_by = $3 WHERE id = $1", plan.ends)
        counts = await sync(con, removed=[mid for mid, _, _ in plan.ends])
        for ns, c in counts.items():
            await con.execute(_BUMP, ns, c.docs, c.length, c.min_len, *c.by_type)
    await con.executemany("UPDATE memories SET entity = $2, attribute = $3 WHERE id = $1",
                          plan.renames)
