"""Another agent talking to Recall over A2A: the a2a-sdk client with a bearer token over
real HTTP (`A2A`), and readers of what a task carries."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import get_data_parts, new_data_part
from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest, Message, Role, SendMessageRequest, Task, TaskState

COMPLETED = TaskState.TASK_STATE_COMPLETED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED
REJECTED = TaskState.TASK_STATE_REJECTED
CANCELED = TaskState.TASK_STATE_CANCELED


class A2A:
    """Another agent talking to Recall: the SDK client, a bearer token, real HTTP."""

    def __init__(self, base: str, token: str | None, *, streaming: bool = True,
                 binding: str = "JSONRPC", wire: list[bytes] | None = None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        # `wire` collects every response body as the server wrote it.
        hooks = {"response": [self._record]} if wire is not None else {}
        self.wire = wire
        self.http = httpx.AsyncClient(headers=headers, timeout=30, event_hooks=hooks)
        self.config = ClientConfig(httpx_client=self.http, streaming=streaming,
                                   supported_protocol_bindings=[binding])
        self.base = base

    async def __aenter__(self) -> A2A:
        self.client = await create_client(self.base, self.config)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.close()
        await self.http.aclose()

    async def _record(self, response: httpx.Response) -> None:
        await response.aread()  # the client reads it again from memory (streams too)
        assert self.wire is not None
        self.wire.append(response.content)

    async def send(self, *parts: Any, task: Task | None = None) -> Task:
        """Send one message (a new task, or a reply on `task`); the task as stored after."""
        msg = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=list(parts))
        if task is not None:
            msg.task_id, msg.context_id = task.id, task.context_id
        task_id = msg.task_id
        async for event in self.client.send_message(SendMessageRequest(message=msg)):
            which = event.WhichOneof("payload")
            if which == "task":
                task_id = event.task.id
            elif which in ("status_update", "artifact_update"):
                task_id = getattr(event, which).task_id
        assert task_id, "the agent answered without a task"
        return await self.get(task_id)

    async def get(self, task_id: str) -> Task:
        return await self.client.get_task(GetTaskRequest(id=task_id))

    async def task_ids(self) -> set[str]:
        page = await self.client.list_tasks(ListTasksRequest(page_size=100))
        return {t.id for t in page.tasks}


def data(**fields: Any) -> Any:
    return new_data_part(fields)


def artifact(task: Task, name: str) -> dict[str, Any]:
    (found,) = [a for a in task.artifacts if a.name == name]
    return get_data_parts(found.parts)[0]


def status_data(task: Task) -> dict[str, Any]:
    return get_data_parts(task.status.message.parts)[0]
