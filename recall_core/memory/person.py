"""MemoryService's methods for a person's eyes and hand (the inspector, the admin API):
browse, a memory's story, the retrieval audit, pin and correct, each for the caller's
partitions (`views.py`)."""

from __future__ import annotations

from typing import Any

from ..contracts import Embedder, Extractor, MemoryFilter, Storage
from ..config import RecallConfig
from ..errors import RecallError
from ..models import Memory
from . import validation as v
from . import views
from .corrections import correct_memory
from .foreground import foreground
from .pinning import set_pinned
from .retrieval_audit import call_story, calls_returning
from .story import memory_story
from .views import Caller, view_of


class PersonMethods:
    """Mixed into MemoryService (which sets these attributes)."""

    storage: Storage
    config: RecallConfig
    embedder: Embedder | None
    extractor: Extractor | None

    @foreground
    async def browse(self, who: Caller, where: MemoryFilter, limit: int,
                     offset: int) -> tuple[list[Memory], int]:
        """One page of the memories the caller sees matching `where` (replaced ones too,
        when it asks), and how many match. Needs the storage's admin capability (its query)."""
        self._needs_admin("browsing memories by filter")
        view = await view_of(self.storage, who)
        return await views.query_page(self.storage, view.partitions, where, limit, offset)

    @foreground
    async def story(self, who: Caller, memory_id: str) -> dict[str, Any] | None:
        """A memory, its fact's timeline, its store and that store's other memories
        (story.py); None when the caller sees no such memory."""
        self._needs_admin("a memory's story")
        for space in (await view_of(self.storage, who)).partitions:
            found = await memory_story(self.storage, space, memory_id)
            if found is not None:
                return found
        return None

    async def retrievals(self, who: Caller, memory_id: str) -> list[Any]:
        """The namespace's recent searches that returned the memory (retrieval_audit.py).
        The audit is the owner's: an agent's credential gets none (calls of other agents)."""
        self._needs_admin("the retrieval audit")
        principal = views.principal_of(who)
        if not principal.is_owner:
            return []
        return await calls_returning(self.storage, principal.namespace, memory_id)

    async def call(self, who: Caller, call_id: str) -> dict[str, Any] | None:
        """One audited call and what it returned (retrieval_audit.py); None: no such call,
        or an agent's credential (the audit is the owner's)."""
        self._needs_admin("the retrieval audit")
        view = await view_of(self.storage, who)
        if not view.principal.is_owner:
            return None
        return await call_story(self.storage, view.namespace, call_id, view.partitions)

    def _needs_admin(self, what: str) -> None:
        if not self.storage.capabilities.admin:
            raise RecallError(f"{what} needs a storage with the admin capability; "
                              f"{self.storage.description} has none.")

    @foreground
    async def pin(self, who: Caller, memory_id: Any, pinned: bool) -> Memory:
        """Pin (decay never lowers its importance) or unpin a current memory."""
        space = await self._changeable(who, memory_id, "pin")
        return await set_pinned(self.storage, space, memory_id, pinned)

    async def _changeable(self, who: Caller, memory_id: Any, what: str) -> str:
        view = await view_of(self.storage, who)
        return await views.changeable_home(self.storage, view, v.memory_id(memory_id), what)

    @foreground
    async def correct(self, who: Caller, memory_id: Any, *, text: Any = None,
                      type: Any = None, importance: Any = None, value: Any = None) -> Memory:
        """A correction stored as a new memory that supersedes the old one (corrections.py)."""
        namespace = await self._changeable(who, memory_id, "correct")
        return await correct_memory(self.storage, self.embedder, self.extractor,
                                    self.config.limits.max_text_bytes, namespace, memory_id,
                                    text=text, type=type, importance=importance, value=value)
