from __future__ import annotations

from datetime import datetime, timedelta, timezone

from recall_core.models import Memory, Operation

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def mem(ns: str, text: str, *, minutes: int = 0, **kw) -> Memory:
    at = T0 + timedelta(minutes=minutes)
    kw.setdefault("valid_from", at)
    return Memory(namespace=ns, text=text, created_at=at, **kw)


def op(ns: str, key: str, minutes: int = 0, **kw) -> Operation:
    return Operation(namespace=ns, idempotency_key=key, payload={"text": key},
                     created_at=T0 + timedelta(minutes=minutes), **kw)
