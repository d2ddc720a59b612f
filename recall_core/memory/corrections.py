"""A person's correction of a memory (the inspector's Edit): stored as a new memory that
supersedes the old one in one transaction, never an in-place overwrite, so the old version
stays in the history (state "superseded", and in its (entity, attribute) timeline)."""

from __future__ import annotations

import logging
from typing import Any

from ..contracts import Embedder, Storage, model_id
from . import validation as v
from ..errors import InvalidParam, MemoryNotFound
from ..models import MEMORY_TYPES, Memory, utcnow
from .writes import replace

log = logging.getLogger("recall.corrections")


async def correct_memory(storage: Storage, embedder: Embedder | None, max_text_bytes: int,
                         namespace: str, memory_id: Any, *, text: Any = None, type: Any = None,
                         importance: Any = None, value: Any = None) -> Memory:
    """The stored correction. Fields left None keep the old memory's; the correction keeps
    its topic, session, agent, (entity, attribute) and source job (its provenance)."""
    memory_id = v.memory_id(memory_id)
    found = await storage.get_memories(namespace, [memory_id])
    if not found:
        raise MemoryNotFound(f"No active memory with id {memory_id!r} in this namespace; only "
                             f"the current version of a memory can be corrected.")
    old: Memory = found[0]
    if isinstance(text, str):
        text = text.replace("\r\n", "\n")  # a browser's textarea sends CRLF
    new_text = old.text if text is None else v.text(text, "text", max_text_bytes)
    if type is not None and type not in MEMORY_TYPES:
        raise InvalidParam(f"type must be one of {', '.join(MEMORY_TYPES)}, got {type!r}.")
    new_type = old.type if type is None else type
    new_importance = old.importance if importance is None else v.unit(importance, "importance")
    if abs(new_importance - old.importance) < 5e-5:  # as shown, to 4 decimals: unchanged
        new_importance = old.importance
    new_value = old.value
    if value is not None and old.entity is not None:
        new_value = str(value).strip() or old.value
    if (new_text, new_type, new_value) == (old.text, old.type, old.value) and \
            abs(new_importance - old.importance) < 1e-9:
        raise InvalidParam("Nothing changed: edit the text, type, value or importance.")
    at = utcnow()
    new = Memory(namespace=namespace, text=new_text, topic=old.topic, type=new_type,
                 entity=old.entity, attribute=old.attribute, value=new_value,
                 importance=new_importance, valid_from=at, created_at=at, last_accessed_at=at,
                 session_id=old.session_id, agent_id=old.agent_id,
                 source_job_id=old.source_job_id, pinned=old.pinned)
    if embedder is not None and embedder.ready:
        try:
            new.embedding = (await embedder.embed([new_text]))[0]
            new.embedding_model = model_id(embedder)
        except Exception:  # noqa: BLE001 - the worker's backfill embeds it later
            log.warning("embedding a corrected memory failed; the backfill will retry",
                        exc_info=True)
    # The consolidation path: old ended, new inserted as its successor (superseded_by), with
    # the fact key locked; None when the old row stopped being current meanwhile.
    if await replace(storage, namespace, [old], [new], at) is None:
        raise MemoryNotFound(f"Memory {memory_id!r} changed while it was being corrected "
                             f"(superseded or forgotten); reload it and try again.")
    return new
