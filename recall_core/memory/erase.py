"""The receipt of an erase (`delete_namespace_data`, the admin API's erase): what was
removed per table, when, and a digest that proves it without naming the namespace.

The receipt goes to the caller only, and names the namespace (the caller knows it). Nothing
stored keeps the name: the admin audit keeps the receipt's digest, and audit rows that
named the namespace are relabelled `erased:<first 16 hex digits of the digest>`. A plain
hash of the name would not do: names are often e-mail addresses or people's names, and
anyone holding the audit could test a guess by hashing it. The digest covers a random
receipt id that only the receipt holds, so the audit links to the namespace only for whoever
shows the receipt: recompute `digest` from the receipt's other fields (JSON, keys sorted, no
spaces, UTF-8, SHA-256) and look it up in the audit.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ..contracts import Erased, Storage
from ..events import payloads
from ..events.deliverer import wake as wake_deliverer
from ..models import utcnow

DIGEST_OF = "sha256 of the receipt without `digest` and `digest_of`: JSON, keys sorted, no spaces"


class EraseReceipt(BaseModel):
    """The receipt's shape (tools' and the admin API's output schemas)."""

    receipt_id: str = Field(description="random; only the receipt holds it")
    namespace: str
    erased_at: str = Field(description="ISO 8601, UTC")
    deleted: dict[str, int] = Field(description="rows that named the namespace, per table")
    memories_deleted: int
    tokens_revoked: int
    digest: str = Field(description="what the admin audit keeps (see digest_of)")
    digest_of: str


def digest(fields: dict[str, Any]) -> str:
    text = json.dumps({k: v for k, v in fields.items() if k not in ("digest", "digest_of")},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def receipt(namespace: str, erased: Erased, at: datetime | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "receipt_id": str(uuid.uuid4()), "namespace": namespace,
        "erased_at": (at or utcnow()).isoformat(), "deleted": dict(sorted(erased.tables.items())),
        "memories_deleted": erased.memories, "tokens_revoked": erased.tokens_revoked}
    out["digest"] = digest(out)
    out["digest_of"] = DIGEST_OF
    return out


def erased_label(receipt_digest: str) -> str:
    """How the audit names an erased namespace: by its receipt's digest."""
    return "erased:" + receipt_digest[:16]


async def erase_with_event(storage: Storage, namespace: str) -> Erased:
    """Erase, with the namespace.erased event (no text) in the same transaction when the
    storage has webhooks: the one event that outlives the namespace's rows."""
    if not storage.capabilities.webhooks:
        return await storage.delete_namespace(namespace)
    erased = await storage.delete_namespace(namespace, payloads.erased(namespace))
    wake_deliverer()
    return erased
