"""The contracts plugins implement, and everything core relies on from them.

- storage: `Storage` (tokens, queue, memories, retrieval, records, lifecycle), the `WriteTx`
  every change of memories goes through, the optional `Capabilities` a backend declares, and
  the row shapes its methods return;
- admin: `AdminStorage`, the capability the admin API and the inspector need;
- oauth: `OAuthStorage`, the capability Recall's own OAuth authorization server needs;
- ranking: `Ranker`, `Embedder` (base classes with declared optional capabilities);
- extraction: `Extractor` (and the `KnownFact`s it may be given as context).

`recall_core.testing` ships the conformance suites (StorageContract, AdminStorageContract,
RankerContract) that check a plugin against these.
"""

from .admin import (TOKEN_ID_LEN, AdminAction, AdminStorage, CallResults, MemoryFilter,
                    MemoryState, RetrievalHit,
                    NamespaceSummary, TokenInfo, token_id)
from .capabilities import (Capabilities, EmbeddingModels, HistoricalReads, MemorySources,
                           NearDuplicateSearch, SessionNeighbours, TimeRanges)
from .oauth import (OAuthCode, OAuthGrant, OAuthStorage, OAuthTokenGrant, OAuthTokenRow,
                    RotateOutcome)
from .events import (BODY_PREFIX_CHARS, DELIVERY_STATUSES, EVENT_TYPES, Delivery, OutboxEvent,
                     Subscription, Webhooks, extraction_failed, new_id)
from .extraction import ExtractionError, Extractor, KnownFact, KnownStatement
from .ranking import (REFERENCE_TOPIC_SCALE, Embedder, NotReady, Ranker, RankerSlot, model_id,
                      on_reference_scale)
from .records import ERASED_TOKEN_NAMESPACE, DecayRow, Erased, TaskKeys, TaskPage, TaskQuery, TaskRow, TokenGrant, VectorToRedo
from .storage import JobQueue, MemoryStore, Records, Retrieval, Storage, TokenStore
from .transaction import WriteTx

__all__ = [
    "TOKEN_ID_LEN", "AdminAction", "AdminStorage", "CallResults", "MemoryFilter", "MemoryState", "RetrievalHit",
    "NamespaceSummary", "TokenInfo", "token_id",
    "Capabilities", "EmbeddingModels", "HistoricalReads", "MemorySources",
    "NearDuplicateSearch", "SessionNeighbours", "TimeRanges",
    "ExtractionError", "Extractor", "KnownFact", "KnownStatement",
    "OAuthCode", "OAuthGrant", "OAuthStorage", "OAuthTokenGrant", "OAuthTokenRow", "RotateOutcome",
    "BODY_PREFIX_CHARS", "DELIVERY_STATUSES", "EVENT_TYPES", "Delivery", "OutboxEvent",
    "Subscription", "Webhooks", "extraction_failed", "new_id",
    "Embedder", "NotReady", "REFERENCE_TOPIC_SCALE", "Ranker", "RankerSlot", "model_id",
    "on_reference_scale",
    "ERASED_TOKEN_NAMESPACE", "DecayRow", "Erased", "TaskKeys", "TaskPage", "TaskQuery", "TaskRow", "TokenGrant", "VectorToRedo",
    "JobQueue", "MemoryStore", "Records", "Retrieval", "Storage", "TokenStore", "WriteTx",
]
