"""`foreground`: the decorator of MemoryService methods a caller waits on."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..errors import RecallError

T = TypeVar("T")


def foreground(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """A caller waits on this method: background work gives way while it runs (activity.py)."""
    @functools.wraps(method)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        with self.activity.call():
            try:
                return await method(self, *args, **kwargs)
            except RecallError:
                raise
            except Exception as exc:
                # A full, read-only or unreachable database gets its own code and message
                # (storage_faults.py); anything else stays what it was.
                fault = self.faults.translate(exc)
                if fault is None:
                    raise
                raise fault from exc
    return wrapper
