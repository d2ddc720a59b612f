"""An a2a-sdk `TaskStore` on top of our Storage protocol (table `a2a_tasks`).

Every method is scoped by the caller's own space (`task_space(context)`: the namespace for
its owner, its private partition for an agent), which storage puts in its primary key: a
task id of another namespace or agent is simply not found, for get, resume,
cancel, subscribe and list alike, because the SDK's request handler reads through this store
before it touches a task. Tasks are kept as the protobuf's JSON form, so SQLite and Postgres
(and any third-party backend that passes the StorageContract) hold them the same way, and they
survive a restart. Beside it storage keeps the few fields ListTasks filters and orders by
(`TaskKeys`), so a page is read in the database, not by parsing every task of a namespace.
"""

from __future__ import annotations

import logging
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import ListTasksCursor, decode_list_tasks_cursor, encode_list_tasks_cursor
from google.protobuf.json_format import MessageToDict, ParseDict

from ...contracts import Storage, TaskKeys, TaskQuery
from .auth import still_valid, task_space

log = logging.getLogger("recall.a2a")

# The stored document: {"format": FORMAT, "task": <Task as protobuf JSON>}.
FORMAT = "a2a-task/1"


def task_to_data(task: Task) -> dict[str, Any]:
    return {"format": FORMAT, "task": MessageToDict(task)}


def task_from_data(data: dict[str, Any]) -> Task:
    return ParseDict(data.get("task", {}), Task(), ignore_unknown_fields=True)


# Status times are kept as int64 nanoseconds (both backends' BIGINT): years 1678..2262.
_NS_MIN, _NS_MAX = -(2**63), 2**63 - 1


def _clamp(ns: int) -> int:
    return min(max(ns, _NS_MIN), _NS_MAX)


def task_keys(task: Task) -> TaskKeys:
    """What storage indexes of a task: the fields ListTasks filters and orders by."""
    stamped = task.HasField("status") and task.status.HasField("timestamp")
    return TaskKeys(context_id=task.context_id, state=TaskState.Name(task.status.state),
                    status_ns=_clamp(task.status.timestamp.ToNanoseconds()) if stamped else None)


def list_query(params: ListTasksRequest) -> TaskQuery:
    """The SDK's ListTasks semantics (a2a-sdk's InMemoryTaskStore: newest status first, then
    id, both descending; the page token is the position of the last task returned) as a
    storage query, so the database filters and pages."""
    after = None
    if params.page_token:
        cursor = decode_list_tasks_cursor(params.page_token)
        # A forged position the database cannot hold (an int64 overflow, an id with a lone
        # surrogate or a NUL) is as invalid as a token that does not decode.
        if (cursor is None or (cursor.timestamp_ns is not None
                               and not _NS_MIN <= cursor.timestamp_ns <= _NS_MAX)
                or "\x00" in cursor.task_id or not _encodable(cursor.task_id)):
            raise InvalidParamsError(f"Invalid page token: {params.page_token[:80]}. Pass the "
                                     f"next_page_token of the previous ListTasks answer, or "
                                     f"none for the first page.")
        after = (cursor.timestamp_ns, cursor.task_id)
    return TaskQuery(
        context_id=params.context_id or None,
        state=TaskState.Name(params.status) if params.status else None,
        status_ns_from=(_clamp(params.status_timestamp_after.ToNanoseconds())
                        if params.HasField("status_timestamp_after") else None),
        after=after, limit=params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
        await self.storage.save_task(task_space(context), task.id, task_to_data(task),
                                     task_keys(task))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        data = await self.storage.get_task(task_space(context), task_id)
        return task_from_data(data) if data is not None else None

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        await self.storage.delete_task(task_space(context), task_id)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        query = list_query(params)
        # One row more than the page: whether a next page exists, without counting again.
        page = await self.storage.list_tasks(task_space(context),
                                             query._replace(limit=query.limit + 1))
        rows = page.rows[:query.limit]
        next_token = None
        if len(page.rows) > query.limit:
            last = rows[-1]
            next_token = encode_list_tasks_cursor(
                ListTasksCursor(timestamp_ns=last.status_ns, task_id=last.task_id))
        return ListTasksResponse(tasks=[task_from_data(r.data) for r in rows],
                                 next_page_token=next_token, total_size=page.total,
                                 page_size=query.limit)
