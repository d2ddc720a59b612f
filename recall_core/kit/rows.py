"""Rules a storage applies to the rows it writes."""

from __future__ import annotations

from collections.abc import Iterable

from ..models import Memory


def check_namespace(namespace: str, memories: Iterable[Memory]) -> None:
    """Every storage's insert calls this: a write never crosses namespaces."""
    for m in memories:
        if m.namespace != namespace:
            raise ValueError(f"Memory {m.id} belongs to namespace {m.namespace!r}, but is "
                             f"written for {namespace!r}; a write never crosses namespaces.")
