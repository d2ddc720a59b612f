"""An a2a-sdk `TaskStore` on top of our Storage protocol (table `a2a_tasks`).

Every method is scoped by the caller's namespace (`namespace_of(context)`), which storage
puts in its primary key: a task id of another namespace is simply not found, for get, resume,
cancel, subscribe and list alike, because the SDK's request handler reads through this store
before it touches a task. Tasks are kept as the protobuf's JSON form, so SQLite and Postgres
(and any third-party backend that passes the StorageContract) hold them the same way, and they
survive a restart.
"""

from __future__ import annotations

import logging
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor
from google.protobuf.json_format import MessageToDict, ParseDict

from ..protocols import Storage
from .auth import namespace_of, still_valid

log = logging.getLogger("recall.a2a")

# The stored document: {"format": FORMAT, "task": <Task as protobuf JSON>}.
FORMAT = "a2a-task/1"


def task_to_data(task: Task) -> dict[str, Any]:
    return {"format": FORMAT, "task": MessageToDict(task)}


def task_from_data(data: dict[str, Any]) -> Task:
    return ParseDict(data.get("task", {}), Task(), ignore_unknown_fields=True)


def _sort_key(task: Task) -> tuple[bool, int, str]:
    """The SDK's ListTasks order (newest status first, then id), descending."""
    stamped = task.HasField("status") and task.status.HasField("timestamp")
    return (stamped, task.status.timestamp.ToNanoseconds() if stamped else 0, task.id)


class StorageTaskStore(TaskStore):
    def __init__(self, storage: Storage):
        self.storage = storage

    async def save(self, task: Task, context: ServerCallContext) -> None:
        # A task that finishes after its namespace was erased (or its token revoked) must
        # not write a row of that namespace again; nobody can read it any more anyway.
        if not await still_valid(self.storage, context):
            log.info("a2a task %s not saved: its token was revoked or its namespace erased",
                     task.id)
            return
        await self.storage.save_task(namespace_of(context), task.id, task_to_data(task))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        data = await self.storage.get_task(namespace_of(context), task_id)
        return task_from_data(data) if data is not None else None

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self.storage.delete_task(namespace_of(context), task_id)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        tasks = [task_from_data(d) for d in await self.storage.list_tasks(namespace_of(context))]
        if params.context_id:
            tasks = [t for t in tasks if t.context_id == params.context_id]
        if params.status:
            tasks = [t for t in tasks if t.status.state == params.status]
        if params.HasField("status_timestamp_after"):
            after = params.status_timestamp_after.ToNanoseconds()
            tasks = [t for t in tasks if t.status.HasField("timestamp")
                     and t.status.timestamp.ToNanoseconds() >= after]
        tasks.sort(key=_sort_key, reverse=True)
        start = 0
        if params.page_token:
            cursor = decode_list_tasks_cursor(params.page_token)
            if cursor is None:
                raise InvalidParamsError(f"Invalid page token: {params.page_token}")
            start = next((i for i, t in enumerate(tasks) if _sort_key(t) < cursor.sort_key()),
                         len(tasks))
        size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        page = tasks[start:start + size]
        next_token = None
        if start + size < len(tasks):
            stamped, ns, task_id = _sort_key(page[-1])
            next_token = encode_list_tasks_cursor(
                ListTasksCursor(timestamp_ns=ns if stamped else None, task_id=task_id))
        return ListTasksResponse(tasks=page, next_page_token=next_token, total_size=len(tasks),
                                 page_size=size)
