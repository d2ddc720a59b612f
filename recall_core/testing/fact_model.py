"""A model-based test of the fact model, run by every storage backend's contract class.

Hypothesis drives random sequences of: stores (several statements per text, repeats,
contradictions) queued and then processed in any order by the real write path
(`writes.process`), worker crashes (a claim abandoned until its lease expires), forgets
(`forget.forget`), erases, consolidation-style replacement (`writes.replace`), and
export -> import into another namespace (`transfer`). After every step it checks, against a
plain in-memory model:

* at most one current row per (namespace, entity, attribute), and it holds the value the
  model says is current: the latest *said* statement among those committed since the key
  was last forgotten (so two stores racing finish in any order with the later one current);
* every acknowledged store ends done, exactly once (never lost, never doubled), unless its
  namespace was erased;
* a forgotten value appears in no table; namespaces never mix;
* visibilities (`access.partitions`): stores go through an owner's or an agent's credential,
  private or shared; each visibility has its own current value, and every caller sees
  exactly the current values of the partitions the rule gives it (the owner: all of its
  namespace; an agent: the shared ones and its own); an agent's erase removes only its own.

Examples: RECALL_FACT_MODEL_EXAMPLES (default 100 per backend: two hundred in CI).
"""

from __future__ import annotations

import asyncio
import os
import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition,
                                 rule)

from ..access.partitions import partition, write_partition
from ..access.principal import Principal
from ..config import RecallConfig
from ..errors import InvalidParam
from ..memory import views, writes
from ..memory.service import CONFIRM_PHRASE, MemoryService
from ..memory.forget import forget
from ..models import ExtractedMemory, Memory, Operation, utcnow
from ..contracts import Extractor, Storage
from ..memory.transfer import by_space, export_lines, import_verbatim, parse_lines

# Inventory names (recall_core.kit.attributes): a model's alias ("city") is folded into them.
KEYS = ("editor", "location", "drink")
EXAMPLES = int(os.environ.get("RECALL_FACT_MODEL_EXAMPLES", "100"))
T0 = utcnow() - timedelta(days=1)


class ModelExtractor(Extractor):
    """Text "editor=v1;location=v2" -> one (user, key, value) fact per pair, in text order."""

    name = "model"

    async def extract(self, text: str, topic: str = "") -> list[ExtractedMemory]:
        out = []
        for part in text.split(";"):
            key, value = part.split("=")
            out.append(ExtractedMemory(text=f"user {key} is {value}", type="fact",
                                       entity="User", attribute=key.upper(), value=value))
        return out

    async def merge(self, memories: Any, topic: str = "") -> ExtractedMemory:
        raise NotImplementedError


@dataclass
class Said:
    at: int            # logical time the store was made
    order: int         # position in its text
    value: str


@dataclass
class Model:
    #: namespace -> key -> statements committed since the key was last forgotten
    facts: dict[str, dict[str, list[Said]]] = field(default_factory=dict)
    #: values that were forgotten or erased: must appear in no table
    gone: set[str] = field(default_factory=set)
    #: every value stored into a namespace (a value must never show up in another one)
    owner: dict[str, str] = field(default_factory=dict)

    def current(self, ns: str, key: str) -> str | None:
        said = self.facts.get(ns, {}).get(key, [])
        return max(said, key=lambda s: (s.at, s.order)).value if said else None


def run(loop: asyncio.AbstractEventLoop, coro: Awaitable[Any]) -> Any:
    return loop.run_until_complete(coro)


@dataclass(frozen=True)
class Backend:
    """How the machine opens, reads whole and closes a storage of one backend."""

    open_storage: Callable[[], Awaitable[Storage]]
    dump_tables: Callable[[Storage], Awaitable[str]]
    close_storage: Callable[[Storage], Awaitable[None]]


class FactMachine(RuleBasedStateMachine):
    """Random stores (two namespaces, repeated and changed values, several keys per text),
    workers racing and crashing, forget, erase, consolidation's replace and export/import,
    against a model of what must be current. A backend runs it through `fact_machine`."""

    #: The backend under test (set by `fact_machine`).
    backend: Backend

    @initialize()
    def setup(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.storage = run(self.loop, self.backend.open_storage())
        self.run_id = uuid.uuid4().hex[:6]
        a, b = f"fm{self.run_id}a", f"fm{self.run_id}b"
        # The owner of a, its agents planner and writer, the owner of b; and the storage
        # namespaces they write: a, a's two private partitions, b.
        self.callers = [Principal(a), Principal(a, "planner"), Principal(a, "writer"),
                        Principal(b)]
        self.namespaces = [a, partition(a, "planner"), partition(a, "writer"), b]
        self.service = MemoryService(self.storage, RecallConfig())
        self.model = Model()
        self.clock = 0
        self.counter = 0
        self.pending: dict[str, Operation] = {}   # op id -> queued op (by this machine)
        self.acked: dict[str, str] = {}           # op id -> namespace
        self.extractor = ModelExtractor()

    def teardown(self) -> None:
        if hasattr(self, "storage"):
            run(self.loop, self.backend.close_storage(self.storage))
            self.loop.close()

    def value(self) -> str:
        self.counter += 1
        return f"v{self.counter}q{self.run_id}"

    # -- rules --------------------------------------------------------------------------
    @rule(who=st.integers(0, 3),
          visibility=st.sampled_from([None, "private", "shared"]),
          keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=3),
          repeat=st.booleans())
    def store(self, who: int, visibility: str | None, keys: list[str], repeat: bool) -> None:
        try:
            namespace = write_partition(self.callers[who], visibility)
        except InvalidParam:
            assert self.callers[who].is_owner and visibility == "private"
            return
        self.clock += 1
        parts = []
        for key in keys:
            old = self.model.current(namespace, key)
            value = old if repeat and old is not None else self.value()
            self.model.owner.setdefault(value, namespace)
            parts.append(f"{key}={value}")
        op = Operation(namespace=namespace, idempotency_key=uuid.uuid4().hex,
                       payload={"text": ";".join(parts), "topic": "t"},
                       created_at=T0 + timedelta(seconds=self.clock))
        stored, created = run(self.loop, self.storage.enqueue(op))
        assert created
        self.pending[stored.id] = stored
        self.acked[stored.id] = namespace

    @precondition(lambda self: bool(self.pending))
    @rule(seed=st.integers(0, 2 ** 16), crash=st.booleans())
    def work(self, seed: int, crash: bool) -> None:
        """Claim every ready job, then finish them in a random order (two workers racing,
        extraction times differing). With `crash`, the first claim's worker dies: the job
        stays running until the restart (`requeue_running`) queues it again, counted."""
        claimed = []
        while True:
            op = run(self.loop, self.storage.claim_job(60, 10))
            if op is None:
                break
            claimed.append(op)
        died = claimed.pop(0) if crash and claimed else None
        random.Random(seed).shuffle(claimed)
        for op in claimed:
            assert run(self.loop, writes.process(self.storage, self.extractor, None, op,
                                                 utcnow()))
            self.pending.pop(op.id, None)
            for order, part in enumerate(op.payload["text"].split(";")):
                key, value = part.split("=")
                self.model.facts.setdefault(op.namespace, {}).setdefault(key, []).append(
                    Said(int((op.created_at - T0).total_seconds()), order, value))
        if died is not None:
            run(self.loop, self.storage.requeue_running())  # the restart after the crash

    @rule(ns=st.integers(0, 3), key=st.sampled_from(KEYS))
    def forget_key(self, ns: int, key: str) -> None:
        namespace = self.namespaces[ns]
        rows = run(self.loop, self.storage.history(namespace, "user", key))
        current = [m for m in rows if m.valid_until is None]
        if not current:
            return
        run(self.loop, forget(self.storage, namespace, current[0].id))
        for m in rows:
            self.model.gone.add(m.value)
        for said in self.model.facts.get(namespace, {}).pop(key, []):
            self.model.gone.add(said.value)

    @rule(who=st.integers(0, 3))
    def erase(self, who: int) -> None:
        """`delete_namespace_data` by a caller: an owner erases its namespace and its agents'
        partitions, an agent its own partition only."""
        caller = self.callers[who]
        run(self.loop, self.service.delete_namespace(caller, CONFIRM_PHRASE))
        erased = [n for n in self.namespaces if n == partition(caller.namespace, caller.agent)
                  or (caller.is_owner and n.startswith(caller.namespace + "/"))]
        for namespace in erased:
            for said_list in self.model.facts.pop(namespace, {}).values():
                self.model.gone.update(s.value for s in said_list)
            for op_id in [i for i, n in self.acked.items() if n == namespace]:
                self.acked.pop(op_id)
                op = self.pending.pop(op_id, None)
                if op is not None:
                    self.model.gone.update(p.split("=")[1]
                                           for p in op.payload["text"].split(";"))

    @rule(ns=st.integers(0, 3), key=st.sampled_from(KEYS))
    def replace_current(self, ns: int, key: str) -> None:
        """Consolidation's write: the current row replaced by a canonical one (same key,
        new value), said now."""
        namespace = self.namespaces[ns]
        current = [m for m in run(self.loop, self.storage.history(namespace, "user", key))
                   if m.valid_until is None]
        if not current:
            return
        self.clock += 1
        value = self.value()
        self.model.owner[value] = namespace
        new = Memory(namespace=namespace, text=f"user {key} is {value}", entity="user",
                     attribute=key, value=value)
        at = T0 + timedelta(seconds=self.clock)
        assert run(self.loop, writes.replace(self.storage, namespace, current, [new], at))
        self.model.facts.setdefault(namespace, {}).setdefault(key, []).append(
            Said(self.clock, 0, value))

    @precondition(lambda self: not self.pending)
    @rule()
    def copy_a_to_b(self) -> None:
        """export (full, with history) -> import into a fresh namespace: same facts."""
        src = self.namespaces[0]

        async def go() -> str:
            lines = [line async for line in export_lines(self.storage, src)]
            dst = f"fm{self.run_id}c{self.counter}"
            self.counter += 1
            for space, rows in by_space(dst, parse_lines(lines)).items():
                await import_verbatim(self.storage, space, rows)
            return dst

        dst = run(self.loop, go())
        for agent in (None, "planner", "writer"):  # every visibility back in its place
            for key in KEYS:
                rows = run(self.loop, self.storage.history(partition(dst, agent), "user", key))
                current = [m.value for m in rows if m.valid_until is None]
                want = self.model.current(partition(src, agent), key)
                assert current == ([want] if want is not None else []), (agent, key, current)
        run(self.loop, self.service.delete_namespace(dst, CONFIRM_PHRASE))

    # -- invariants ---------------------------------------------------------------------
    @invariant()
    def facts_match_the_model(self) -> None:
        if not hasattr(self, "storage"):
            return
        for namespace in self.namespaces:
            for key in KEYS:
                rows = run(self.loop, self.storage.history(namespace, "user", key))
                current = [m.value for m in rows if m.valid_until is None]
                assert len(current) <= 1, (namespace, key, current)
                want = self.model.current(namespace, key)
                assert current == ([want] if want is not None else []), (
                    namespace, key, current, want)
                for m in rows:  # namespaces never mix
                    assert self.model.owner.get(m.value, namespace) == namespace

    @invariant()
    def each_caller_sees_what_the_rule_gives_it(self) -> None:
        """The current values a caller reads (`views.view_of`: the partitions it sees) are
        those of the partitions the rule gives it, one per visibility that has one."""
        if not hasattr(self, "storage"):
            return
        for caller in self.callers:
            view = run(self.loop, views.view_of(self.storage, caller))
            home = partition(caller.namespace, caller.agent)
            rule = [n for n in self.namespaces if n == caller.namespace or n == home
                    or (caller.is_owner and n.startswith(caller.namespace + "/"))]
            for key in KEYS:
                seen = sorted(m.value for space in view.partitions for m in run(
                    self.loop, self.storage.history(space, "user", key)) if m.valid_until is None)
                want = sorted(v for n in rule if (v := self.model.current(n, key)) is not None)
                assert seen == want, (caller, key, seen, want)

    @invariant()
    def every_acknowledged_store_is_done_once(self) -> None:
        if not hasattr(self, "storage"):
            return
        for op_id, namespace in self.acked.items():
            op = run(self.loop, self.storage.get_operation(namespace, op_id))
            assert op is not None, f"acknowledged store {op_id} was lost"
            if op_id not in self.pending:
                assert op.status == "done", (op.status, op.error)

    @invariant()
    def forgotten_values_are_nowhere(self) -> None:
        if not hasattr(self, "storage") or not self.model.gone:
            return
        dump = run(self.loop, self.backend.dump_tables(self.storage))
        # A value re-stated by a store still queued is legitimately in its payload, and
        # becomes current again when that store is processed.
        queued = {p.split("=")[1] for op in self.pending.values()
                  for p in op.payload["text"].split(";")}
        left = [v for v in self.model.gone if v in dump and v not in queued
                and all(v != self.model.current(ns, k) for ns in self.namespaces
                        for k in KEYS)]
        assert not left, f"forgotten values still stored: {left[:5]}"


def fact_machine(open_storage: Callable[[], Awaitable[Storage]],
                 dump_tables: Callable[[Storage], Awaitable[str]],
                 close_storage: Callable[[Storage], Awaitable[None]]) -> type[FactMachine]:
    """The state machine over the storage `open_storage` returns (its `.TestCase` is the
    pytest test class)."""
    machine = type("FactMachine", (FactMachine,),
                   {"backend": Backend(open_storage, dump_tables, close_storage)})
    machine.TestCase.settings = settings(
        max_examples=EXAMPLES, stateful_step_count=12, deadline=None,
        suppress_health_check=list(HealthCheck))
    return machine
