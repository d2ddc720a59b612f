"""`StorageContract`: the conformance suite every storage backend subclasses.

    import pytest
    from recall_core.testing import StorageContract

    class TestMyStorage(StorageContract):
        def make_storage(self, location):
            return MyStorage(location)          # not opened yet; the suite calls open()

        @pytest.fixture
        def storage_location(self, tmp_path):   # optional: default is a fresh tmp_path
            ...                                 # e.g. create a fresh database, yield its DSN

Each test gets a freshly opened storage on an empty database (`storage`), and can open more
instances on the same database with `reopen` (persistence, two processes sharing one file or
server). Everything goes through the public `Storage` methods only. Tests for an optional
capability are skipped with a reason when the backend does not declare it in
`storage.capabilities`; a declared one must have its protocol's methods.

The suite pins behaviour core relies on, including what the protocol leaves implicit:
`close()` may be called twice; `iter_memories` is an async generator (`async for m in
storage.iter_memories(ns)`); `fail_job` is ignored for a stale claim, like `complete_job`;
`delete_namespace` counts every memory row it erased (superseded ones too); reusing a memory
id raises; A2A task ids are per namespace.
"""

from .capabilities import CapabilityTests
from .decay import DecayTests
from .faults import FaultTests
from .lifecycle import LifecycleTests
from .memories import MemoryTests
from .partitions import PartitionTests
from .queue import QueueTests
from .records import RecordTests
from .retrieval import RetrievalTests
from .webhooks import WebhookTests
from .writes import WriteTests


class StorageContract(LifecycleTests, QueueTests, MemoryTests, CapabilityTests, WriteTests,
                      DecayTests, RecordTests, RetrievalTests, FaultTests, PartitionTests,
                      WebhookTests):
    """Base class of a backend's conformance tests. Override `make_storage`; optionally the
    `storage_location` fixture and `embedding_dim` (see `base.ContractBase`)."""


__all__ = ["StorageContract"]
