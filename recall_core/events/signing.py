"""Standard Webhooks signatures (https://www.standardwebhooks.com), made by the spec's own
library so any receiver's verifier agrees: `webhook-signature` is `v1,<base64 HMAC-SHA256 of
"id.timestamp.body">`, one per live secret, space-separated (a rotation's overlap: receivers
holding either secret verify). Secrets are `whsec_` + base64 of random bytes."""

from __future__ import annotations

import base64
import secrets as random_secrets
from collections.abc import Sequence
from datetime import datetime, timezone

from standardwebhooks import Webhook

from ..errors import InvalidParam

PREFIX = "whsec_"


def new_secret() -> str:
    return PREFIX + base64.b64encode(random_secrets.token_bytes(32)).decode()


def check_secret(secret: str) -> str:
    """The secret as given when it is a `whsec_<base64>` of at least 16 bytes."""
    try:
        raw = base64.b64decode(secret.removeprefix(PREFIX) + "==", validate=False)
    except ValueError:
        raw = b""
    if not secret.startswith(PREFIX) or len(raw) < 16:
        raise InvalidParam("A webhook secret must be 'whsec_' followed by the base64 of at "
                           "least 16 random bytes. Leave it out and Recall makes one.")
    return secret


def headers(msg_id: str, at: datetime, body: str, secrets: Sequence[str]) -> dict[str, str]:
    """The three Standard Webhooks headers for one attempt (timestamp = `at`)."""
    at = at.astimezone(timezone.utc)
    signature = " ".join(Webhook(s).sign(msg_id, at, body) for s in secrets)
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": signature, "content-type": "application/json"}
