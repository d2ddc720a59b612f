"""A person's correction of a memory (the inspector's Edit): stored as a new memory that
supersedes the old one in one transaction, never an in-place overwrite, so the old version
stays in the history (state "superseded", and in its (entity, attribute) timeline).

A fact's new text is read by the same rules as a stored text (the extractor), so "I moved to
Lisbon." edited into "I moved to Porto." becomes location = Porto, and the timeline reads
Lisbon, then Porto. A value set in the form must agree with what the text states; a text
whose fact the rules cannot read keeps the fact only when the form says its value."""

from __future__ import annotations

import logging
from typing import Any

from ..contracts import Embedder, Extractor, Storage, model_id
from ..errors import InvalidParam, MemoryNotFound
from ..models import MEMORY_TYPES, Memory, utcnow
from . import validation as v
from .facts import norm_key, same_value
from .writes import replace

log = logging.getLogger("recall.corrections")


def base(attribute: str | None) -> str:
    """A fact key's attribute without its value (`allergies:peanuts` -> `allergies`)."""
    return norm_key(attribute).split(":", 1)[0]


async def stated_fact(extractor: Extractor | None, old: Memory, text: str
                      ) -> tuple[str, str] | None:
    """(attribute, value) that `text` states for `old`'s fact, read by the extractor's
    rules; None when it states none the rules can read (or there is no extractor)."""
    if extractor is None or old.entity is None:
        return None
    said = [em for em in await extractor.extract(text, old.topic)
            if em.entity is not None and em.value is not None
            and norm_key(em.entity) == norm_key(old.entity)
            and base(em.attribute) == base(old.attribute)]
    return (said[-1].attribute, said[-1].value) if said else None  # type: ignore[return-value]


async def corrected_fact(extractor: Extractor | None, old: Memory, new_text: str,
                         value: Any) -> tuple[str | None, str | None]:
    """The (attribute, value) of the correction of a fact. `value` is the form's value field
    (the old value when left alone)."""
    given = str(value).strip() if value is not None else ""
    explicit = given if given and not same_value(given, old.value) else None
    if new_text == old.text:
        return (base(old.attribute), explicit) if explicit else (old.attribute, old.value)
    stated = await stated_fact(extractor, old, new_text)
    if stated is not None:
        if explicit is not None and not same_value(explicit, stated[1]):
            raise InvalidParam(
                f"The text says {old.attribute.split(':')[0]} is {stated[1]!r} but the value "
                f"field says {explicit!r}. Make them agree (or leave the value as it was: the "
                f"text decides).")
        return stated
    if explicit is not None:
        return base(old.attribute), explicit
    if extractor is None:
        return old.attribute, old.value
    raise InvalidParam(
        f"The new text does not state this memory's fact ({old.entity} "
        f"{old.attribute.split(':')[0]} = {old.value!r}) in a way Recall reads. Set the value "
        f"field to the fact's new value, or say it in the text (e.g. \"I live in ...\"), or "
        f"forget the memory if the fact is gone.")


async def correct_memory(storage: Storage, embedder: Embedder | None,
                         extractor: Extractor | None, max_text_bytes: int, namespace: str,
                         memory_id: Any, *, text: Any = None, type: Any = None,
                         importance: Any = None, value: Any = None) -> Memory:
    """The stored correction. Fields left None keep the old memory's; the correction keeps
    its topic, session, agent and source job (its provenance), and its fact's entity; the
    fact's attribute and value follow the text (`corrected_fact`)."""
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
    if value is not None:  # the one rule for what can be stored (kit.representable)
        value = v.storable(str(value), "value", v.MAX_VALUE_CHARS)
    if abs(new_importance - old.importance) < 5e-5:  # as shown, to 4 decimals: unchanged
        new_importance = old.importance
    new_attribute, new_value = old.attribute, old.value
    if old.entity is not None:
        new_attribute, new_value = await corrected_fact(extractor, old, new_text, value)
    if (new_text, new_type, new_value) == (old.text, old.type, old.value) and \
            abs(new_importance - old.importance) < 1e-9:
        raise InvalidParam("Nothing changed: edit the text, type, value or importance.")
    at = utcnow()
    new = Memory(namespace=namespace, text=new_text, topic=old.topic, type=new_type,
                 entity=old.entity, attribute=new_attribute, value=new_value,
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
