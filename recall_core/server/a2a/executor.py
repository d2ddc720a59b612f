"""The A2A AgentExecutor: reads the caller's message, runs a skill, reports through TaskUpdater.

A message picks its skill with a `skill` key (data part, message metadata or request metadata;
default store_memories; consolidate_memories is its old id, kept as an alias); text parts fill `text` (or `query` for search). A task waiting
in input-required keeps what it needs to resume in `task.metadata.recall.pending`, which the
task store persists, so a decision sent after a restart resumes it just the same.

Outcomes: completed with a data artifact; input-required with both versions of each
contradiction; rejected when the input is invalid or the credential lacks the skill's scope
(the same codes and messages as the MCP tools, e.g. INVALID_PARAM, FORBIDDEN); failed when
extraction or storage failed.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from dataclasses import asdict
from typing import Any

from a2a.helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Task, TaskState, TaskStatus
from google.protobuf.json_format import MessageToDict

from ...errors import InvalidParam, NamespaceErased, RecallError, StorageFault
from ..mcp.default_middleware import audit_call, returned_of
from ...models import ExtractedMemory, Returned, utcnow
from ...contracts import ExtractionError
from ...memory.immediate import DECISIONS, StoreInput
from ...access.tool_scopes import A2A_SKILLS, require_scope
from .auth import caller_of, namespace_of
from ...access.partitions import write_partition
from ...access.principal import Principal

log = logging.getLogger("recall.a2a")

SKILL_IDS = ("store_memories", "search_memories")
#: What this task's search returned (filled in `_execute`, read by the audit in `execute`).
_RETURNED: contextvars.ContextVar[list[Returned] | None] = contextvars.ContextVar(
    "recall_a2a_returned", default=None)
#: Old skill ids still accepted: old id -> current id.
SKILL_ALIASES = {"consolidate_memories": "store_memories"}


def message_args(context: RequestContext) -> tuple[dict[str, Any], str]:
    """(arguments, text): request metadata < message metadata < data parts; text parts joined."""
    args: dict[str, Any] = dict(context.metadata)
    message = context.message
    if message is None:
        return args, ""
    args.update(MessageToDict(message.metadata))
    for data in get_data_parts(message.parts):
        if isinstance(data, dict):
            args.update(data)
    return args, "\n".join(t for t in get_text_parts(message.parts) if t.strip())


def skill_of(args: dict[str, Any]) -> str | None:
    """The skill a message asks for (default store_memories; an old id resolved), or None
    when it names none of SKILL_IDS (any JSON value may arrive here: a list, a number)."""
    raw = args.get("skill") or "store_memories"
    if not isinstance(raw, str):
        return None
    skill = SKILL_ALIASES.get(raw, raw)
    return skill if skill in SKILL_IDS else None


def parse_decision(context: RequestContext) -> str | None:
    args, text = message_args(context)
    raw = args.get("decision", text)
    if not isinstance(raw, str):
        return None
    word = raw.strip().strip("'\"`.!").lower().replace("-", "_").replace(" ", "_")
    return word if word in DECISIONS else None


#: search_memories arguments a message may carry (as the MCP tool takes them).
SEARCH_PARAMS = ("limit", "recency_weight", "mmr_lambda", "score_threshold", "max_tokens",
                 "as_of")


def search_args(args: dict[str, Any]) -> dict[str, Any]:
    """The search keyword arguments of a message. JSON numbers in an A2A data part arrive as
    doubles (5 becomes 5.0): whole ones are given back as integers."""
    kwargs = {k: args[k] for k in SEARCH_PARAMS if args.get(k) is not None}
    for k in ("limit", "max_tokens"):
        value = kwargs.get(k)
        if isinstance(value, float) and value.is_integer():
            kwargs[k] = int(value)
    return kwargs


def pending_of(task: Task) -> dict[str, Any] | None:
    recall = MessageToDict(task.metadata).get("recall")
    pending = recall.get("pending") if isinstance(recall, dict) else None
    return pending if isinstance(pending, dict) else None


def _describe(conflicts: list[dict[str, Any]]) -> str:
    lines = []
    for c in conflicts:
        old = " / ".join(repr(m.get("value")) for m in c["existing"])
        new = c["new"].get("value")
        lines.append(f"- {c['entity']}.{c['attribute']}: stored {old}, new {new!r}")
    return "\n".join(lines)


class RecallAgentExecutor(AgentExecutor):
    def __init__(self, runtime: Any):
        self.runtime = runtime

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        caller = caller_of(context.call_context)
        namespace = caller.namespace
        started = time.perf_counter()
        returned: list[Returned] = []
        _RETURNED.set(returned)  # one list: the skill may run in a task of its own (timeout)
        outcome: tuple[str, str | None] = ("error", "INTERNAL")
        try:
            outcome = await self._execute(caller, context, event_queue)
        finally:
            # Audited like an MCP tool call: "a2a:<skill>" (or a2a:resume for a reply).
            try:
                args, _ = message_args(context)
            except Exception:  # noqa: BLE001 - an unreadable message is still audited
                args = {}
            # Only known skill ids name the audit row (and the metrics label): a skill value
            # sent by a client is not trusted to be short, printable or few.
            raw = args.get("skill") or "store_memories"
            known = isinstance(raw, str) and (raw in SKILL_IDS or raw in SKILL_ALIASES)
            skill = "resume" if context.current_task is not None else (
                raw if known else "unknown")
            audit_call(self.runtime, f"a2a:{skill}", namespace, args, *outcome,
                       (time.perf_counter() - started) * 1000, returned=returned)

    async def _execute(self, caller: Principal, context: RequestContext,
                       event_queue: EventQueue) -> tuple[str, str | None]:
        """Runs the task; returns the (status, code) the audit records."""
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        task = context.current_task
        if task is None:
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(Task(
                id=context.task_id, context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED), history=history))
        timeout = self.runtime.config.limits.tool_timeout
        try:
            if task is None:
                await updater.start_work()
                # A skill obeys the same limit as an MCP tool call (limits.tool_timeout).
                await asyncio.wait_for(self._start(caller, context, updater), timeout)
            elif task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED and pending_of(task):
                await asyncio.wait_for(self._resume(caller, context, task, updater), timeout)
            else:
                # Only a task interrupted mid-work (the server stopped while it ran) gets here.
                await updater.failed(self._say(
                    updater, "This task is not waiting for input (the server may have stopped "
                             "while it ran). Send the request again as a new task."))
                return "error", "TASK_NOT_RESUMABLE"
        except TimeoutError:
            log.warning("a2a task %s: skill exceeded limits.tool_timeout (%s s)", context.task_id,
                        timeout)
            await updater.failed(self._error(
                updater, "TOOL_TIMEOUT",
                f"The skill did not finish within {timeout:g} s (limits.tool_timeout) and was "
                f"stopped; a store stopped before its write committed stored nothing (its write "
                f"is one transaction). Retry, or store long texts with the MCP store_memory "
                f"tool, which queues them."))
            return "error", "TOOL_TIMEOUT"
        except (NamespaceErased, StorageFault) as exc:  # not the request's fault: failed
            await updater.failed(self._error(updater, exc.code, exc.message))
            return "error", exc.code
        except RecallError as exc:
            await updater.reject(self._error(updater, exc.code, exc.message))
            return "error", exc.code
        except ExtractionError as exc:
            log.warning("a2a task %s: extraction failed: %s", context.task_id, exc)
            await updater.failed(self._error(
                updater, "EXTRACTION_FAILED", f"Extraction failed: {exc}. Nothing was stored; "
                                              f"retry as a new task."))
            return "error", "EXTRACTION_FAILED"
        except Exception as exc:  # noqa: BLE001 - reported as failed, with the log line to look at
            fault = self.runtime.service.faults.translate(exc)
            if fault is not None:  # the database is full, read-only or down: named
                await updater.failed(self._error(updater, fault.code, fault.message))
                return "error", fault.code
            log.exception("a2a task %s failed", context.task_id)
            await updater.failed(self._error(
                updater, "INTERNAL", f"Internal error ({type(exc).__name__}). Nothing was reported "
                                     f"as done; retry, and if it persists check the server log."))
            return "error", "INTERNAL"
        return "ok", None

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel(self._say(updater, "Cancelled. A task that was waiting for a "
                                                "decision stored nothing."))

    # -- skills ---------------------------------------------------------------------------
    async def _start(self, caller: Principal, context: RequestContext,
                     updater: TaskUpdater) -> None:
        args, text = message_args(context)
        skill = skill_of(args)
        if skill is not None:  # the same scope as the MCP tool it mirrors; FORBIDDEN else
            require_scope(caller_of(context.call_context), A2A_SKILLS[skill], f"the {skill} skill")
        if skill == "search_memories":
            args.setdefault("query", text)
            result = await self.runtime.service.search(caller, args.get("query"),
                                                       **search_args(args))
            if (box := _RETURNED.get()) is not None:  # the retrieval audit (audit_call)
                box.extend(returned_of(result))
            await updater.add_artifact([new_data_part(result)], name="search_results")
            await updater.complete(self._say(updater, f"{result['total']} result(s)."))
            return
        if skill != "store_memories":
            raise InvalidParam(f"Unknown skill {repr(args.get('skill'))[:80]}. Expected one of "
                               f"{', '.join(SKILL_IDS)} (see the agent card at "
                               f"/.well-known/agent-card.json).")
        args.setdefault("text", text)
        # The partition the store goes to (an agent's private one unless it asks for
        # "visibility": "shared"); conflicts are looked for there: each visibility has its
        # own current values.
        namespace = write_partition(caller, args.pop("visibility", None))
        now = utcnow()
        service = self.runtime.service
        inp, op = await service.record_store(namespace, context.task_id, args, now)
        extracted, conflicts = await service.review_store(namespace, inp, op, now)
        if conflicts:
            pending = {"skill": skill, "input": asdict(inp), "visibility":
                       "shared" if namespace == caller.namespace else "private",
                       "extracted": [em.model_dump() for em in extracted],
                       "conflicts": [c.public() for c in conflicts], "asked_at": now.isoformat()}
            await self._ask(updater, pending, note="")
            return
        await self._finish(updater, await service.write_store(op, extracted, now))

    async def _resume(self, caller: Principal, context: RequestContext, task: Task,
                      updater: TaskUpdater) -> None:
        pending = pending_of(task)
        assert pending is not None
        # A reply settles a store, so it needs what the store needed, whoever started it.
        skill = pending.get("skill") or "store_memories"
        require_scope(caller_of(context.call_context), A2A_SKILLS.get(skill, "store_memory"),
                      f"a reply to a {skill} task")
        decision = parse_decision(context)
        if decision is None:
            await self._ask(updater, pending, note="That reply is not a decision. ")
            return
        inp = StoreInput(**pending["input"])
        extracted = [ExtractedMemory.model_validate(d) for d in pending["extracted"]]
        keys = {(c["entity"], c["attribute"]) for c in pending["conflicts"]}
        now = utcnow()
        service = self.runtime.service
        namespace = write_partition(caller, pending.get("visibility"))
        op = await service.rerecord_store(namespace, task.id, inp, now)
        result = await service.write_store(op, extracted, now, decision=decision,
                                           conflict_keys=keys)
        await self._finish(updater, result, decision)

    # -- replies --------------------------------------------------------------------------
    async def _ask(self, updater: TaskUpdater, pending: dict[str, Any], note: str) -> None:
        conflicts = pending["conflicts"]
        text = (f"{note}The new text contradicts stored facts that are recent and about as "
                f"important, so Recall cannot decide which is true:\n{_describe(conflicts)}\n"
                f"Reply on this task with one of: {', '.join(DECISIONS)} (as text, or a "
                f"data part {{\"decision\": ...}}). Nothing is stored until then.")
        message = updater.new_agent_message([
            new_text_part(text),
            new_data_part({"conflicts": conflicts, "options": list(DECISIONS)})])
        await updater.update_status(TaskState.TASK_STATE_INPUT_REQUIRED, message=message,
                                    metadata={"recall": {"pending": pending}})

    async def _finish(self, updater: TaskUpdater, result: dict[str, Any],
                      decision: str | None = None) -> None:
        await updater.add_artifact([new_data_part(result)], name="memories")
        summary = (f"Stored {len(result['stored'])} memory(ies), superseded "
                   f"{len(result['superseded_ids'])}, refreshed {len(result['refreshed_ids'])}.")
        metadata = {"recall": {"pending": None, "decision": decision}} if decision else None
        await updater.update_status(TaskState.TASK_STATE_COMPLETED,
                                    message=self._say(updater, summary), metadata=metadata)

    @staticmethod
    def _say(updater: TaskUpdater, text: str) -> Message:
        return updater.new_agent_message([new_text_part(text)])

    @staticmethod
    def _error(updater: TaskUpdater, code: str, message: str) -> Message:
        return updater.new_agent_message([
            new_text_part(f"{code}: {message}"),
            new_data_part({"status": "error", "data": None, "error": message, "code": code})])
